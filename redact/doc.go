// Package redact produces what a model may be sent: a copy of a session's
// history in which every part from a path the model's tier may not read is
// replaced by a placeholder naming the tier. It never writes to its input, so
// the stored history stays whole and switching back to a trusted model shows
// everything again.
package redact
