package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
)

const spanToken = "tok-SECRET-12345"
const spanPAT = "ghp_R9bX2kQm7LpZ4vT8nW1cY6dF3hJ5sA0eG2uI"

// seedSpans writes a session in which the .env read is withheld from the
// limited tier but repeated: quoted by the assistant, in an edit's input;
// and in which a command prints a credential. It is long enough (over two
// pages) that the quote and the read are on different pages.
func seedSpans(t *testing.T, st *session.Store) string {
	t.Helper()
	h, err := st.Create(session.Header{Title: "Derived and secrets"})
	if err != nil {
		t.Fatal(err)
	}
	at := fixtureTime.Add(-time.Hour)
	msgs := []*session.Message{
		text(session.RoleUser, "What is in the settings?"),
		call("c1", "read", map[string]any{"path": ".env"}, ""),
		result("c1", "read", "/demo/.env", "     1\tAPI_TOKEN="+spanToken+"\n     2\tDEBUG=true"),
	}
	for i := 0; i < pageSize*2; i++ {
		msgs = append(msgs, text(session.RoleUser, "filler so that the quote is on a later page"))
	}
	msgs = append(msgs,
		text(session.RoleAssistant, "The token is "+spanToken+"."),
		call("c2", "Edit", map[string]any{"file_path": "/demo/app.py", "old_string": "API_TOKEN=" + spanToken, "new_string": "x"}, ""),
		call("c3", "bash", map[string]any{"command": "env"}, ""),
		result("c3", "bash", "", "HOME=/home/dev\nGITHUB_TOKEN="+spanPAT+"\n"),
	)
	for _, m := range msgs {
		at = at.Add(time.Second)
		m.CreatedAt = at
	}
	if err := st.Append(h.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	return h.ID
}

// TestSpansInPanes: with the limited tier (derived and secrets redacted),
// the sent pane draws the placeholders inside the quote, the edit and the
// env output on ✖ lines, the stored pane marks with ✗ what they replace,
// the status line counts them, n walks to them and e explains them; the
// fingerprints come from a read two pages before the quote. The trusted
// model is sent everything.
func TestSpansInPanes(t *testing.T) {
	st := openStore(t, t.TempDir())
	sid := seedSpans(t, st)
	m := New(fixtureConfig(t, st, "demo/limited"))
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 160, Height: 45})
	for m.counter.busy || m.counter.get(countKey{sid, "demo/limited"}) == nil {
		if c := m.counter.next(m.c.ctxs, m.c.store, m.c.pol, m.c.model, m.countJobs()); c != nil {
			drive(m, c())
		} else {
			break
		}
	}
	drive(m, keys("G")...)
	view := m.View()
	plain := unmarked(view)
	for _, want := range []string{
		"The token is [Content from /demo/.env filtered",
		"GITHUB_TOKEN=[Secret filtered (github-pat)",
		"◆ 1 placeholder",
		"✗ 1 span withheld",
	} {
		if !strings.Contains(plain, want) && !strings.Contains(view, want) {
			t.Fatalf("the panes lack %q:\n%s", want, view)
		}
	}
	if strings.Count(view, "[Content from /demo/.env filtered") != 2 || !strings.Contains(view, "✖ → Edit") {
		t.Fatalf("the quote and the edit's input are not both replaced, marked:\n%s", view)
	}
	if strings.Count(view, "✖ ") < 3 {
		t.Fatalf("placeholder lines are not marked ✖:\n%s", view)
	}
	for _, line := range strings.Split(view, "\n") {
		if i := strings.Index(line, "The token is "+spanToken); i >= 0 && !strings.Contains(line[:i], "✗ ") {
			t.Fatalf("the stored quote is not marked ✗: %q", line)
		}
	}
	if strings.Count(view, spanPAT) != 1 || strings.Count(view, "The token is "+spanToken) != 1 {
		t.Fatalf("a credential or quote shows on the sent side too:\n%s", view)
	}
	status := m.statusLine()
	if !strings.Contains(status, "2 derived") || !strings.Contains(status, "1 secret") {
		t.Fatalf("status line %q", status)
	}
	// n walks the messages with placeholders inside them as well.
	drive(m, keys("g", "n", "n")...)
	if m.tr.sel != uint64(3+pageSize*2+1) {
		t.Fatalf("n, n walked to #%d, want the quote #%d", m.tr.sel, 3+pageSize*2+1)
	}
	drive(m, keys("e")...)
	if d, ok := m.dialog.(*explainDialog); !ok || !strings.Contains(strings.Join(d.lines(120), "\n"), "derived from /demo/.env") {
		t.Fatalf("e does not explain the derived placeholder: %v", m.View())
	}
	drive(m, keys("esc")...)

	// The credentials were scanned once and kept beside the messages.
	n := 0
	st.ScanRecords(sid, 1, 1<<30, func(uint64, []byte) error { n++; return nil })
	if h, _ := st.Get(sid); n != int(h.Count) {
		t.Fatalf("%d scan records for %d messages", n, h.Count)
	}
	msgs, _, _ := st.Range(sid, 1, 1<<30)
	if _, stats, _ := secrets.Lookup(st, sid, msgs); stats.Scanned != 0 {
		t.Fatalf("a later lookup scanned %d messages again", stats.Scanned)
	}

	trusted := New(fixtureConfig(t, st, "demo/trusted"))
	drive(trusted, trusted.Init()())
	drive(trusted, tea.WindowSizeMsg{Width: 160, Height: 45})
	drive(trusted, keys("G")...)
	if v := trusted.View(); strings.Count(v, spanPAT) != 2 || strings.Contains(v, "filtered") {
		t.Fatalf("the trusted model is not sent everything:\n%s", v)
	}
}

// TestWritingCallInPanes: an edit of a file the limited tier may not read
// keeps its call and its path in the sent pane, its strings replaced by
// the file's placeholder on ✖ lines; the stored pane marks the path ✗,
// and e explains what was replaced.
func TestWritingCallInPanes(t *testing.T) {
	st := openStore(t, t.TempDir())
	h, err := st.Create(session.Header{Title: "Rotate the token"})
	if err != nil {
		t.Fatal(err)
	}
	edit := call("c1", "Edit", map[string]any{"file_path": "/demo/.env", "old_string": "API_TOKEN=" + spanToken, "new_string": "API_TOKEN=rotated-4242"}, "")
	edit.Parts[0].SourcePath = "/demo/.env"
	edit.SyncSourcePaths()
	msgs := []*session.Message{text(session.RoleUser, "Rotate the token"), edit, result("c1", "edit", "/demo/.env", "The file /demo/.env has been updated.")}
	for i, m := range msgs {
		m.CreatedAt = fixtureTime.Add(time.Duration(i) * time.Second)
	}
	if err := st.Append(h.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	m := New(fixtureConfig(t, st, "demo/limited"))
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 160, Height: 45})
	drive(m, keys("g", "j")...)
	view := m.View()
	if strings.Count(view, spanToken) != 1 || strings.Count(view, `"new_string":"API_TOKEN=`) != 1 { // the stored side's
		t.Fatalf("the edit's strings show on the sent side:\n%s", view)
	}
	for _, want := range []string{"✖ → Edit {\"file_path\":\"/demo/.env\",", "└ ✗ /demo/.env"} {
		if !strings.Contains(unmarked(view), want) && !strings.Contains(view, want) {
			t.Fatalf("the panes lack %q:\n%s", want, view)
		}
	}
	drive(m, keys("e")...)
	d, ok := m.dialog.(*explainDialog)
	if !ok || !strings.Contains(strings.Join(d.lines(120), "\n"), "filtered /demo/.env  2 strings of a call that writes it") {
		t.Fatalf("e does not explain the call's placeholders: %v", m.View())
	}
}
