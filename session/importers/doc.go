// Package importers holds what the agent importers (claude, codex, gemini,
// crush, opencode) share: a
// line reader that takes lines of any length, the import driver that makes
// each transcript file one atomic, idempotent Bulk (resuming a grown file
// where the last import stopped), the Sink parsers emit messages to, path
// canonicalisation against a line's working folder, model ID mapping and the
// per-file summary.
//
// A parser sees one line at a time and holds only what pairing needs (the
// assistant turn being assembled, open tool calls); tool results go to the
// store as soon as they are parsed, so a transcript is never held whole.
//
// A Source (ImportSource) is history that is not an append-only log: a
// JSON document rewritten on every turn, a database. It is read whole, and
// the import is incremental per conversation: one whose imported messages
// are still its first gets only the new ones.
package importers
