// Package crush imports the sessions of Crush (and of the Go opencode it
// grew from, which kept the same layout): each project's
// .crush/crush.db, an SQLite database of sessions and messages.
//
// The database is read from a copy (package sqlitecopy), WAL included. A
// message's parts column is a JSON array of {type, data}: text, reasoning,
// tool_call (whose input is JSON text inside the JSON), tool_result,
// binary (attachments), finish. Results are in separate "tool" messages,
// linked to their call by ID (their name is empty in the 2025 schema).
// Times are Unix seconds. No app version is stored: the columns present
// are read as they are. A sub-agent's session has the parent's agent
// call's ID as its own and is imported as a session of its own.
package crush
