package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/scrim-dev/scrim/session"
)

var idLine = regexp.MustCompile(`^[0-9a-f]{16}\n$`)

// seed writes sessions straight into a store folder (the CLI opens it later)
// and returns their headers; each entry of msgs is one session's messages.
func seed(t *testing.T, dir string, titles []string, msgs ...[]*session.Message) []session.Header {
	t.Helper()
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var heads []session.Header
	for i, title := range titles {
		h, err := st.Create(session.Header{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		if i < len(msgs) && len(msgs[i]) > 0 {
			if err := st.Append(h.ID, msgs[i]...); err != nil {
				t.Fatal(err)
			}
		}
		if h, err = st.Get(h.ID); err != nil {
			t.Fatal(err)
		}
		heads = append(heads, h)
	}
	return heads
}

func sampleMessages() []*session.Message {
	return []*session.Message{
		{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "read the config"}}},
		{Role: session.RoleAssistant, Model: "anthropic/claude-sonnet-4-5", Parts: []session.Part{
			{Kind: session.PartText, Text: "Reading it."},
			{Kind: session.PartToolCall, CallID: "call_1", Name: "read", Input: json.RawMessage(`{"path":"/srv/app/config.toml"}`)}}},
		{Role: session.RoleTool, Tool: "read", ToolCallID: "call_1", Model: "anthropic/claude-sonnet-4-5",
			Parts: []session.Part{{Kind: session.PartToolResult, Text: "1\tport = 8080\n2\thost = \"db\"\n", SourcePath: "/srv/app/config.toml"}},
			Meta:  session.Meta{SourcePaths: []string{"/srv/app/config.toml"}}},
		{Role: session.RoleTool, Tool: "bash", ToolCallID: "call_2", IsError: true,
			Parts: []session.Part{{Kind: session.PartToolResult, Text: "command not found"}}},
		{Role: session.RoleEvent, Parts: []session.Part{{Kind: session.PartText, Text: "imported: whole message"}},
			Meta: session.Meta{SourcePaths: []string{"/srv/app/.env", "/srv/app/main.go"}, Note: "not split per file"}},
	}
}

func TestSessionsEmptyStoreSaysWhatToDo(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := filepath.Join(t.TempDir(), "store")
	out, errOut, code := scrim(t, "", "--store", dir, "sessions")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"No sessions yet in " + dir, "scrim new --title", "scrim import claude|codex|crush|gemini|opencode PATH", "scrim demo"} {
		if !strings.Contains(out, want) {
			t.Errorf("empty-store text lacks %q:\n%s", want, out)
		}
	}
	out, _, code = scrim(t, "", "--store", dir, "sessions", "--format", "json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("json of an empty store: exit %d %q", code, out)
	}
	if _, _, code = scrim(t, "", "--store", dir, "sessions", "--format", "yaml"); code != exitUsage {
		t.Fatalf("bad --format: exit %d", code)
	}
}

func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir() + "/store"
	work := t.TempDir()
	out, errOut, code := scrim(t, "", "--store", dir, "new", "--title", "fix the parser", "--workdir", work)
	if code != 0 || !idLine.MatchString(out) || errOut != "" {
		t.Fatalf("new: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	id := strings.TrimSpace(out)
	second, _, _ := scrim(t, "", "--store", dir, "new", "--title", "second")
	second = strings.TrimSpace(second)

	out, _, code = scrim(t, "", "--store", dir, "sessions")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("sessions: exit %d\n%s", code, out)
	}
	if !strings.HasPrefix(lines[1], second) || !strings.HasPrefix(lines[2], id) || !strings.Contains(lines[2], "fix the parser") {
		t.Fatalf("sessions not newest first:\n%s", out)
	}

	out, _, code = scrim(t, "", "--store", dir, "show", id[:6])
	if code != 0 || !strings.Contains(out, "session "+id+"  fix the parser") || !strings.Contains(out, "workdir "+work) {
		t.Fatalf("show by prefix: exit %d\n%s", code, out)
	}
	if _, errOut, code = scrim(t, "", "--store", dir, "rename", id[:6], "parser fixed"); code != 0 {
		t.Fatalf("rename: exit %d %s", code, errOut)
	}
	out, _, _ = scrim(t, "", "--store", dir, "sessions", "--format", "json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("sessions json: %v\n%s", err, out)
	}
	// A rename is not activity (issue 19): the renamed session keeps its
	// place, second, behind the newer one.
	if len(list) != 2 || list[1]["id"] != id || list[1]["title"] != "parser fixed" || list[1]["workDir"] != work {
		t.Fatalf("after rename (renamed session in its place, camelCase fields): %v", list)
	}
	for _, key := range []string{"createdAt", "updatedAt", "messages"} {
		if _, ok := list[1][key]; !ok {
			t.Errorf("json lacks %q: %v", key, list[1])
		}
	}

	out, _, code = scrim(t, "", "--store", dir, "rm", id[:5])
	if code != 0 || out != "removed "+id+"  parser fixed  (0 messages)\n" {
		t.Fatalf("rm: exit %d %q", code, out)
	}
	_, errOut, code = scrim(t, "", "--store", dir, "show", id)
	if code != exitError || errOut != fmt.Sprintf("scrim: no session matches %q (list them with: scrim sessions)\n", id) {
		t.Fatalf("show after rm: exit %d %q", code, errOut)
	}
	out, _, _ = scrim(t, "", "--store", dir, "sessions")
	if strings.Contains(out, id) || !strings.Contains(out, second) {
		t.Fatalf("sessions after rm:\n%s", out)
	}
}

func TestSessionCommandErrors(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	seedDir := filepath.Join(dir, "s")
	st, err := session.Open(seedDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"aa11", "aa22", "bb33"} {
		if _, err := st.Create(session.Header{ID: id, Title: id}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"ambiguous prefix", []string{"show", "aa"}, exitError, `"aa" matches sessions aa11, aa22; give more of the ID`},
		{"unknown ID", []string{"show", "cc"}, exitError, `no session matches "cc"`},
		{"rm with one bad ID removes none", []string{"rm", "bb33", "zz"}, exitError, `no session matches "zz"`},
		{"rename unknown", []string{"rename", "zz", "t"}, exitError, `no session matches "zz"`},
		{"rename to empty", []string{"rename", "bb", " "}, exitUsage, "the title is empty"},
		{"new without title", []string{"new"}, exitUsage, "the title is empty"},
		{"new with two-line title", []string{"new", "--title", "a\nb"}, exitUsage, "one line"},
		{"new in a missing workdir", []string{"new", "--title", "t", "--workdir", filepath.Join(dir, "nope")}, exitUsage, "is not a folder"},
		{"show needs a session", []string{"show"}, exitUsage, "accepts 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := scrim(t, "", append([]string{"--store", seedDir}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.wantErr) || strings.Count(errOut, "\n") != 1 || out != "" {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q (want one line with %q)", code, tt.code, out, errOut, tt.wantErr)
			}
		})
	}
	out, _, _ := scrim(t, "", "--store", seedDir, "sessions")
	if strings.Count(out, "\n") != 4 {
		t.Fatalf("a failed command changed the store:\n%s", out)
	}
}

func TestShowPrintsEveryMessage(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	msgs := sampleMessages()
	h := seed(t, dir, []string{"config review"}, msgs)[0]

	out, errOut, code := scrim(t, "", "--store", dir, "show", h.ID[:4])
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d %q", code, errOut)
	}
	for _, want := range []string{
		"messages 5  last model anthropic/claude-sonnet-4-5",
		"\n#1 user · ", "    read the config\n",
		"\n#2 assistant · model anthropic/claude-sonnet-4-5 · ",
		"  [tool_call read (call_1)]\n    {\"path\":\"/srv/app/config.toml\"}\n",
		"\n#3 tool · tool read · call call_1 · model anthropic/claude-sonnet-4-5 · ",
		"  sourcePaths: /srv/app/config.toml\n  [tool_result from /srv/app/config.toml]\n    1\tport = 8080\n    2\thost = \"db\"\n",
		"\n#4 tool · tool bash · call call_2 · error · ",
		"\n#5 event · ", "  sourcePaths: /srv/app/.env, /srv/app/main.go\n  note: not split per file\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q", want)
		}
	}
	if n := strings.Count(out, "sourcePaths:"); n != 2 {
		t.Errorf("sourcePaths shown %d times, want only for the 2 attributed messages:\n%s", n, out)
	}
	if t.Failed() {
		t.Log(out)
	}

	out, _, code = scrim(t, "", "--store", dir, "show", h.ID, "--format", "json")
	var doc struct {
		Session  session.Header
		Messages []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("show json: exit %d, %v\n%s", code, err, out)
	}
	if !reflect.DeepEqual(doc.Session, h) || len(doc.Messages) != len(msgs) {
		t.Fatalf("json header %+v, %d messages", doc.Session, len(doc.Messages))
	}
	for i, raw := range doc.Messages {
		var m session.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		want := *msgs[i]
		want.CreatedAt = m.CreatedAt // the store's clock; checked by the session tests
		if !reflect.DeepEqual(m, want) {
			t.Errorf("json message %d:\n got %+v\nwant %+v", i+1, m, want)
		}
		if has := bytes.Contains(raw, []byte(`"sourcePaths":`)); has != (msgs[i].Meta.SourcePaths != nil) {
			t.Errorf("json message %d: sourcePaths present = %v: %s", i+1, has, raw)
		}
	}

	out, _, _ = scrim(t, "", "--store", dir, "show", h.ID, "--last", "2")
	if strings.Contains(out, "\n#3 ") || !strings.Contains(out, "\n#4 ") || !strings.Contains(out, "\n#5 ") {
		t.Fatalf("--last 2:\n%s", out)
	}
}

// File content, titles and model names are untrusted: the terminal must get
// none of their control characters.
func TestTextOutputIsInert(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	nasty := "a\x1b]0;owned\x07b\x1b[2J\rc\u202ed\u200be\u009b31m\x9b"
	msg := &session.Message{Role: session.RoleTool, Tool: "read" + nasty, ToolCallID: "c" + nasty, Model: "m" + nasty,
		Parts: []session.Part{
			{Kind: session.PartToolResult, Text: "line1\n" + nasty + "\n", SourcePath: "/x/" + nasty},
			{Kind: session.PartToolCall, Name: "n" + nasty, CallID: "i" + nasty},
		},
		Meta: session.Meta{SourcePaths: []string{"/x/" + nasty}, Note: nasty}}
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := st.Create(session.Header{ID: "abc", Title: "t" + nasty, Origin: "o" + nasty, WorkDir: "/w" + nasty})
	if err := st.Append(h.ID, msg); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, args := range [][]string{{"sessions"}, {"show", "abc"}} {
		out, _, code := scrim(t, "", append([]string{"--store", dir}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e", "\u200b", "\u009b"} {
			if strings.Contains(out, bad) {
				t.Errorf("%v output contains %q:\n%q", args, bad, out)
			}
		}
		if !strings.Contains(out, "␛]0;owned") {
			t.Errorf("%v output does not show the escape as a symbol:\n%s", args, out)
		}
	}
}

func TestShowReportsCorruptRecordAndShowsTheRest(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	h := seed(t, dir, []string{"t"}, sampleMessages())[0]
	corrupt(t, dir, append([]byte("m/"+h.ID+"/"), binary.BigEndian.AppendUint64(nil, 3)...), []byte("\x00\xffgarbage"))

	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			out, errOut, code := scrim(t, "", "--store", dir, "show", h.ID, "--format", format)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			want := fmt.Sprintf("scrim: warning: session %s message 3 cannot be decoded: ", h.ID)
			if !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 || !strings.HasSuffix(errOut, "; skipped\n") {
				t.Fatalf("stderr %q, want one line starting %q", errOut, want)
			}
			for _, text := range []string{"read the config", "Reading it.", "command not found", "imported: whole message"} {
				if !strings.Contains(out, text) {
					t.Errorf("output lacks %q", text)
				}
			}
			if strings.Contains(out, "port = 8080") || strings.Contains(out, "garbage") {
				t.Errorf("the corrupt record leaked into the output")
			}
			if format == "json" && !json.Valid([]byte(out)) {
				t.Errorf("json output is not valid JSON:\n%s", out)
			}
		})
	}
}

// corrupt overwrites one key's value through Badger itself, as a damaged
// record would look to the store.
func corrupt(t *testing.T, dir string, key, val []byte) {
	t.Helper()
	// The store was just closed, and a process another test is starting
	// can hold its lock file open for a moment (see session.Open): retry.
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	for wait := 5 * time.Millisecond; err != nil && wait < time.Second; wait *= 2 {
		time.Sleep(wait)
		db, err = badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set(key, val) }); err != nil {
		t.Fatal(err)
	}
}

func TestNewerStoreRefused(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	seed(t, dir, []string{"t"})
	corrupt(t, dir, []byte("v"), binary.BigEndian.AppendUint32(nil, session.SchemaVersion+1))
	out, errOut, code := scrim(t, "", "--store", dir, "sessions")
	want := fmt.Sprintf("scrim: session store %s was written by a newer scrim (schema %d, this scrim reads up to %d); upgrade scrim",
		dir, session.SchemaVersion+1, session.SchemaVersion)
	if code != exitError || out != "" || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// The lock test needs a real second process: the store is held by this
// test process, and `scrim sessions` runs as another.
func TestSecondProcessIsRefused(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	held, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, viaEnv := range []bool{false, true} {
		var cmd = scrimProcess(t, "--store", dir, "sessions")
		if viaEnv {
			cmd = scrimProcess(t, "sessions")
			cmd.Env = append(cmd.Env, "SCRIM_STORE="+dir)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("second process: %v, want exit 1; stderr %q", err, stderr.String())
		}
		if want := "scrim: session store " + dir + " is in use by another scrim process (pid "; !strings.HasPrefix(stderr.String(), want) ||
			!strings.HasSuffix(stderr.String(), "): close it (q in the TUI) or wait for it to finish, then run this again\n") {
			t.Fatalf("stderr %q, want %q… and what to do", stderr.String(), want)
		}
		if stdout.Len() != 0 {
			t.Fatalf("stdout %q", stdout.String())
		}
	}
}

func TestStoreLocation(t *testing.T) {
	t.Parallel()
	isolate(t)
	flagDir, envDir := t.TempDir()+"/flag", t.TempDir()+"/env"
	defaultDir := filepath.Join(getenv(t, "XDG_DATA_HOME"), "scrim", "store")
	tests := []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"default", "", nil, defaultDir},
		{"env", envDir, nil, envDir},
		{"flag beats env", envDir, []string{"--store", flagDir}, flagDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setenv(t, "SCRIM_STORE", tt.env)
			out, _, code := scrim(t, "", append(tt.args, "new", "--title", tt.name)...)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			st, err := session.Open(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Get(strings.TrimSpace(out)); err != nil {
				t.Fatalf("session not in %s: %v", tt.want, err)
			}
		})
	}
}

// A session whose header cannot be decoded is reported, not fatal: the
// others list, show names the way out, and rm removes it.
func TestCorruptHeaderCanBeSeenAndRemoved(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	heads := seed(t, dir, []string{"broken", "fine"}, sampleMessages())
	corrupt(t, dir, []byte("s/"+heads[0].ID), []byte("{not json"))

	out, errOut, code := scrim(t, "", "--store", dir, "sessions")
	if code != 0 || !strings.Contains(out, heads[1].ID) || strings.Contains(out, heads[0].ID) {
		t.Fatalf("sessions: exit %d\n%s", code, out)
	}
	if want := fmt.Sprintf("scrim: warning: session %s: header cannot be decoded: ", heads[0].ID); !strings.HasPrefix(errOut, want) {
		t.Fatalf("stderr %q, want prefix %q", errOut, want)
	}
	_, errOut, code = scrim(t, "", "--store", dir, "show", heads[0].ID[:8])
	if code != exitError || !strings.HasSuffix(errOut, "remove it with: scrim rm "+heads[0].ID+"\n") {
		t.Fatalf("show: exit %d %q", code, errOut)
	}
	out, _, code = scrim(t, "", "--store", dir, "rm", heads[0].ID[:8])
	if code != 0 || !strings.HasPrefix(out, "removed "+heads[0].ID) {
		t.Fatalf("rm: exit %d %q", code, out)
	}
	if _, errOut, _ = scrim(t, "", "--store", dir, "sessions"); errOut != "" {
		t.Fatalf("warning after rm: %q", errOut)
	}
}
