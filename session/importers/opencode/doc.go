// Package opencode imports the sessions of opencode (the TypeScript
// agent): the SQLite database of 1.2 and later
// (~/.local/share/opencode/opencode.db: session, message and part
// tables), the JSON storage before it (storage/session/<project>/<id>.json
// with storage/message/<session>/ and storage/part/<message>/), and the
// files `opencode export` writes ({info, messages: [{info, parts}]}).
//
// All three hold the same objects: a message's info (role, model, the
// working folder) and its parts; a tool part
// {type: "tool", tool, callID, state: {status, input, output, metadata}}
// holds both the call and its result. Its output is attributed by tool:
// read to its file, grep per file, bash through shellread.
package opencode
