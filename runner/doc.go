// Package runner is the LLM runner. Every request it sends is built by one
// function, Build, from the stored history through redact.History for the
// target model, so what the TUI and `scrim redact` show is exactly what goes
// over the wire. Send records model switches, calls the provider, runs the
// tools the model asks for under the new model's tier and stores the results.
//
// Providers come from providers.toml, from catwalk's embedded catalogue of
// known providers, or are the built-in demo: a loopback chat-completions
// server that reports what it received, so demos use the real client path.
// All of them are called through fantasy's OpenAI-compatible client behind a
// guard that sends only the credentials configured for that provider.
package runner
