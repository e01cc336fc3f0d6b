package importers_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/codex"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

var agents = []struct {
	name    string
	fixture string
	factory importers.Factory
}{
	{claude.Agent, "claude/testdata/session.jsonl", claude.New},
	{codex.Agent, "codex/testdata/rollout-2025-09-01T10-00-00-0199aaaa.jsonl", codex.New},
}

// snapshot renders every session of st (headers without IDs and times,
// messages with their text), ordered by title, so that two stores can be
// compared.
func snapshot(t *testing.T, st *session.Store) string {
	t.Helper()
	hs, _, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hs {
		msgs, _, err := st.Messages(h.ID)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("session " + h.Title + " | " + h.LastModel + " | " + h.WorkDir + "\n")
		for i := range msgs {
			b.WriteString(importtest.Describe(&msgs[i]) + " " + msgs[i].CreatedAt.String() + "\n")
			for _, p := range msgs[i].Parts {
				b.WriteString("  " + p.Text + string(p.Input) + "\n")
			}
		}
		if uint64(len(msgs)) != h.Count {
			t.Errorf("session %q counts %d messages but has %d", h.Title, h.Count, len(msgs))
		}
		out = append(out, b.String())
	}
	sort.Strings(out)
	return strings.Join(out, "")
}

func importFile(t *testing.T, st *session.Store, agent, file string, f importers.Factory) importers.Result {
	t.Helper()
	res, err := importers.Import(st, agent, file, f)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestImportTwiceDoesNotDuplicate(t *testing.T) {
	for _, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			st := importtest.Store(t)
			first := importFile(t, st, a.name, a.fixture, a.factory)
			want := snapshot(t, st)
			second := importFile(t, st, a.name, a.fixture, a.factory)
			if !second.Unchanged || second.SessionID != first.SessionID || second.Messages != 0 {
				t.Errorf("second import: %+v", second)
			}
			if !strings.Contains(second.String(), "unchanged since the last import") {
				t.Errorf("summary %q", second)
			}
			if got := snapshot(t, st); got != want {
				t.Errorf("store changed on re-import:\n%s", got)
			}
		})
	}
}

// TestGrownFileImportsOnlyNewLines cuts each fixture at every line (and in
// the middle of a line, as an agent still writing it leaves it), imports
// the first part, appends the rest and imports again: the store must end up
// exactly as after importing the whole file at once.
func TestGrownFileImportsOnlyNewLines(t *testing.T) {
	for _, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			data, err := os.ReadFile(a.fixture)
			if err != nil {
				t.Fatal(err)
			}
			whole := importtest.Store(t)
			full := importFile(t, whole, a.name, a.fixture, a.factory)
			want := snapshot(t, whole)
			var cuts []int
			for i, c := range data {
				if c == '\n' {
					cuts = append(cuts, i+1, i+1+40) // after a line, and 40 bytes into the next
				}
			}
			dir := t.TempDir()
			for _, cut := range cuts {
				if cut >= len(data) {
					continue
				}
				st := importtest.Store(t)
				file := filepath.Join(dir, filepath.Base(a.fixture))
				if err := os.WriteFile(file, data[:cut], 0o600); err != nil {
					t.Fatal(err)
				}
				r1 := importFile(t, st, a.name, file, a.factory)
				if err := os.WriteFile(file, data, 0o600); err != nil {
					t.Fatal(err)
				}
				r2 := importFile(t, st, a.name, file, a.factory)
				if r1.Messages+r2.Messages != full.Messages || r1.Skipped+r2.Skipped != full.Skipped {
					t.Errorf("cut at %d: %d+%d messages, %d+%d skipped; whole file: %d, %d", cut, r1.Messages, r2.Messages, r1.Skipped, r2.Skipped, full.Messages, full.Skipped)
				}
				if r1.Messages > 0 && !r2.Resumed {
					t.Errorf("cut at %d: second import did not resume: %+v", cut, r2)
				}
				if got := strings.ReplaceAll(snapshot(t, st), file, a.fixture); got != strings.ReplaceAll(want, mustAbs(t, a.fixture), a.fixture) {
					t.Fatalf("cut at %d: store differs from a whole import:\n%s\nwant\n%s", cut, got, want)
				}
			}
		})
	}
}

func mustAbs(t *testing.T, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func TestRewrittenFileReplacesItsSessions(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	line := func(text string) string {
		return `{"type":"user","cwd":"/w","message":{"role":"user","content":"` + text + `"},"uuid":"u1","timestamp":"2025-01-01T00:00:00Z"}` + "\n"
	}
	os.WriteFile(file, []byte(line("first version")), 0o600)
	r1 := importFile(t, st, claude.Agent, file, claude.New)
	os.WriteFile(file, []byte(line("second version")+line("and more")), 0o600)
	r2 := importFile(t, st, claude.Agent, file, claude.New)
	if !r2.Replaced || r2.Messages != 2 || r2.SessionID == r1.SessionID {
		t.Fatalf("rewrite: %+v", r2)
	}
	if _, err := st.Get(r1.SessionID); err == nil {
		t.Error("the old session is still there")
	}
	_, msgs := importtest.Session(t, st, "second version")
	if len(msgs) != 2 {
		t.Errorf("%d messages", len(msgs))
	}
	hs, _, _ := st.List()
	if len(hs) != 1 {
		t.Errorf("%d sessions, want 1", len(hs))
	}
}

func TestDeletedSessionIsImportedAgain(t *testing.T) {
	st := importtest.Store(t)
	r1 := importFile(t, st, codex.Agent, agents[1].fixture, codex.New)
	if err := st.Delete(r1.SessionID); err != nil {
		t.Fatal(err)
	}
	r2 := importFile(t, st, codex.Agent, agents[1].fixture, codex.New)
	if r2.Unchanged || r2.Messages != r1.Messages {
		t.Errorf("re-import after delete: %+v", r2)
	}
}

// TestLongAndBrokenLines: a 2 MiB tool result imports whole; a malformed
// line is skipped and counted; the import goes on.
func TestLongAndBrokenLines(t *testing.T) {
	st := importtest.Store(t)
	big := strings.Repeat("x", 2<<20)
	var b bytes.Buffer
	b.WriteString(`{"type":"assistant","cwd":"/w","message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/big.txt"}}]},"uuid":"a1"}` + "\n")
	b.WriteString(`{"type":"user", "message": {"role":` + "\n")
	b.WriteString(`{"type":"user","cwd":"/w","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"1\t` + big + `"}]},"uuid":"u1"}` + "\n")
	b.WriteString("\x00\xff garbage\n")
	file := filepath.Join(t.TempDir(), "big.jsonl")
	os.WriteFile(file, b.Bytes(), 0o600)
	res := importFile(t, st, claude.Agent, file, claude.New)
	if res.Messages != 2 || res.Skipped != 2 || res.Tagged != 1 {
		t.Fatalf("%s", res)
	}
	msgs, _, _ := st.Messages(res.SessionID)
	if got := msgs[1].Parts[0]; got.SourcePath != "/w/big.txt" || len(got.Text) != len(big)+2 {
		t.Errorf("big result: %d bytes from %q", len(got.Text), got.SourcePath)
	}
}

// A session that scrim added to is never replaced or changed by an import:
// when its transcript is rewritten (Claude Code's /rewind, compaction) the
// transcript goes to a new session and the old one is kept whole, and a
// grown transcript's new lines follow what was added, saying so.
func TestImportKeepsWhatScrimAdded(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	line := func(uuid, text string) string {
		return `{"type":"user","cwd":"/w","message":{"role":"user","content":"` + text + `"},"uuid":"` + uuid + `","timestamp":"2025-01-01T00:00:00Z"}` + "\n"
	}
	os.WriteFile(file, []byte(line("u1", "first question")), 0o600)
	r1 := importFile(t, st, claude.Agent, file, claude.New)

	// Work done in scrim: a prompt and an answer appended to the session.
	added := []*session.Message{
		{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "asked in scrim"}}},
		{Role: session.RoleAssistant, Model: "ollama/x", Parts: []session.Part{{Kind: session.PartText, Text: "answered in scrim"}}},
	}
	if err := st.Append(r1.SessionID, added...); err != nil {
		t.Fatal(err)
	}
	before, _, _ := st.Messages(r1.SessionID)

	// The transcript grows: its new line goes after scrim's two.
	os.WriteFile(file, []byte(line("u1", "first question")+line("u2", "second question")), 0o600)
	r2 := importFile(t, st, claude.Agent, file, claude.New)
	if !r2.Resumed || r2.After != 2 || !strings.Contains(r2.String(), "appended after the 2 messages added in scrim") {
		t.Fatalf("grown: %+v %q", r2, r2.String())
	}
	grown, _, _ := st.Messages(r1.SessionID)
	if len(grown) != 4 || grown[3].Text() != "second question" || grown[1].Text() != "asked in scrim" {
		t.Fatalf("after growing: %v", texts(grown))
	}

	// The transcript is rewritten before what was imported: a new session;
	// the old one is kept exactly as it was.
	os.WriteFile(file, []byte(line("u9", "rewound question")), 0o600)
	r3 := importFile(t, st, claude.Agent, file, claude.New)
	if !r3.Replaced || r3.SessionID == r1.SessionID || len(r3.Kept) != 1 || r3.Kept[0].ID != r1.SessionID || r3.Kept[0].Added != 2 {
		t.Fatalf("rewrite: %+v", r3)
	}
	want := "changed since the last import; imported as a new session: "
	if s := r3.String(); !strings.Contains(s, want) || !strings.Contains(s, r1.SessionID+", which has 2 messages added in scrim, is kept") {
		t.Fatalf("summary %q", s)
	}
	kept, _, err := st.Messages(r1.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range before {
		if i >= len(kept) || kept[i].ID != before[i].ID || kept[i].Text() != before[i].Text() || !kept[i].CreatedAt.Equal(before[i].CreatedAt) {
			t.Fatalf("message %d of the kept session changed: %v", i+1, texts(kept))
		}
	}
	if len(kept) != 4 {
		t.Fatalf("kept session has %d messages, want 4", len(kept))
	}
	_, fresh := importtest.Session(t, st, "rewound question")
	if len(fresh) != 1 {
		t.Fatalf("new session: %v", texts(fresh))
	}

	// The new session, not added to, is replaced by the next rewrite as
	// before; the kept one still stands.
	os.WriteFile(file, []byte(line("u7", "again")), 0o600)
	r4 := importFile(t, st, claude.Agent, file, claude.New)
	if !r4.Replaced || len(r4.Kept) != 0 {
		t.Fatalf("second rewrite: %+v", r4)
	}
	if _, err := st.Get(r3.SessionID); err == nil {
		t.Error("the clean import session was not replaced")
	}
	if _, err := st.Get(r1.SessionID); err != nil {
		t.Error("the kept session is gone")
	}
}

// An import record that an older scrim wrote does not say what was added
// to its sessions: a rewrite keeps them rather than guess.
func TestImportKeepsSessionsOfOldRecords(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	line := func(uuid, text string) string {
		return `{"type":"user","cwd":"/w","message":{"role":"user","content":"` + text + `"},"uuid":"` + uuid + `","timestamp":"2025-01-01T00:00:00Z"}` + "\n"
	}
	os.WriteFile(file, []byte(line("u1", "first")), 0o600)
	r1 := importFile(t, st, claude.Agent, file, claude.New)
	rec, _, err := st.Origin(r1.File)
	if err != nil {
		t.Fatal(err)
	}
	rec.Counts, rec.Added, rec.AddedKnown = nil, nil, false // as an older scrim wrote it
	if err := st.PutOrigin(&rec); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, []byte(line("u2", "rewritten")), 0o600)
	r2 := importFile(t, st, claude.Agent, file, claude.New)
	if len(r2.Kept) != 1 || r2.Kept[0].Known || !strings.Contains(r2.String(), "which may hold messages added in scrim") {
		t.Fatalf("%+v %q", r2, r2.String())
	}
	if _, err := st.Get(r1.SessionID); err != nil {
		t.Fatal("the old session is gone")
	}
}

func texts(msgs []session.Message) []string {
	var out []string
	for i := range msgs {
		out = append(out, msgs[i].Text())
	}
	return out
}
