// Package gemini imports Gemini CLI sessions
// (~/.gemini/tmp/<project hash>/chats/) into scrim sessions.
//
// Gemini CLI has written three containers: one JSON document
// {sessionId, projectHash, messages: [...]}, rewritten on every turn;
// JSON lines (a header, then message records, "$set" patches of the header
// and "$rewindTo" records that drop a message and all after it, the same
// message ID written again when its tool calls complete: the last copy
// wins, in the first one's place); and the "/chat save" checkpoint, a bare
// array of API turns {role, parts} whose function calls carry no ID. Each
// is read whole (a rewind rewrites history) and imported through
// importers.ImportSource, so a session that only grew gets only its new
// messages.
//
// A "gemini" record's toolCalls hold each call with its result (the
// function response parts the model was sent). Results are attributed by
// tool: read_file to its file, read_many_files per file part, grep per
// "File:" block, run_shell_command through shellread; relative paths are
// taken against the workspace the injected session context names.
package gemini
