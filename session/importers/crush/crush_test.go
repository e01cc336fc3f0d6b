package crush

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// schema is Crush's first migration, with the provider column a later one
// added.
const schema = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts BLOB NOT NULL default '[]',
  model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT);
CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')));
INSERT INTO goose_db_version (version_id, is_applied) VALUES (20250424200609, 1), (20250515105448, 1);`

// parts encodes a message's parts as Crush does: [{type, data}].
func parts(ps ...any) []byte {
	b, _ := json.Marshal(ps)
	return b
}

func text(s string) map[string]any {
	return map[string]any{"type": "text", "data": map[string]any{"text": s}}
}

func toolCall(id, name string, input map[string]any) map[string]any {
	in, _ := json.Marshal(input)
	return map[string]any{"type": "tool_call", "data": map[string]any{"id": id, "name": name, "input": string(in), "finished": true}}
}

func toolResult(id, content, metadata string) map[string]any {
	return map[string]any{"type": "tool_result", "data": map[string]any{"tool_call_id": id, "name": "", "content": content, "metadata": metadata}}
}

func message(id, sess, role string, at int64, p []byte) importtest.Stmt {
	return importtest.Stmt{SQL: "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		Args: []any{id, sess, role, p, "claude-sonnet-4", "anthropic", at, at}}
}

// project is a Crush project folder with a database whose messages are
// still in its WAL.
func project(t *testing.T) (dir, db string) {
	dir = t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	db = filepath.Join(dir, ".crush", "crush.db")
	view := "<file>\n     1|KEY=1\n</file>\n"
	grep := "Found 2 matches\n" + dir + "/main.go:\n  Line 3, Char 9: key := os.Getenv(\"KEY\")\n\n" + dir + "/.env:\n  Line 1, Char 1: KEY=1\n"
	importtest.SQLite(t, db,
		importtest.Stmt{SQL: schema},
		importtest.Stmt{SQL: "INSERT INTO sessions (id, parent_session_id, title, updated_at, created_at) VALUES ('s1', NULL, 'Where is KEY read?', 1751366400, 1751366400), ('call_4', 's1', 'find users of KEY', 1751366410, 1751366410)"},
		message("m1", "s1", "user", 1751366400, parts(text("Where is KEY read?"))),
		message("m2", "s1", "assistant", 1751366401, parts(text("Looking."), toolCall("call_1", "view", map[string]any{"file_path": dir + "/.env"}),
			toolCall("call_2", "bash", map[string]any{"command": "cd sub && cat ../.env"}), toolCall("call_3", "grep", map[string]any{"pattern": "KEY"}),
			toolCall("call_4", "agent", map[string]any{"prompt": "find users of KEY"}), toolCall("call_5", "fetch", map[string]any{"url": "https://example.com"}),
			toolCall("call_6", "bash", map[string]any{"command": "cat .env"}), map[string]any{"type": "finish", "data": map[string]any{"reason": "tool_use", "time": 1751366402}})),
		message("m3", "s1", "tool", 1751366403, parts(toolResult("call_1", view, ""),
			toolResult("call_2", "KEY=1\n", `{"working_directory":"`+dir+`/sub"}`), toolResult("call_3", grep, ""),
			toolResult("call_4", "main.go reads it", ""), toolResult("call_5", "<html>", ""), toolResult("call_6", "KEY=1\n", ""))),
		message("m4", "s1", "assistant", 1751366404, parts(text("main.go reads KEY from .env."), toolCall("call_7", "glob", map[string]any{"pattern": "*"}))),
		message("m5", "call_4", "user", 1751366410, parts(text("find users of KEY"))),
		message("m6", "call_4", "assistant", 1751366411, parts(text("main.go"))),
	)
	return dir, db
}

// TestDatabase: messages only in the WAL are imported, each session of
// the database is one of scrim's, results are paired with their calls by
// ID, and the agent's files are left exactly as they were.
func TestDatabase(t *testing.T) {
	dir, db := project(t)
	before := map[string][]byte{}
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	st := importtest.Store(t)
	res, err := importers.ImportSource(st, Source, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := db + ": 11 messages, 3 tool results tagged, 3 unknown-source results, 0 skipped lines, 1 subagent session → 2 sessions"
	if res.String() != want {
		t.Errorf("summary\n got  %s\n want %s", res, want)
	}
	for f, b := range before {
		if now, _ := os.ReadFile(f); !bytes.Equal(now, b) {
			t.Errorf("%s changed", f)
		}
	}
	h, msgs := importtest.Session(t, st, "Where is KEY read?")
	if h.WorkDir != dir || h.LastModel != "anthropic/claude-sonnet-4" {
		t.Errorf("header %+v", h)
	}
	m := " model=anthropic/claude-sonnet-4"
	env := dir + "/.env"
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"assistant" + m + " parts=[text call:call_1:view call:call_2:bash call:call_3:grep call:call_4:agent call:call_5:fetch call:call_6:bash] paths=nil",
		"tool read" + m + " parts=[from:" + env + "] paths=[" + env + "]",
		"tool bash" + m + " parts=[from:" + env + "] paths=[" + env + "]",
		"tool grep" + m + " parts=[tool_result from:" + dir + "/main.go from:" + env + "] paths=[" + dir + "/main.go " + env + "]",
		"tool agent" + m + " parts=[tool_result] paths=nil unknown=a sub-agent's answer (its session is imported on its own)",
		"tool webfetch" + m + " parts=[tool_result] paths=nil unknown=content from the network (fetch), not of a file",
		// After a cd, the shell may be in sub/ (Crush versions whose shell
		// persisted) or in the project (the others): not guessed.
		"tool bash" + m + " parts=[tool_result] paths=nil unknown=the command's working folder was not recorded, so .env cannot be resolved",
		"assistant" + m + " parts=[text call:call_7:glob] paths=nil note=no result recorded for tool call call_7 (glob)",
	})
	_, sub := importtest.Session(t, st, "subagent: find users of KEY")
	if len(sub) != 2 {
		t.Errorf("sub-agent session has %d messages", len(sub))
	}
	importtest.Linked(t, st, "Where is KEY read?", "subagent: find users of KEY")
	again, err := importers.ImportSource(st, Source, db, nil)
	if err != nil || !again.Unchanged {
		t.Errorf("second import %v %v", again, err)
	}
}

// TestGrows: a session that gained messages gets only them, and the call
// whose result came loses its note.
func TestGrows(t *testing.T) {
	_, db := project(t)
	st := importtest.Store(t)
	first, err := importers.ImportSource(st, Source, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := importtest.SQLite(t, db)
	for _, s := range []importtest.Stmt{
		message("m7", "s1", "tool", 1751366420, parts(toolResult("call_7", "main.go\n.env", ""))),
		message("m8", "s1", "assistant", 1751366421, parts(text("Done."))),
	} {
		if _, err := w.Exec(s.SQL, s.Args...); err != nil {
			t.Fatal(err)
		}
	}
	grown, err := importers.ImportSource(st, Source, db, nil)
	if err != nil || !grown.Resumed || grown.Messages != 2 {
		t.Fatalf("grown import %v %v (first %v)", grown, err, first)
	}
	_, msgs := importtest.Session(t, st, "Where is KEY read?")
	if len(msgs) != 11 || msgs[8].Meta.Note != "" || msgs[9].Meta.NoFiles != true {
		t.Errorf("after growing: %d messages, note %q", len(msgs), msgs[8].Meta.Note)
	}
}

// TestNotADatabase: a file that is not a Crush database says so.
func TestNotADatabase(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	importtest.SQLite(t, other, importtest.Stmt{SQL: "CREATE TABLE notes (id TEXT)"})
	text := filepath.Join(dir, "crush.db")
	if err := os.WriteFile(text, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{other, text} {
		if _, err := importers.ImportSource(importtest.Store(t), Source, f, nil); err == nil || !bytes.Contains([]byte(err.Error()), []byte("not a Crush database")) {
			t.Errorf("import of %s: %v", f, err)
		}
	}
}

func TestMatch(t *testing.T) {
	for path, want := range map[string]bool{
		"/p/.crush/crush.db":                      true,
		"/p/.crush/crush.db-wal":                  false,
		"/p/.opencode/opencode.db":                true, // the Go opencode's, the same layout
		"/p/crush.db":                             false,
		"/p/.crush/logs/crush.log":                false,
		"/home/.local/share/opencode/opencode.db": false, // the TypeScript opencode's
	} {
		if Match(path) != want {
			t.Errorf("Match(%s) = %v", path, !want)
		}
	}
}

// TestWritesMarkTheirFile: a call that writes a file (edit, write) is
// marked with it, since its input holds that file's content; a view is not.
func TestWritesMarkTheirFile(t *testing.T) {
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	db := filepath.Join(dir, ".crush", "crush.db")
	env := dir + "/.env"
	importtest.SQLite(t, db,
		importtest.Stmt{SQL: schema},
		importtest.Stmt{SQL: "INSERT INTO sessions (id, parent_session_id, title, updated_at, created_at) VALUES ('s1', NULL, 'Rotate KEY', 1751366400, 1751366400)"},
		message("m1", "s1", "user", 1751366400, parts(text("Rotate KEY"))),
		message("m2", "s1", "assistant", 1751366401, parts(toolCall("call_1", "edit", map[string]any{"file_path": env, "old_string": "KEY=1", "new_string": "KEY=2"}),
			toolCall("call_2", "write", map[string]any{"file_path": dir + "/new.env", "content": "KEY=3"}), toolCall("call_3", "view", map[string]any{"file_path": env}),
			toolCall("call_4", "bash", map[string]any{"command": "echo KEY=4 >> .env"}), toolCall("call_5", "bash", map[string]any{"command": "cd sub"}),
			toolCall("call_6", "bash", map[string]any{"command": "echo KEY=5 > .env"}),
			toolCall("call_7", "patch", map[string]any{"patch_text": "*** Begin Patch\n*** Update File: " + env + "\n@@\n-KEY=2\n+KEY=3\n*** End Patch"}),
			toolCall("call_8", "bash", map[string]any{"command": "cp .env backup.txt", "working_dir": dir}), toolCall("call_9", "view", map[string]any{"file_path": dir + "/backup.txt"}))),
		message("m3", "s1", "tool", 1751366402, parts(toolResult("call_1", "<result>\nContent replaced in file: "+env+"\n</result>", ""),
			toolResult("call_2", "<result>\nFile successfully written: "+dir+"/new.env\n</result>", ""), toolResult("call_3", "<file>\n     1|KEY=2\n</file>\n", ""),
			toolResult("call_4", "no output", ""), toolResult("call_5", "no output", ""), toolResult("call_6", "no output", ""), toolResult("call_7", "Patch applied", ""),
			toolResult("call_8", "no output", ""), toolResult("call_9", "<file>\n     1|KEY=3\n</file>\n", ""))),
	)
	st := importtest.Store(t)
	if _, err := importers.ImportSource(st, Source, db, nil); err != nil {
		t.Fatal(err)
	}
	_, msgs := importtest.Session(t, st, "Rotate KEY")
	m := " model=anthropic/claude-sonnet-4"
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		// After a cd in the same message, where the shell is cannot be told.
		"assistant" + m + " parts=[call:call_1:edit:writes:" + env + " call:call_2:write:writes:" + dir + "/new.env call:call_3:view call:call_4:bash:writes:" + env + " call:call_5:bash call:call_6:bash call:call_7:patch:writes:" + env + " call:call_8:bash call:call_9:view] paths=[" + env + " " + dir + "/new.env]",
		"tool edit" + m + " parts=[tool_result] paths=[" + env + "]",
		"tool write" + m + " parts=[tool_result] paths=[" + dir + "/new.env]",
		"tool read" + m + " parts=[from:" + env + "] paths=[" + env + "]",
		"tool bash" + m + " parts=[tool_result] paths=nil nofiles",
		"tool bash" + m + " parts=[tool_result] paths=nil nofiles",
		"tool bash" + m + " parts=[tool_result] paths=nil nofiles",
		"tool patch" + m + " parts=[tool_result] paths=[" + env + "]",
		"tool bash" + m + " parts=[tool_result] paths=nil nofiles",
		// A copy of .env, made by the command before: read as .env too.
		"tool read" + m + " parts=[tool_result] paths=[" + dir + "/backup.txt " + env + "]",
	})
}
