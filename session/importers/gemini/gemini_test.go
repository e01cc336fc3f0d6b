package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

const rewind = "testdata/session-2025-10-01T10-00-rewind.jsonl"

// TestJSONLinesFixture: a rewind drops the message it names and all after
// it, the second copy
// of a message (with its tool calls) wins in the first one's place, and
// each tool's result is attributed as its tool reads.
func TestJSONLinesFixture(t *testing.T) {
	st := importtest.Store(t)
	res, err := importers.ImportSource(st, Source, rewind, nil)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(rewind)
	want := abs + ": 10 messages, 2 tool results tagged, 1 unknown-source result, 1 skipped line → session " + res.SessionID
	if res.String() != want {
		t.Errorf("summary\n got  %s\n want %s", res, want)
	}
	h, msgs := importtest.Session(t, st, "Checkout failure")
	if h.WorkDir != "/home/dev/shop" || h.LastModel != "google/gemini-2.5-pro" || h.Origin != "imported from gemini: "+abs {
		t.Errorf("header %+v", h)
	}
	m := " model=google/gemini-2.5-pro"
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"user parts=[text] paths=nil",
		"assistant" + m + " parts=[call:read_file-1:read_file call:run_shell_command-2:run_shell_command call:web_fetch-3:web_fetch call:glob-4:glob call:read_file-5:read_file call:run_shell_command-6:run_shell_command] paths=nil note=no result recorded for tool call run_shell_command-6 (run_shell_command)",
		"tool read" + m + " parts=[from:/home/dev/shop/src/checkout.py] paths=[/home/dev/shop/src/checkout.py]",
		"tool bash" + m + " parts=[tool_result from:/home/dev/shop/.env tool_result] paths=[/home/dev/shop/.env]",
		"tool webfetch" + m + " parts=[tool_result] paths=nil unknown=the content of a web page (web_fetch), not of a file",
		"tool glob" + m + " parts=[tool_result] paths=nil nofiles",
		"tool read error" + m + " parts=[tool_result] paths=nil nofiles",
		"assistant" + m + " parts=[text] paths=nil",
		"event parts=[text] paths=nil note=gemini info",
	})
	if got := msgs[4].Text(); got != "Output: \nPAY_KEY=sk_live_1\nProcess Group PGID: 991" {
		t.Errorf("shell result %q", got)
	}
	for _, msg := range msgs {
		if strings.Contains(msg.Text(), "Rewound-away") {
			t.Errorf("a rewound-away message is imported: %q", msg.Text())
		}
	}
}

// TestGrowsAndRewinds: a session that only gained messages gets just
// them; a rewind that drops imported ones is imported afresh, replacing
// the old session.
func TestGrowsAndRewinds(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "session-x.jsonl")
	head := `{"sessionId":"s","projectHash":"p"}` + "\n" +
		`{"id":"u1","timestamp":"2025-10-01T10:00:01Z","type":"user","content":"first"}` + "\n" +
		`{"id":"g1","timestamp":"2025-10-01T10:00:02Z","type":"gemini","content":"one"}` + "\n"
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(head)
	first, err := importers.ImportSource(st, Source, file, nil)
	if err != nil || first.Messages != 2 {
		t.Fatalf("first import %v %v", first, err)
	}
	if again, _ := importers.ImportSource(st, Source, file, nil); !again.Unchanged {
		t.Fatalf("unchanged file imported again: %v", again)
	}
	write(head + `{"id":"g2","timestamp":"2025-10-01T10:00:03Z","type":"gemini","content":"two"}` + "\n")
	grown, err := importers.ImportSource(st, Source, file, nil)
	if err != nil || !grown.Resumed || grown.Messages != 1 || grown.SessionID != first.SessionID {
		t.Fatalf("grown import %v %v", grown, err)
	}
	write(head + `{"id":"g2","timestamp":"2025-10-01T10:00:03Z","type":"gemini","content":"two"}` + "\n" + `{"$rewindTo":"g1"}` + "\n" +
		`{"id":"g3","timestamp":"2025-10-01T10:00:04Z","type":"gemini","content":"other"}` + "\n")
	rewound, err := importers.ImportSource(st, Source, file, nil)
	if err != nil || !rewound.Replaced || rewound.Messages != 2 || rewound.SessionID == first.SessionID {
		t.Fatalf("rewound import %v %v", rewound, err)
	}
	if _, err := st.Get(first.SessionID); err == nil {
		t.Errorf("the rewritten session %s is still there", first.SessionID)
	}
	_, msgs := importtest.Session(t, st, "first")
	if len(msgs) != 2 || msgs[1].Text() != "other" {
		t.Errorf("after the rewind: %d messages, last %q", len(msgs), msgs[len(msgs)-1].Text())
	}
}

// TestNotASession: files named like sessions that are something else are
// refused with what they look like, not imported as nothing.
func TestNotASession(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"session-claude.jsonl":  `{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n",
		"session-settings.json": `{"theme":"dark"}`,
		"checkpoint-list.json":  `[1, 2, 3]`,
		"session-text.json":     "hello",
		"session-binary.json":   "\x00\x01",
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name)
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := importers.ImportSource(importtest.Store(t), Source, file, nil)
			if err == nil || !strings.Contains(err.Error(), "not a Gemini CLI") && !strings.Contains(err.Error(), "looks binary") {
				t.Fatalf("import of %s: %v", name, err)
			}
		})
	}
}

// TestRelativeWithoutWorkspace: without a session context a relative path
// cannot be placed, so its content is of unknown source, never guessed.
func TestRelativeWithoutWorkspace(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "session-y.json")
	doc := `{"sessionId":"s","projectHash":"p","messages":[
{"id":"u1","timestamp":"2025-10-01T10:00:01Z","type":"user","content":"read it"},
{"id":"g1","timestamp":"2025-10-01T10:00:02Z","type":"gemini","content":"","toolCalls":[
 {"id":"r1","name":"read_file","args":{"file_path":".env"},"result":[{"functionResponse":{"id":"r1","name":"read_file","response":{"output":"KEY=1"}}}],"status":"success"},
 {"id":"r2","name":"run_shell_command","args":{"command":"cat .env"},"result":[{"functionResponse":{"id":"r2","name":"run_shell_command","response":{"output":"Output: KEY=1\nProcess Group PGID: 3"}}}],"status":"success"}]}]}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := importers.ImportSource(st, Source, file, nil); err != nil {
		t.Fatal(err)
	}
	_, msgs := importtest.Session(t, st, "read it")
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"assistant parts=[call:r1:read_file call:r2:run_shell_command] paths=nil",
		"tool read parts=[tool_result] paths=nil unknown=the path .env is relative and the session records no workspace folder",
		"tool bash parts=[tool_result] paths=nil unknown=the command's working folder was not recorded, so .env cannot be resolved",
	})
}

// TestUnchangedIsAStat: a session file whose size and time are those of
// the last import is not read again (its content is not even looked at).
func TestUnchangedIsAStat(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "session-z.json")
	doc := `{"sessionId":"s","projectHash":"p","messages":[{"id":"u1","type":"user","content":"hello"}]}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := importers.ImportSource(st, Source, file, nil); err != nil {
		t.Fatal(err)
	}
	// Same size, same time, different bytes: only a read would notice.
	if err := os.WriteFile(file, []byte(strings.Repeat(" ", len(doc))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	if res, err := importers.ImportSource(st, Source, file, nil); err != nil || !res.Unchanged {
		t.Fatalf("second import %v %v", res, err)
	}
}

// A session document caught while Gemini CLI rewrites it is left for the
// next import, not refused; a header alone is an empty session.
func TestBeingWritten(t *testing.T) {
	st := importtest.Store(t)
	dir := t.TempDir()
	cut := filepath.Join(dir, "session-cut.json")
	if err := os.WriteFile(cut, []byte("{\n  \"sessionId\": \"s\",\n  \"messages\": [\n    {\"id\": \"u1\", \"type\": \"us"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := importers.ImportSource(st, Source, cut, nil)
	if err != nil || !res.Incomplete || !strings.Contains(res.String(), "left for the next import") {
		t.Fatalf("import of a cut document: %v %v", res, err)
	}
	header := filepath.Join(dir, "session-new.jsonl")
	if err := os.WriteFile(header, []byte(`{"sessionId":"s","projectHash":"p"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := importers.ImportSource(st, Source, header, nil); err != nil || res.Messages != 0 {
		t.Fatalf("import of a header alone: %v %v", res, err)
	}
}

// TestWritesMarkTheirFile: a call that writes a file (write_file, replace)
// is marked with it, since its args hold that file's content; one whose
// relative path cannot be resolved, and a read, are not.
func TestWritesMarkTheirFile(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "session-w.json")
	doc := `{"sessionId":"s","projectHash":"p","messages":[
{"id":"u1","timestamp":"2025-10-01T10:00:01Z","type":"user","content":"rotate the key"},
{"id":"g1","timestamp":"2025-10-01T10:00:02Z","type":"gemini","content":"","toolCalls":[
 {"id":"w1","name":"replace","args":{"file_path":"/home/dev/shop/.env","old_string":"KEY=1","new_string":"KEY=2"},"result":[{"functionResponse":{"id":"w1","name":"replace","response":{"output":"Successfully modified file: /home/dev/shop/.env (1 replacements)."}}}],"status":"success"},
 {"id":"w2","name":"write_file","args":{"file_path":"notes.txt","content":"KEY=2"},"result":[{"functionResponse":{"id":"w2","name":"write_file","response":{"output":"ok"}}}],"status":"success"},
 {"id":"r1","name":"read_file","args":{"absolute_path":"/home/dev/shop/.env"},"result":[{"functionResponse":{"id":"r1","name":"read_file","response":{"output":"KEY=2"}}}],"status":"success"},
 {"id":"s1","name":"run_shell_command","args":{"command":"echo KEY=3 >> /home/dev/shop/.env"},"result":[{"functionResponse":{"id":"s1","name":"run_shell_command","response":{"output":"Output: (empty)"}}}],"status":"success"}]}]}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := importers.ImportSource(st, Source, file, nil); err != nil {
		t.Fatal(err)
	}
	_, msgs := importtest.Session(t, st, "rotate the key")
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"assistant parts=[call:w1:replace:writes:/home/dev/shop/.env call:w2:write_file call:r1:read_file call:s1:run_shell_command:writes:/home/dev/shop/.env] paths=[/home/dev/shop/.env]",
		"tool replace parts=[tool_result] paths=[/home/dev/shop/.env]",
		"tool write_file parts=[tool_result] paths=nil unknown=the path notes.txt is relative and the session records no workspace folder",
		"tool read parts=[from:/home/dev/shop/.env] paths=[/home/dev/shop/.env]",
		"tool bash parts=[tool_result] paths=nil nofiles",
	})
}

// TestReferencedFiles: a prompt that @-mentions files holds their content,
// as Gemini CLI recorded it (one string, or the parts it sent); each file's
// content is a part of that file, the user's words and the lines naming
// the files parts of none, and an MCP resource makes the prompt of unknown
// source. The parts joined are the prompt.
func TestReferencedFiles(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "session-r.jsonl")
	ctx := `{"id":"c0","timestamp":"2025-10-01T10:00:00.000Z","type":"user","content":[{"text":"<session_context>\nI'm currently working in the directory: /home/dev/shop\n</session_context>"}]}`
	asString := "What do @secrets/notes.env and @src/a.go say?\n" + refStart + "\nContent from @secrets/notes.env:\nLAUNCH=PURPLE-42\nContent from @src/a.go:\npackage a\n" + refEnd
	parts := []string{"And @/home/dev/shop/b.go with docs://guide?", "\n" + refStart, "\nContent from @docs://guide:\n", "Read the guide.", "\nContent from @/home/dev/shop/b.go:\n", "package b", "\n" + refEnd}
	var arr []map[string]string
	for _, p := range parts {
		arr = append(arr, map[string]string{"text": p})
	}
	b1, _ := json.Marshal(asString)
	b2, _ := json.Marshal(arr)
	doc := `{"sessionId":"r","projectHash":"p","startTime":"2025-10-01T10:00:00.000Z","lastUpdated":"2025-10-01T10:00:00.000Z"}
` + ctx + `
{"id":"u1","timestamp":"2025-10-01T10:00:01.000Z","type":"user","content":` + string(b1) + `}
{"id":"u2","timestamp":"2025-10-01T10:00:02.000Z","type":"user","content":` + string(b2) + `}
`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := importers.ImportSource(st, Source, file, nil); err != nil {
		t.Fatal(err)
	}
	_, msgs := importtest.Session(t, st, "What do @secrets/notes.env and @src/a.go say?")
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"user parts=[text text from:/home/dev/shop/secrets/notes.env text from:/home/dev/shop/src/a.go text] paths=[/home/dev/shop/secrets/notes.env /home/dev/shop/src/a.go]",
		"user parts=[text text text text from:/home/dev/shop/b.go text] paths=[/home/dev/shop/b.go] unknown=the content of @docs://guide, a resource Gemini CLI read for the prompt, not a file",
	})
	if msgs[1].Parts[2].Text != "LAUNCH=PURPLE-42" || msgs[2].Parts[4].Text != "package b" {
		t.Errorf("the files' parts are %q and %q", msgs[1].Parts[2].Text, msgs[2].Parts[4].Text)
	}
	var joined strings.Builder
	for _, p := range msgs[1].Parts {
		joined.WriteString(p.Text)
	}
	if joined.String() != asString {
		t.Errorf("the parts joined are\n%q\nnot the prompt\n%q", joined.String(), asString)
	}
}

// TestReferencesOddPrompts: prompts that hold the marks in other shapes
// keep their text whole, in parts that join to it.
func TestReferencesOddPrompts(t *testing.T) {
	for _, text := range []string{
		refStart,
		"x " + refStart + " y",
		refEnd + "\n" + refStart + "\nContent from @a.go:\nA",
		refStart + "\nContent from @no colon here",
		refStart + "\nContent from @:\n\n" + refEnd,
		refStart + "\nContent from @a.go:\n" + refEnd + "\nContent from @b.go:\nB\n" + refEnd,
	} {
		b := &builder{paths: importers.NewPaths(), workspace: []string{"/w"}}
		m := &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: text}}}
		b.references(m)
		var joined strings.Builder
		for _, p := range m.Parts {
			joined.WriteString(p.Text)
		}
		if joined.String() != text {
			t.Errorf("%q: parts join to %q", text, joined.String())
		}
		if err := m.Validate(); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}
