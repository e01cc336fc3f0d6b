//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// agentFixture writes one agent's session, in one of its formats, that
// reads denied files through the agent's own read tool and through its
// shell, and allowed ones beside them. It returns the path to import.
type agentFixture struct {
	name, agent string
	write       func(t *testing.T, f *shellTree) string // the file or folder to import
	visible     []string                                // allowed lines that must still be sent to limited
	gone        []string                                // text that must not be imported at all (rewound away)
}

// geminiCall is a Gemini CLI tool call record with its result.
func geminiCall(id, name string, args map[string]any, output string, more ...string) map[string]any {
	result := []any{map[string]any{"functionResponse": map[string]any{"id": id, "name": name, "response": map[string]any{"output": output}}}}
	for _, m := range more {
		result = append(result, map[string]any{"text": m})
	}
	return map[string]any{"id": id, "name": name, "args": args, "result": result, "status": "success", "timestamp": "2025-10-01T10:00:05Z"}
}

// geminiMessages is a session that reads .env with read_file, secrets/ with
// the shell, and both beside allowed files with grep and read_many_files.
func geminiMessages(t *testing.T, f *shellTree) []map[string]any {
	ctx := "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nMy operating system is: linux\nI'm currently working in the directory: " + f.ws + "\n</session_context>"
	grep := "Found 3 matches for pattern \"TOKEN\" in the workspace directory:\n---\nFile: README.md\nL1: allowed-readme-1 TOKEN is set in .env\n---\nFile: .env\nL1: TOKEN=denied-env-1\n---\nFile: src/app.go\nL2: // allowed-app-2 reads TOKEN\n---"
	return []map[string]any{
		{"id": "m0", "timestamp": "2025-10-01T10:00:00Z", "type": "user", "content": []any{map[string]any{"text": ctx}}},
		{"id": "m1", "timestamp": "2025-10-01T10:00:01Z", "type": "user", "content": "Where is TOKEN set?"},
		{"id": "m2", "timestamp": "2025-10-01T10:00:02Z", "type": "gemini", "model": "gemini-2.5-pro", "content": "Reading.",
			"toolCalls": []any{
				geminiCall("read_file-1", "read_file", map[string]any{"absolute_path": f.ws + "/.env"}, "TOKEN=denied-env-1\nDB=denied-env-2\n"),
				geminiCall("read_file-2", "read_file", map[string]any{"file_path": "README.md", "start_line": 1, "end_line": 1},
					"\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-1 of 3 total lines.\nAction: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: 2.\n\n--- FILE CONTENT (truncated) ---\nallowed-readme-1 TOKEN is set in .env"),
				geminiCall("run_shell_command-3", "run_shell_command", map[string]any{"command": "cat secrets/api.key", "description": "show it"}, "Output: "+f.sh(t, "cat secrets/api.key")+"Process Group PGID: 4242"),
				geminiCall("grep_search-4", "grep_search", map[string]any{"pattern": "TOKEN"}, grep),
				geminiCall("read_many_files-5", "read_many_files", map[string]any{"include": []any{"docs/notes.md", ".env.devnet.local"}}, "Tool execution succeeded.",
					"--- "+f.ws+"/docs/notes.md ---\n\nallowed-notes-1 TOKEN rotation\n\n",
					"--- "+f.ws+"/.env.devnet.local ---\n\nRPC_URL=https://rpc.example/denied-rpc-1\nRPC_KEY=denied-rpc-2\nOTHER=denied-rpc-3\n\n",
					"\n--- End of content ---"),
			}},
		{"id": "m3", "timestamp": "2025-10-01T10:00:09Z", "type": "gemini", "model": "gemini-2.5-pro", "content": "TOKEN is set in .env."},
	}
}

func geminiFixtures() []agentFixture {
	visible := []string{"allowed-readme-1", "allowed-app-2", "allowed-notes-1"}
	return []agentFixture{
		{name: "JSON document", agent: "gemini", visible: visible, write: func(t *testing.T, f *shellTree) string {
			doc := map[string]any{"sessionId": "g1", "projectHash": "abc", "startTime": "2025-10-01T10:00:00Z", "lastUpdated": "2025-10-01T10:00:09Z", "messages": geminiMessages(t, f)}
			return writeJSON(t, filepath.Join(f.root, "chats", "session-2025-10-01T10-00-g1.json"), doc)
		}},
		{name: "JSON lines with a rewind", agent: "gemini", visible: visible, gone: []string{"rewound-away"}, write: func(t *testing.T, f *shellTree) string {
			msgs := geminiMessages(t, f)
			tr := &transcript{}
			tr.add(map[string]any{"sessionId": "g2", "projectHash": "abc", "startTime": "2025-10-01T10:00:00Z"})
			tr.add(msgs[0])
			tr.add(msgs[1])
			// A turn the user rewound: it is not imported.
			tr.add(map[string]any{"id": "r1", "timestamp": "2025-10-01T10:00:01Z", "type": "user", "content": "rewound-away question"})
			tr.add(map[string]any{"id": "r2", "timestamp": "2025-10-01T10:00:01Z", "type": "gemini", "content": "rewound-away answer"})
			tr.add(map[string]any{"$rewindTo": "r1"})
			// The same message twice: first without its calls, then with them.
			first := map[string]any{}
			for k, v := range msgs[2] {
				if k != "toolCalls" {
					first[k] = v
				}
			}
			tr.add(first)
			tr.add(msgs[2])
			tr.add(map[string]any{"$set": map[string]any{"lastUpdated": "2025-10-01T10:00:09Z"}})
			tr.add(msgs[3])
			must(t, os.MkdirAll(filepath.Join(f.root, "chats"), 0o755))
			return tr.write(t, filepath.Join(f.root, "chats", "session-2025-10-01T10-00-g2.jsonl"))
		}},
		{name: "/chat save checkpoint", agent: "gemini", visible: []string{"allowed-readme-1"}, write: func(t *testing.T, f *shellTree) string {
			resp := func(id, name, out string) map[string]any {
				return map[string]any{"functionResponse": map[string]any{"id": id, "name": name, "response": map[string]any{"output": out}}}
			}
			turns := []any{
				map[string]any{"role": "user", "parts": []any{map[string]any{"text": "<session_context>\nI'm currently working in the directory: " + f.ws + "\n</session_context>"}}},
				map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Where is TOKEN set?"}}},
				map[string]any{"role": "model", "parts": []any{
					map[string]any{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{"file_path": ".env"}}},
					map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]any{"command": "head -n 2 secrets/api.key README.md"}}},
					map[string]any{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{"file_path": "README.md"}}},
				}},
				map[string]any{"role": "user", "parts": []any{
					resp("read_file-1", "read_file", "TOKEN=denied-env-1\nDB=denied-env-2\n"),
					resp("run_shell_command-2", "run_shell_command", "Output: "+f.sh(t, "head -n 2 secrets/api.key README.md")+"Process Group PGID: 7"),
					resp("read_file-3", "read_file", "allowed-readme-1 TOKEN is set in .env\nallowed-readme-2\nallowed-readme-3\n"),
				}},
				map[string]any{"role": "model", "parts": []any{map[string]any{"text": "TOKEN is set in .env."}}},
			}
			return writeJSON(t, filepath.Join(f.root, "checkpoint-token.json"), turns)
		}},
	}
}

// crushParts encodes a Crush message's parts: [{type, data}].
func crushParts(ps ...map[string]any) []byte {
	b, _ := json.Marshal(ps)
	return b
}

func crushCall(id, name string, input map[string]any) map[string]any {
	in, _ := json.Marshal(input)
	return map[string]any{"type": "tool_call", "data": map[string]any{"id": id, "name": name, "input": string(in), "finished": true}}
}

func crushResult(id, content string) map[string]any {
	return map[string]any{"type": "tool_result", "data": map[string]any{"tool_call_id": id, "name": "", "content": content}}
}

const crushSchema = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts BLOB NOT NULL default '[]',
  model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT);`

func crushFixtures() []agentFixture {
	return []agentFixture{{name: "database (rows in the WAL)", agent: "crush", visible: []string{"allowed-readme-1", "allowed-app-2"}, write: func(t *testing.T, f *shellTree) string {
		db := filepath.Join(f.ws, ".crush", "crush.db")
		msg := func(id, role string, at int64, parts []byte) importtest.Stmt {
			return importtest.Stmt{SQL: "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at) VALUES (?, 's1', ?, ?, 'gpt-4.1', 'openai', ?, ?)", Args: []any{id, role, parts, at, at}}
		}
		grep := "Found 3 matches\n" + f.ws + "/README.md:\n  Line 1, Char 18: allowed-readme-1 TOKEN is set in .env\n\n" + f.ws + "/.env:\n  Line 1, Char 1: TOKEN=denied-env-1\n\n" + f.ws + "/src/app.go:\n  Line 2, Char 20: // allowed-app-2 reads TOKEN\n"
		attach := map[string]any{"type": "binary", "data": map[string]any{"Path": f.ws + "/.env.devnet.local", "MIMEType": "text/plain", "Data": []byte(f.sh(t, "cat .env.devnet.local"))}}
		importtest.SQLite(t, db,
			importtest.Stmt{SQL: crushSchema},
			importtest.Stmt{SQL: "INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 'Where is TOKEN set?', 1751366400, 1751366400)"},
			msg("m1", "user", 1751366400, crushParts(map[string]any{"type": "text", "data": map[string]any{"text": "Where is TOKEN set? See the attached file."}}, attach)),
			msg("m2", "assistant", 1751366401, crushParts(crushCall("c1", "view", map[string]any{"file_path": f.ws + "/.env"}),
				crushCall("c2", "bash", map[string]any{"command": "cat secrets/api.key"}), crushCall("c3", "grep", map[string]any{"pattern": "TOKEN"}))),
			msg("m3", "tool", 1751366402, crushParts(crushResult("c1", "<file>\n     1|TOKEN=denied-env-1\n     2|DB=denied-env-2\n</file>\n"),
				crushResult("c2", f.sh(t, "cat secrets/api.key")), crushResult("c3", grep))),
			msg("m4", "assistant", 1751366403, crushParts(map[string]any{"type": "text", "data": map[string]any{"text": "TOKEN is set in .env."}})),
		)
		return f.ws // the project: its .crush/crush.db is found
	}}}
}

const opencodeSchema = `
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL,
  title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);`

// opencodeSession is a session that reads .env with read, secrets/ with
// bash, and grep's matches in .env beside allowed files: its messages,
// each with its parts.
func opencodeSession(t *testing.T, f *shellTree) (info map[string]any, msgs []map[string]any, parts [][]map[string]any) {
	tool := func(id, name string, input map[string]any, output string) map[string]any {
		return map[string]any{"id": "prt_x" + id, "type": "tool", "tool": name, "callID": id,
			"state": map[string]any{"status": "completed", "input": input, "output": output, "metadata": map[string]any{"exit": 0}}}
	}
	read := "<path>" + f.ws + "/.env</path>\n<type>file</type>\n<content>\n1: TOKEN=denied-env-1\n2: DB=denied-env-2\n\n(End of file - total 2 lines)\n</content>"
	grep := "Found 3 matches\n" + f.ws + "/README.md:\n  Line 1: allowed-readme-1 TOKEN is set in .env\n\n" + f.ws + "/.env:\n  Line 1: TOKEN=denied-env-1\n\n" + f.ws + "/src/app.go:\n  Line 2: // allowed-app-2 reads TOKEN"
	info = map[string]any{"id": "ses_1", "projectID": "p1", "directory": f.ws, "title": "Where is TOKEN set?", "version": "1.2.0", "time": map[string]any{"created": 1751366400000}}
	msgs = []map[string]any{
		{"id": "msg_1", "sessionID": "ses_1", "role": "user", "time": map[string]any{"created": 1751366400000}},
		{"id": "msg_2", "sessionID": "ses_1", "role": "assistant", "modelID": "gpt-5", "providerID": "openai", "path": map[string]any{"cwd": f.ws, "root": f.ws}, "time": map[string]any{"created": 1751366401000}},
	}
	parts = [][]map[string]any{
		{{"id": "prt_a", "type": "text", "text": "Where is TOKEN set?"}},
		{tool("call_1", "read", map[string]any{"filePath": f.ws + "/.env"}, read),
			tool("call_2", "bash", map[string]any{"command": "cat secrets/api.key", "description": "show"}, f.sh(t, "cat secrets/api.key")),
			tool("call_3", "grep", map[string]any{"pattern": "TOKEN"}, grep)},
	}
	return info, msgs, parts
}

func opencodeFixtures() []agentFixture {
	visible := []string{"allowed-readme-1", "allowed-app-2"}
	return []agentFixture{
		{name: "1.2 database", agent: "opencode", visible: visible, write: func(t *testing.T, f *shellTree) string {
			info, msgs, parts := opencodeSession(t, f)
			stmts := []importtest.Stmt{{SQL: opencodeSchema}, {SQL: "INSERT INTO session VALUES ('ses_1', 'p1', NULL, 's', ?, ?, 'v1.2.0', 1751366400000, 1751366400000)", Args: []any{f.ws, info["title"]}}}
			for i, m := range msgs {
				b, _ := json.Marshal(m)
				stmts = append(stmts, importtest.Stmt{SQL: "INSERT INTO message VALUES (?, 'ses_1', ?, ?, ?)", Args: []any{m["id"], i, i, string(b)}})
				for _, p := range parts[i] {
					b, _ := json.Marshal(p)
					stmts = append(stmts, importtest.Stmt{SQL: "INSERT INTO part VALUES (?, ?, 'ses_1', 0, 0, ?)", Args: []any{p["id"], m["id"], string(b)}})
				}
			}
			data := filepath.Join(f.root, "share", "opencode")
			importtest.SQLite(t, filepath.Join(data, "opencode.db"), stmts...)
			return data
		}},
		{name: "JSON storage", agent: "opencode", visible: visible, write: func(t *testing.T, f *shellTree) string {
			info, msgs, parts := opencodeSession(t, f)
			root := filepath.Join(f.root, "share", "opencode", "storage")
			writeJSON(t, filepath.Join(root, "session", "p1", "ses_1.json"), info)
			for i, m := range msgs {
				writeJSON(t, filepath.Join(root, "message", "ses_1", m["id"].(string)+".json"), m)
				for _, p := range parts[i] {
					p["messageID"] = m["id"]
					writeJSON(t, filepath.Join(root, "part", m["id"].(string), p["id"].(string)+".json"), p)
				}
			}
			return filepath.Dir(root)
		}},
	}
}

func writeJSON(t *testing.T, path string, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, b, 0o644))
	return path
}

// importedSessions are the IDs of every session imported from file.
func importedSessions(t *testing.T, store, file string) []string {
	t.Helper()
	st, err := session.Open(store)
	must(t, err)
	defer st.Close()
	hs, _, err := st.List()
	must(t, err)
	var ids []string
	for _, h := range hs {
		if strings.Contains(h.Origin, file) {
			ids = append(ids, h.ID)
		}
	}
	if ids == nil {
		t.Fatalf("no session imported from %s in %+v", file, hs)
	}
	return ids
}

// TestAgentReadsImportRedacted: for each new agent and format, a denied
// file read through the agent's own read tool and through its shell is
// sent to the limited model as no byte of it, and the trusted one all of
// it, while the allowed reads beside it stay whole.
func TestAgentReadsImportRedacted(t *testing.T) {
	t.Parallel()
	fixtures := append(append(geminiFixtures(), crushFixtures()...), opencodeFixtures()...)
	for _, fx := range fixtures {
		t.Run(fx.agent+" "+fx.name, func(t *testing.T) {
			isolate(t)
			f := newShellTree(t)
			file := fx.write(t, f)
			out, stderr, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "import", fx.agent, file)
			if code != exitOK {
				t.Fatalf("import: exit %d: %s %s", code, out, stderr)
			}
			if strings.Contains(out, " 0 messages") || !strings.Contains(out, " 0 skipped") {
				t.Fatalf("import: %s", out)
			}
			var limited, trusted string
			for _, id := range importedSessions(t, f.store, file) {
				l, stderr, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", id, "--model", "openai/limited")
				if code != exitOK {
					t.Fatalf("redact: exit %d: %s", code, stderr)
				}
				tr, _, _ := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", id, "--model", "demo/trusted")
				limited, trusted = limited+l, trusted+tr
			}
			if strings.Contains(limited, "denied-") {
				t.Fatalf("BYPASS: the limited model is sent denied content:\n%s", limited)
			}
			for _, want := range fx.visible {
				if !strings.Contains(limited, want) {
					t.Fatalf("allowed line %q is not sent to the limited model:\n%s", want, limited)
				}
			}
			for _, gone := range fx.gone {
				if strings.Contains(trusted, gone) {
					t.Fatalf("%q was rewound away but is imported:\n%s", gone, trusted)
				}
			}
			for _, secret := range []string{"denied-env-1", "denied-key-1"} {
				if !strings.Contains(trusted, secret) {
					t.Fatalf("the trusted model is not sent %s, so the test proves nothing:\n%s", secret, trusted)
				}
			}
			again, _, _ := scrim(t, "", "--store", f.store, "--policy", f.policy, "import", fx.agent, file)
			if !strings.Contains(again, "unchanged since the last import") {
				t.Fatalf("second import is not a no-op: %s", again)
			}
		})
	}
}
