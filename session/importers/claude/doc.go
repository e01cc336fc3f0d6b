// Package claude imports Claude Code transcripts
// (~/.claude/projects/<encoded-cwd>/<session>.jsonl) into scrim sessions,
// recovering for each tool result the files its content came from.
//
// One line is one JSON object; user and assistant lines carry
// message{role, content}, where content is a string or an array of text,
// thinking, tool_use and tool_result blocks. An assistant turn written as
// several lines sharing message.id becomes one message. Tool results are
// paired with their calls by tool_use_id and attributed by the call's tool:
// Read (and the file-editing tools, whose results quote the file) to the file
// it names; Grep in content mode per file, each file's lines a part of their
// own; Grep listing files or counts to the set of files as a whole; Glob, Bash,
// WebFetch, Task and anything unknown stay of unknown source. Files Claude
// Code adds to a request itself (an @-mention, a file changed outside it:
// attachment lines) become user messages attributed to the file.
//
// Subagents become sessions of their own: an agent-*.jsonl file (beside the
// session or in <session>/subagents/) is imported like any transcript, and
// sidechain lines inline in a session file (isSidechain, Claude Code 1.x) go
// to one session per sidechain, not into the main conversation, whose model
// never saw them.
package claude
