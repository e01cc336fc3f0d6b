package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
)

// bigSession appends n messages shaped like an agent's work: prompts,
// answers, tool calls, file reads (one in ten from secrets/) and greps over
// three files. About 40% of the messages carry sourcePaths. They are
// written as `scrim import` writes a transcript: in one import, which
// scans them for credentials as it goes (session.Store.ScanOnImport).
func bigSession(t testing.TB, st *session.Store, n int) string {
	t.Helper()
	st.ScanOnImport(secrets.Record) // as scrim's own store does
	b, err := st.BeginBulk()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Cancel()
	id, err := b.NewSession(session.Header{Title: fmt.Sprintf("A long session (%d messages)", n)})
	if err != nil {
		t.Fatal(err)
	}
	code := func(i int) string {
		var b strings.Builder
		for l := 1; l <= 12; l++ {
			fmt.Fprintf(&b, "%6d\tfunc step%d_%d(x int) int { return x*%d + %d }\n", l, i, l, l, i%97)
		}
		return b.String()
	}
	path := func(i int) string {
		if i%10 == 7 {
			return fmt.Sprintf("/demo/secrets/key%d.pem", i%50)
		}
		return fmt.Sprintf("/demo/src/pkg%d/file%d.go", i%40, i%125)
	}
	base := fixtureTime.Add(-48 * time.Hour)
	for i := 0; i < n; i++ {
		var m *session.Message
		switch i % 5 {
		case 0:
			m = text(session.RoleUser, fmt.Sprintf("Step %d: look at the next file and tell me what it does.", i))
		case 1:
			m = call(fmt.Sprintf("c%d", i), "read", map[string]any{"path": path(i + 1)}, "Reading it.")
		case 2:
			m = result(fmt.Sprintf("c%d", i-1), "read", path(i), code(i))
		case 3:
			m = text(session.RoleAssistant, fmt.Sprintf("Step %d: the file defines small arithmetic helpers.\nNothing in it touches the network or the disk.\nNext I will search for callers.", i))
		case 4:
			m = result("", "grep",
				path(i), path(i)+":3:\tstep(3)",
				path(i+7), path(i+7)+":9:\treturn step(x)",
				path(i+13), path(i+13)+":1:package pkg")
		}
		m.CreatedAt = base.Add(time.Duration(i) * time.Second)
		if err := b.Add(id, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	// Updated now, not at its last message's time: the most recent
	// session, which the TUI opens at start.
	if _, err := st.Update(id, func(*session.Header) {}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestBigSessionPaging scrolls a session many pages long from end to end
// and checks what a person would: the screen is always full, the current
// message is always on it, every message comes by in order, and the
// whole-session counts equal one Build over all messages.
func TestBigSessionPaging(t *testing.T) {
	st := openStore(t, t.TempDir())
	sid := bigSession(t, st, 3000)
	m := New(fixtureConfig(t, st, "demo/limited"))
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	if m.tr.sid != sid || m.tr.count != 3000 {
		t.Fatalf("open session %s with %d messages", m.tr.sid, m.tr.count)
	}
	if m.tr.sel != 3000 {
		t.Fatalf("a session opens at its end; current #%d", m.tr.sel)
	}
	full := func(when string) {
		t.Helper()
		if n := len(m.tr.view()); n != m.tr.height {
			t.Fatalf("%s: %d rows on screen, want %d", when, n, m.tr.height)
		}
		if pos, ok := m.tr.relPos(m.tr.sel); !ok || pos >= m.tr.height || pos+m.tr.heightOf(m.tr.sel) <= 0 {
			t.Fatalf("%s: current #%d is off screen", when, m.tr.sel)
		}
		if strings.Contains(strings.Join(m.tr.view(), "\n"), "loading…") {
			t.Fatalf("%s: rows still loading after their pages were read", when)
		}
	}
	full("open")
	drive(m, keyMsg("g"))
	full("g")
	if m.tr.sel != 1 || m.tr.top != (anchor{1, 0}) {
		t.Fatalf("g: current #%d top %+v", m.tr.sel, m.tr.top)
	}
	prev := m.tr.sel
	for steps := 0; m.tr.sel < 3000; steps++ {
		drive(m, keyMsg("j"))
		full("j")
		if m.tr.sel != prev && m.tr.sel != prev+1 {
			t.Fatalf("j skipped from #%d to #%d", prev, m.tr.sel)
		}
		prev = m.tr.sel
		if steps > 20000 {
			t.Fatal("j never reached the end")
		}
	}
	for steps := 0; m.tr.sel > 1; steps++ {
		drive(m, keyMsg("pgup"))
		full("pgup")
		if steps > 5000 {
			t.Fatal("pgup never reached the top")
		}
	}
	if len(m.tr.pages) > maxPages {
		t.Fatalf("%d pages in memory, limit %d", len(m.tr.pages), maxPages)
	}

	msgs, _, err := st.Messages(sid)
	if err != nil {
		t.Fatal(err)
	}
	req := runner.Build(msgs, sid, "demo/limited", m.c.pol)
	c := m.counter.get(countKey{sid, "demo/limited"})
	if c == nil || c.Upto != 3000 {
		t.Fatalf("counts not complete: %+v", c)
	}
	if len(c.Redacted) != req.Report.RedactedMessages || len(c.Denied) != len(req.Report.DeniedPaths) || c.Unknown != req.Report.UnknownSource {
		t.Fatalf("chunked counts %d redacted, %d denied, %d unknown; one Build says %d, %d, %d",
			len(c.Redacted), len(c.Denied), c.Unknown, req.Report.RedactedMessages, len(req.Report.DeniedPaths), req.Report.UnknownSource)
	}
	want := fmt.Sprintf("%d of 3000 messages redacted · %d paths denied", len(c.Redacted), len(c.Denied))
	if !strings.Contains(m.statusLine(), want) {
		t.Fatalf("status %q lacks %q", m.statusLine(), want)
	}

	// n walks the redactions in order across pages, each at the top.
	drive(m, keyMsg("g"))
	for i, seq := range c.Redacted[:40] {
		drive(m, keyMsg("n"))
		if m.tr.sel != seq || m.tr.top.seq != seq {
			t.Fatalf("n #%d: current #%d (top #%d), want #%d", i+1, m.tr.sel, m.tr.top.seq, seq)
		}
		if !strings.Contains(m.statusLine(), fmt.Sprintf("redaction %d/%d", i+1, len(c.Redacted))) {
			t.Fatalf("status %q", m.statusLine())
		}
	}
}

// TestMakeBigStore writes the benchmarks' 100,000-message session to the
// folder in $SCRIM_BIG_STORE (and the fixture policy next to it), to try
// the TUI on it by hand and to measure a real process:
//
//	SCRIM_BIG_STORE=/tmp/big go test ./ui -run TestMakeBigStore
//	scrim --store /tmp/big/store --policy /tmp/big/policy.toml
func TestMakeBigStore(t *testing.T) {
	dir := os.Getenv("SCRIM_BIG_STORE")
	if dir == "" {
		t.Skip("set SCRIM_BIG_STORE to a folder to write the big session there")
	}
	st, err := session.OpenToImport(filepath.Join(dir, "store")) // as scrim import does
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bigSession(t, st, int(bigN))
	if _, err := st.Settle(time.Minute); err != nil { // as scrim import leaves a store
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.toml"), []byte(fixturePolicy), 0o644); err != nil {
		t.Fatal(err)
	}
}
