package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// dbSchema is the part of opencode 1.2's schema the importer reads.
const dbSchema = `
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL,
  title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);`

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func toolPart(id, tool string, input map[string]any, status, output string, metadata map[string]any) map[string]any {
	st := map[string]any{"status": status, "input": input}
	if status == "completed" {
		st["output"], st["metadata"], st["title"] = output, metadata, tool
	}
	return map[string]any{"id": "prt_x" + id, "type": "tool", "tool": tool, "callID": id, "state": st}
}

// sessionFixture is a session in dir: a read of .env, bash reading it too,
// grep naming it beside main.go, a call still running, and a @-mention
// whose content opencode replays into the user message.
func sessionFixture(dir string) (info map[string]any, msgs []map[string]any, parts [][]map[string]any) {
	info = map[string]any{"id": "ses_1", "projectID": "p1", "directory": dir, "title": "Where is KEY read?", "version": "1.2.3",
		"time": map[string]any{"created": 1751366400000, "updated": 1751366409000}}
	read := "<path>" + dir + "/.env</path>\n<type>file</type>\n<content>\n1: KEY=1\n\n(End of file - total 1 lines)\n</content>"
	grep := "Found 2 matches\n" + dir + "/main.go:\n  Line 8: key := os.Getenv(\"KEY\")\n\n" + dir + "/.env:\n  Line 1: KEY=1"
	msgs = []map[string]any{
		{"id": "msg_1", "sessionID": "ses_1", "role": "user", "time": map[string]any{"created": 1751366400000}, "model": map[string]any{"providerID": "anthropic", "modelID": "claude-sonnet-4"}},
		{"id": "msg_2", "sessionID": "ses_1", "role": "assistant", "modelID": "claude-sonnet-4", "providerID": "anthropic", "path": map[string]any{"cwd": dir, "root": dir}, "time": map[string]any{"created": 1751366401000}},
	}
	parts = [][]map[string]any{
		{{"id": "prt_a", "type": "text", "text": "Where is KEY read? @notes.md"},
			{"id": "prt_b", "type": "text", "synthetic": true, "text": readReplay + `{"filePath":"` + dir + `/notes.md"}`},
			{"id": "prt_c", "type": "text", "synthetic": true, "text": "<path>" + dir + "/notes.md</path>\n<type>file</type>\n<content>\n1: KEY rotates\n</content>"},
			{"id": "prt_d", "type": "file", "mime": "text/plain", "filename": "notes.md", "url": "file://" + dir + "/notes.md"}},
		{{"id": "prt_e", "type": "step-start"},
			{"id": "prt_f", "type": "text", "text": "Looking."},
			toolPart("call_1", "read", map[string]any{"filePath": dir + "/.env"}, "completed", read, map[string]any{"preview": "KEY=1"}),
			toolPart("call_2", "bash", map[string]any{"command": "cat .env", "description": "show"}, "completed", "KEY=1\n", map[string]any{"exit": 0, "output": "KEY=1\n"}),
			toolPart("call_3", "grep", map[string]any{"pattern": "KEY"}, "completed", grep, map[string]any{"matches": 2}),
			toolPart("call_4", "webfetch", map[string]any{"url": "https://example.com"}, "completed", "<html>", nil),
			toolPart("call_5", "bash", map[string]any{"command": "go test ./..."}, "running", "", nil)},
	}
	return info, msgs, parts
}

func want(dir string) []string {
	m := " model=anthropic/claude-sonnet-4"
	env := dir + "/.env"
	return []string{
		"user parts=[text text from:" + dir + "/notes.md text] paths=[" + dir + "/notes.md]",
		"assistant" + m + " parts=[text call:call_1:read call:call_2:bash call:call_3:grep call:call_4:webfetch call:call_5:bash] paths=nil note=no result recorded for tool call call_5 (bash)",
		"tool read" + m + " parts=[from:" + env + "] paths=[" + env + "]",
		"tool bash" + m + " parts=[from:" + env + "] paths=[" + env + "]",
		"tool grep" + m + " parts=[tool_result from:" + dir + "/main.go from:" + env + "] paths=[" + dir + "/main.go " + env + "]",
		"tool webfetch" + m + " parts=[tool_result] paths=nil unknown=content from the network (webfetch), not of a file",
	}
}

func project(t *testing.T) string {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDatabase: opencode 1.2's database, read from a copy while opencode
// has it open (its rows still in the WAL).
func TestDatabase(t *testing.T) {
	dir := project(t)
	info, msgs, parts := sessionFixture(dir)
	stmts := []importtest.Stmt{{SQL: dbSchema},
		{SQL: "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_1', 'p1', 's', ?, ?, 'v1.2.3', 1751366400000, 1751366409000)", Args: []any{dir, info["title"]}}}
	for i, m := range msgs {
		id := m["id"].(string)
		data := map[string]any{}
		for k, v := range m {
			if k != "id" && k != "sessionID" {
				data[k] = v
			}
		}
		stmts = append(stmts, importtest.Stmt{SQL: "INSERT INTO message VALUES (?, 'ses_1', ?, ?, ?)", Args: []any{id, 1751366400000 + i, 1751366400000 + i, js(data)}})
		for _, p := range parts[i] {
			pid := p["id"].(string)
			delete(p, "id")
			stmts = append(stmts, importtest.Stmt{SQL: "INSERT INTO part VALUES (?, ?, 'ses_1', 0, 0, ?)", Args: []any{pid, id, js(p)}})
		}
	}
	db := filepath.Join(dir, "data", "opencode.db")
	importtest.SQLite(t, db, stmts...)
	st := importtest.Store(t)
	res, err := importers.ImportSource(st, Source, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 6 || res.Tagged != 3 || res.Skipped != 0 {
		t.Errorf("summary %s", res)
	}
	h, got := importtest.Session(t, st, "Where is KEY read?")
	if h.WorkDir != dir || h.LastModel != "anthropic/claude-sonnet-4" {
		t.Errorf("header %+v", h)
	}
	importtest.Compare(t, got, want(dir))
	if again, err := importers.ImportSource(st, Source, db, nil); err != nil || !again.Unchanged {
		t.Errorf("second import %v %v", again, err)
	}
}

// TestStorage: the JSON storage before 1.2, and an export of the same
// session, import alike.
func TestStorage(t *testing.T) {
	dir := project(t)
	info, msgs, parts := sessionFixture(dir)
	root := filepath.Join(dir, "data", "storage")
	write := func(path string, v any) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(js(v)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(root, "session", "p1", "ses_1.json")
	write(file, info)
	var exported []any
	for i, m := range msgs {
		write(filepath.Join(root, "message", "ses_1", m["id"].(string)+".json"), m)
		for _, p := range parts[i] {
			p["messageID"] = m["id"]
			write(filepath.Join(root, "part", m["id"].(string), p["id"].(string)+".json"), p)
		}
		exported = append(exported, map[string]any{"info": m, "parts": parts[i]})
	}
	export := filepath.Join(dir, "export.json")
	write(export, map[string]any{"info": info, "messages": exported})
	if !Match(file) || Match(filepath.Join(root, "message", "ses_1", "msg_1.json")) {
		t.Error("Match does not tell stored sessions from the rest of the storage")
	}
	// Once 1.2 has migrated the storage into its database, the storage
	// beside it is not imported again.
	migrated := filepath.Join(dir, "data", "opencode.db")
	if err := os.WriteFile(migrated, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if Match(file) || !Match(migrated) {
		t.Error("a folder with both: the storage is matched, or the database is not")
	}
	os.Remove(migrated)
	for _, f := range []string{file, export} {
		st := importtest.Store(t)
		if _, err := importers.ImportSource(st, Source, f, nil); err != nil {
			t.Fatal(err)
		}
		_, got := importtest.Session(t, st, "Where is KEY read?")
		importtest.Compare(t, got, want(dir))
	}
}

// TestWindowsExport: a Windows session's paths are recorded as drive
// paths, its CRLF output kept, and a redacted input is of unknown source.
func TestWindowsExport(t *testing.T) {
	dir := t.TempDir()
	cwd := `C:\Users\me\proj`
	doc := map[string]any{
		"info": map[string]any{"id": "ses_w", "directory": cwd, "title": "windows", "time": map[string]any{"created": 1}},
		"messages": []any{map[string]any{
			"info": map[string]any{"id": "msg_1", "role": "assistant", "modelID": "gpt-5", "providerID": "openai", "path": map[string]any{"cwd": cwd}},
			"parts": []any{
				toolPart("c1", "read", map[string]any{"filePath": cwd + `\.env`}, "completed", "<path>C:\\Users\\me\\proj\\.env</path>\r\n<content>\r\n1: KEY=1\r\n</content>", nil),
				toolPart("c2", "read", map[string]any{"redacted": true}, "completed", "1: secret", nil),
				toolPart("c3", "grep", map[string]any{"pattern": "KEY"}, "completed", "Found 1 matches\r\nC:\\Users\\me\\proj\\.env:\r\n  Line 1: KEY=1\r\n", nil),
			}}},
	}
	file := filepath.Join(dir, "session.json")
	if err := os.WriteFile(file, []byte(js(doc)), 0o644); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	if _, err := importers.ImportSource(st, Source, file, nil); err != nil {
		t.Fatal(err)
	}
	_, got := importtest.Session(t, st, "windows")
	m := " model=openai/gpt-5"
	importtest.Compare(t, got, []string{
		"assistant" + m + " parts=[call:c1:read call:c2:read call:c3:grep] paths=nil",
		"tool read" + m + " parts=[from:C:/Users/me/proj/.env] paths=[C:/Users/me/proj/.env]",
		"tool read" + m + " parts=[tool_result] paths=nil unknown=the call's input was redacted in the export",
		"tool grep" + m + " parts=[tool_result from:C:/Users/me/proj/.env] paths=[C:/Users/me/proj/.env]",
	})
	if !strings.Contains(got[1].Text(), "\r\n") {
		t.Errorf("CRLF output changed: %q", got[1].Text())
	}
}

func TestNotOpencode(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"a.json": `{"theme": "dark"}`, "b.db": "hello"} {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := importers.ImportSource(importtest.Store(t), Source, f, nil); err == nil || !strings.Contains(err.Error(), "not an opencode") {
			t.Errorf("import of %s: %v", name, err)
		}
	}
}

// A tool other than read that opencode replays into a prompt (an MCP
// resource, say) leaves the prompt of unknown source; a folder's listing
// does not.
func TestReplayedTools(t *testing.T) {
	doc := map[string]any{
		"info": map[string]any{"id": "ses_r", "directory": "/w", "title": "replays"},
		"messages": []any{
			map[string]any{"info": map[string]any{"id": "m1", "role": "user"}, "parts": []any{
				map[string]any{"type": "text", "text": "see @src/"},
				map[string]any{"type": "text", "synthetic": true, "text": listReplay + `{"path":"/w/src"}`},
				map[string]any{"type": "text", "synthetic": true, "text": "/w/src/\n  a.go\n"}}},
			map[string]any{"info": map[string]any{"id": "m2", "role": "user"}, "parts": []any{
				map[string]any{"type": "text", "text": "and the docs"},
				map[string]any{"type": "text", "synthetic": true, "text": `Called the docs_fetch tool with the following input: {"id":"x"}`},
				map[string]any{"type": "text", "synthetic": true, "text": "KEY=1"}}},
		},
	}
	file := filepath.Join(t.TempDir(), "export.json")
	if err := os.WriteFile(file, []byte(js(doc)), 0o644); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	if _, err := importers.ImportSource(st, Source, file, nil); err != nil {
		t.Fatal(err)
	}
	_, got := importtest.Session(t, st, "replays")
	importtest.Compare(t, got, []string{
		"user parts=[text text text] paths=nil",
		"user parts=[text text text] paths=nil unknown=the output of the docs_fetch tool, which opencode replayed into the prompt",
	})
}

// The Go opencode's database (.opencode/opencode.db, Crush's layout) is
// not this importer's: it says which one reads it.
func TestGoOpencodeDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), ".opencode", "opencode.db")
	importtest.SQLite(t, db, importtest.Stmt{SQL: "CREATE TABLE sessions (id TEXT PRIMARY KEY); CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, parts TEXT)"})
	_, err := importers.ImportSource(importtest.Store(t), Source, db, nil)
	if err == nil || !strings.Contains(err.Error(), "scrim import crush "+db) {
		t.Fatalf("import: %v", err)
	}
}

// TestWritesMarkTheirFile: a call that writes a file (edit, write) is
// marked with it, since its input holds that file's content; a read is
// not. An export names its tools' files as opencode records them.
func TestWritesMarkTheirFile(t *testing.T) {
	dir := project(t)
	env := dir + "/.env"
	doc := map[string]any{
		"info": map[string]any{"id": "ses_w", "directory": dir, "title": "rotate"},
		"messages": []any{
			map[string]any{"info": map[string]any{"id": "m1", "role": "user"}, "parts": []any{map[string]any{"type": "text", "text": "rotate KEY"}}},
			map[string]any{"info": map[string]any{"id": "m2", "role": "assistant", "modelID": "claude-sonnet-4", "providerID": "anthropic", "path": map[string]any{"cwd": dir, "root": dir}},
				"parts": []any{
					toolPart("call_1", "edit", map[string]any{"filePath": env, "oldString": "KEY=1", "newString": "KEY=2"}, "completed", "Edit applied successfully.", nil),
					toolPart("call_2", "write", map[string]any{"filePath": "new.env", "content": "KEY=3"}, "completed", "Wrote file successfully.", nil),
					toolPart("call_3", "read", map[string]any{"filePath": env}, "completed", "<path>"+env+"</path>\n<type>file</type>\n<content>\n1: KEY=2\n</content>", nil),
					toolPart("call_4", "bash", map[string]any{"command": "tee -a ../.env", "workdir": dir + "/sub"}, "completed", "", nil),
					toolPart("call_5", "patch", map[string]any{"patchText": "*** Begin Patch\n*** Update File: .env\n@@\n-KEY=2\n+KEY=3\n*** End Patch"}, "completed", "Patch applied successfully.", nil)}},
		},
	}
	file := filepath.Join(t.TempDir(), "export.json")
	if err := os.WriteFile(file, []byte(js(doc)), 0o644); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	if _, err := importers.ImportSource(st, Source, file, nil); err != nil {
		t.Fatal(err)
	}
	_, got := importtest.Session(t, st, "rotate")
	m := " model=anthropic/claude-sonnet-4"
	importtest.Compare(t, got, []string{
		"user parts=[text] paths=nil",
		"assistant" + m + " parts=[call:call_1:edit:writes:" + env + " call:call_2:write:writes:" + dir + "/new.env call:call_3:read call:call_4:bash:writes:" + env + " call:call_5:patch:writes:" + env + "] paths=[" + env + " " + dir + "/new.env]",
		"tool edit" + m + " parts=[tool_result] paths=[" + env + "]",
		"tool write" + m + " parts=[tool_result] paths=[" + dir + "/new.env]",
		"tool read" + m + " parts=[from:" + env + "] paths=[" + env + "]",
		"tool bash" + m + " parts=[tool_result] paths=nil nofiles",
		"tool patch" + m + " parts=[tool_result] paths=[" + env + "]",
	})
}
