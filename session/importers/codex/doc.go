// Package codex imports OpenAI Codex CLI rollouts
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl) into scrim sessions.
//
// Lines are {timestamp, type, payload}: session_meta (working folder,
// provider), turn_context (model), response_item (message, function_call,
// function_call_output, custom and local shell calls) and event_msg. Visible
// text appears twice, as a response_item and as an event_msg; only the
// response_item is imported. A command's exec_command_begin/end event
// carries parsed_cmd, Codex's own reading of the command: a command that is a
// single read of a file has its output attributed to that file (relative to
// the command's working folder); every other command's output stays of
// unknown source. Rollouts of older versions, whose lines are bare items
// after a first meta line, are read too.
package codex
