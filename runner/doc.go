// Package runner is the LLM runner. Every request it sends is built by one
// function, Build, from the stored history through redact.History for the
// target model, so what the TUI and `scrim redact` show is exactly what goes
// over the wire. Send records model switches, calls the provider, runs the
// tools the model asks for under the new model's tier and stores the results.
package runner
