package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/scrim-dev/scrim/internal/watch"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// watching runs a real watcher of root (Claude Code transcripts) on st and
// returns its reports; it stops when t ends.
func watching(t *testing.T, st *session.Store, root string) <-chan watch.Event {
	t.Helper()
	w := watch.New(st, []watch.Root{{Agent: claude.Agent, Dir: root, Factory: claude.New}})
	w.Debounce = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		for range w.Events() {
		}
		<-stopped
	})
	return w.Events()
}

// openWatched opens scrim with model active on st, whose folder root a
// real watcher (watching) imports into, at 120x40.
func openWatched(t *testing.T, st *session.Store, model string) (m *Model, root string, ch <-chan watch.Event) {
	t.Helper()
	root = t.TempDir()
	ch = watching(t, st, root)
	m = New(fixtureConfig(t, st, model))
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	return m, root, ch
}

// pump hands the watcher's reports to m, as the program does, until a
// finished pass leaves done true; it returns the status line after each
// report.
func pump(t *testing.T, m *Model, ch <-chan watch.Event, done func() bool) []string {
	t.Helper()
	var statuses []string
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-ch:
			drive(m, importMsg{ev})
			statuses = append(statuses, m.status)
			if ev.Err != nil {
				t.Fatalf("import failed: %v", ev.Err)
			}
			if ev.Finished && done() {
				return statuses
			}
		case <-deadline:
			t.Fatalf("no finished import; statuses %q", statuses)
		}
	}
}

// transcript returns a generated Claude Code transcript of turns turns
// (5 messages each), split in lines.
func transcriptLines(t *testing.T, id string, turns int) [][]byte {
	t.Helper()
	var buf bytes.Buffer
	for i := 0; i < turns; i++ {
		if _, err := importtest.WriteClaude(&buf, 1, importtest.ClaudeOptions{SessionID: id, FirstTurn: i}); err != nil {
			t.Fatal(err)
		}
	}
	return bytes.SplitAfter(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
}

func appendLines(t *testing.T, file string, lines [][]byte) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(bytes.Join(lines, nil)); err != nil { // one write: one pass
		t.Fatal(err)
	}
}

// A transcript written while scrim is open shows up in the list, and the
// status line says what is imported; the open session stays open.
func TestWatchedImportListsTheNewSession(t *testing.T) {
	st := openStore(t, t.TempDir())
	seedFixture(t, st)
	m, root, ch := openWatched(t, st, "demo/limited")
	open := m.tr.sid
	appendLines(t, filepath.Join(root, "new.jsonl"), transcriptLines(t, "new", 1))
	statuses := pump(t, m, ch, func() bool { return len(m.list.headers()) == 3 })
	if statuses[0] != "importing 1 file…" {
		t.Errorf("first status %q, want importing 1 file…", statuses[0])
	}
	if last := statuses[len(statuses)-1]; last != "imported 5 messages into 1 session" {
		t.Errorf("last status %q", last)
	}
	var titles []string
	for _, h := range m.list.headers() {
		titles = append(titles, h.Title)
	}
	if all := strings.Join(titles, " | "); len(titles) != 3 || !strings.Contains(all, "Step 0: look at") || !strings.Contains(all, "Tour of the project") {
		t.Fatalf("list %q: want the imported session and the fixture's two", titles)
	}
	if !strings.Contains(m.list.view(false, m.counter.version), "Step 0: look at") {
		t.Fatalf("the list does not show the new session:\n%s", m.list.view(false, m.counter.version))
	}
	if m.tr.sid != open {
		t.Fatalf("the open session changed to %s", m.tr.sid)
	}
	if !strings.Contains(m.View(), "imported 5 messages into 1 session") {
		t.Fatalf("status line not on screen:\n%s", m.View())
	}
}

// The open session at its end follows the messages an import adds; one
// scrolled up stays where it is.
func TestWatchedImportFollowsTheOpenSession(t *testing.T) {
	st := openStore(t, t.TempDir())
	m, root, ch := openWatched(t, st, "demo/trusted")
	file := filepath.Join(root, "live.jsonl")
	lines := transcriptLines(t, "live", 3) // 3 turns of 8 lines, 5 messages each
	appendLines(t, file, lines[:8])
	pump(t, m, ch, func() bool { return m.tr.count == 5 })
	if m.tr.sid == "" || m.tr.count != 5 {
		t.Fatalf("open session %q with %d messages, want the imported one with 5", m.tr.sid, m.tr.count)
	}
	drive(m, keyMsg("tab")) // to the panes
	if m.focus != focusPanes || m.tr.sel != 5 {
		t.Fatalf("focus %d, current #%d: want the panes at the end (#5)", m.focus, m.tr.sel)
	}

	appendLines(t, file, lines[8:16])
	statuses := pump(t, m, ch, func() bool { return m.tr.count == 10 })
	if m.tr.count != 10 || m.tr.sel != 10 {
		t.Fatalf("after the second turn: %d messages, current #%d; want the view to follow to #10", m.tr.count, m.tr.sel)
	}
	if _, last := m.tr.visible(); last != 10 {
		t.Fatalf("last visible #%d, want #10", last)
	}
	if got := stripped(strings.Join(m.tr.rows(6), "\n")); !strings.Contains(got, "Step 1: look at") {
		t.Fatalf("#6 is not the new prompt: %s", got)
	}
	if !strings.Contains(m.View(), "#10 tool bash") {
		t.Fatalf("the new end is not on screen:\n%s", m.View())
	}
	if s := statuses[len(statuses)-1]; s != "imported 5 messages into 1 session" {
		t.Fatalf("status %q", s)
	}

	drive(m, keyMsg("g"))
	appendLines(t, file, lines[16:])
	pump(t, m, ch, func() bool { return m.tr.count == 15 })
	if m.tr.count != 15 || m.tr.sel != 1 || m.tr.top.seq != 1 {
		t.Fatalf("scrolled to the top: %d messages, current #%d, top #%d; want 15, and the view where it was", m.tr.count, m.tr.sel, m.tr.top.seq)
	}
	if !strings.Contains(m.statusLine(), "#1/15") {
		t.Fatalf("status line %q", m.statusLine())
	}
}

func stripped(s string) string { return strings.Join(strings.Fields(unmarked(s)), " ") }

// What the status line says about the background import, pass by pass.
func TestImportStatusTexts(t *testing.T) {
	bad := errors.New("import /w/evil\x1b[2J.jsonl: read: input/output error\nsecond line")
	cases := []struct {
		name   string
		events []watch.Event
		want   string
		failed bool
	}{
		{"starting", []watch.Event{{Files: 3}}, "importing 3 files…", false},
		{"one file", []watch.Event{{Files: 1}}, "importing 1 file…", false},
		{"under way", []watch.Event{{Files: 3}, {Files: 3, Done: 1, Messages: 4, Sessions: 1}}, "importing 3 files… (1 done)", false},
		{"done", []watch.Event{{Files: 3}, {Files: 3, Done: 3, Messages: 12, Sessions: 2, Finished: true}}, "imported 12 messages into 2 sessions", false},
		{"one message", []watch.Event{{Files: 1}, {Files: 1, Done: 1, Messages: 1, Sessions: 1, Finished: true}}, "imported 1 message into 1 session", false},
		{"nothing new keeps what was there", []watch.Event{
			{Files: 1}, {Files: 1, Done: 1, Messages: 2, Sessions: 1, Finished: true},
			{Files: 1}, {Files: 1, Done: 1, Finished: true},
		}, "imported 2 messages into 1 session", false},
		{"a failure", []watch.Event{{Files: 1}, {Files: 1, Done: 1, Failed: 1, Err: bad, Finished: true}},
			"cannot import /w/evil␛[2J.jsonl: read: input/output error second line", true},
		{"failures and messages", []watch.Event{{Files: 4}, {Files: 4, Done: 4, Messages: 7, Sessions: 2, Failed: 2, Err: bad, Finished: true}},
			"2 files not imported; the first: cannot import /w/evil␛[2J.jsonl: read: input/output error second line · imported 7 messages into 2 sessions", true},
		{"another failure", []watch.Event{{Files: 1}, {Files: 1, Done: 1, Failed: 1, Err: errors.New("/w/x.jsonl looks binary"), Finished: true}},
			"cannot import: /w/x.jsonl looks binary", true},
		{"the watch itself", []watch.Event{{Err: errors.New("cannot watch /w/p: no space left on device (too many folders: raise fs.inotify.max_user_watches)")}},
			"cannot watch /w/p: no space left on device (too many folders: raise fs.inotify.max_user_watches)", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := ready(t, "demo/limited", 120, 40)
			for _, ev := range c.events {
				drive(m, importMsg{ev})
			}
			if m.status != c.want || m.failed != c.failed {
				t.Fatalf("status %q (failed %v)\nwant   %q (failed %v)", m.status, m.failed, c.want, c.failed)
			}
			if strings.Contains(m.View(), "\x1b") {
				t.Fatalf("an escape reached the screen")
			}
		})
	}
}

// The frames of an import, as the user sees them: under way, then done
// with a failure (one line, inert), at 120×40 and 80×24.
func TestGoldenImportStatus(t *testing.T) {
	bad := errors.New("import /home/dev/.claude/projects/x/evil\x1b]0;pwned\x07.jsonl: read: input/output error")
	for _, size := range []struct {
		name string
		w, h int
	}{{"120x40", 120, 40}, {"80x24", 80, 24}} {
		t.Run(size.name, func(t *testing.T) {
			m := ready(t, "demo/limited", size.w, size.h)
			drive(m, importMsg{watch.Event{Files: 3}}, importMsg{watch.Event{Files: 3, Done: 1, Messages: 4, Sessions: 1}})
			importing := m.View()
			drive(m, importMsg{watch.Event{Files: 3, Done: 3, Messages: 12, Sessions: 2, Failed: 1, Err: bad, Finished: true}})
			done := m.View()
			for _, f := range []string{importing, done} {
				if strings.ContainsAny(f, "\x1b\x07") || len(strings.Split(f, "\n")) != size.h {
					t.Fatalf("frame corrupt:\n%s", f)
				}
			}
			golden.RequireEqual(t, []byte(importing+"\n---\n"+done))
		})
	}
}

// The welcome screen says which folders are watched.
func TestWelcomeNamesWatchedFolders(t *testing.T) {
	st := openStore(t, t.TempDir())
	cfg := fixtureConfig(t, st, "demo/limited")
	cfg.Watching = []string{"/w/.claude/projects", "/w/.codex/sessions"}
	m := New(cfg)
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	if got := stripped(m.View()); !strings.Contains(got, "Watching /w/.claude/projects, /w/.codex/sessions: transcripts written there appear here as they are written. q quits.") {
		t.Fatalf("welcome:\n%s", m.View())
	}
}

// An import that revises a message already counted (a turn whose next
// block, a tool call with a credential in it, came in a later pass) makes
// the counts go back to it: the footer and n/N know it is redacted.
func TestWatchedImportRecountsARevisedTurn(t *testing.T) {
	st := openStore(t, t.TempDir())
	m, root, ch := openWatched(t, st, "demo/limited") // secrets = "redact"
	line := func(typ, uuid string, msg map[string]any) []byte {
		b, err := json.Marshal(map[string]any{"type": typ, "uuid": uuid, "sessionId": "rev", "cwd": "/demo",
			"timestamp": "2025-03-14T09:00:00.000Z", "message": msg})
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	assistant := func(uuid string, block map[string]any) []byte {
		return line("assistant", uuid, map[string]any{"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{block}})
	}
	file := filepath.Join(root, "rev.jsonl")
	appendLines(t, file, [][]byte{
		line("user", "u1", map[string]any{"role": "user", "content": "Deploy it."}),
		assistant("a1", map[string]any{"type": "text", "text": "Deploying."}),
	})
	pump(t, m, ch, func() bool { return m.tr.count == 2 })
	drive(m, keyMsg("tab"))
	if s := m.statusLine(); !strings.Contains(s, "0 of 2 messages redacted") {
		t.Fatalf("before the tool call: %q", s)
	}
	appendLines(t, file, [][]byte{assistant("a2", map[string]any{"type": "tool_use", "id": "t1", "name": "Bash",
		"input": map[string]any{"command": "GITHUB_TOKEN=ghp_R9bX2kQm7LpZ4vT8nW1cY6dF3hJ5sA0eG2uI ./deploy"}})})
	pump(t, m, ch, func() bool {
		c := m.counter.get(countKey{m.tr.sid, m.c.model})
		return c != nil && c.Upto == 2 && len(c.Redacted) == 1
	})
	if s := m.statusLine(); !strings.Contains(s, "1 of 2 messages redacted") || !strings.Contains(s, "1 secret") {
		t.Fatalf("after the revision: %q", s)
	}
	_, e := m.tr.entry(2)
	if e == nil || e.sent == nil {
		t.Fatal("#2 is not loaded with its sent side")
	}
	sent, _ := json.Marshal(e.sent.Parts)
	if !strings.Contains(string(sent), "[Secret filtered (github-pat)") || strings.Contains(string(sent), "ghp_R9bX") {
		t.Fatalf("the sent pane has the revised turn unredacted: %s", sent)
	}
}

// Counts that go back to a message and count on from there end as a
// count from scratch does.
func TestCountsRewind(t *testing.T) {
	st := openStore(t, t.TempDir())
	_, hunt := seedFixture(t, st)
	var msgs []*session.Message
	for i := 0; i < 2500; i++ {
		switch i % 3 {
		case 0:
			msgs = append(msgs, call("c"+strconv.Itoa(i), "read", map[string]any{"path": ".env"}, ""))
		case 1:
			msgs = append(msgs, result("c"+strconv.Itoa(i-1), "read", "/demo/.env", "API_KEY=sk-demo-4f9a2c"))
		default:
			msgs = append(msgs, text(session.RoleAssistant, "ok"))
		}
	}
	if err := st.Append(hunt, msgs...); err != nil {
		t.Fatal(err)
	}
	figures := func(m *Model) string {
		c := m.counter.get(countKey{hunt, m.c.model})
		if c == nil {
			return "none"
		}
		return fmt.Sprintf("upto %d, %d redacted (last %v), %d unknowns, %d denied, unknown %d, sent %d, derived %d, secrets %d",
			c.Upto, len(c.Redacted), c.Redacted[len(c.Redacted)-1], len(c.Unknowns), len(c.Denied), c.Unknown, c.Sent, c.Derived, c.Secrets)
	}
	fresh := New(fixtureConfig(t, st, "demo/limited"))
	drive(fresh, fresh.Init()())
	drive(fresh, tea.WindowSizeMsg{Width: 120, Height: 40})
	want := figures(fresh)
	if !strings.HasPrefix(want, "upto 2509, ") {
		t.Fatalf("not counted whole: %s", want)
	}
	for _, from := range []uint64{1, 1024, 1025, 2000, 2509} {
		fresh.counter.rewind(hunt, from)
		if c := fresh.counter.get(countKey{hunt, "demo/limited"}); c != nil && c.Upto >= from {
			t.Fatalf("rewind to %d left %d counted", from, c.Upto)
		}
		drive(fresh, tea.WindowSizeMsg{Width: 120, Height: 40}) // any message: the counting goes on
		if got := figures(fresh); got != want {
			t.Fatalf("after going back to #%d:\n got  %s\n want %s", from, got, want)
		}
	}
}

// Opened on an empty store, scrim has no model; when the watch imports the
// first session, that session's model becomes active, as it would have at
// the start, and the sent pane shows what it is sent (it had said that
// every message was missing from the request).
func TestFirstWatchedSessionBringsItsModel(t *testing.T) {
	st := openStore(t, t.TempDir())
	m, root, ch := openWatched(t, st, "")
	if m.c.model != "" {
		t.Fatalf("an empty store made up model %q", m.c.model)
	}
	appendLines(t, filepath.Join(root, "first.jsonl"), transcriptLines(t, "first", 1))
	pump(t, m, ch, func() bool { return len(m.list.headers()) == 1 })
	want := m.list.headers()[0].LastModel
	if want == "" || m.c.model != want {
		t.Fatalf("active model %q, want the imported session's %q", m.c.model, want)
	}
	drive(m, keyMsg("enter"))
	deadline := time.Now().Add(20 * time.Second)
	for v := m.View(); strings.Contains(v, "missing from the request") || !strings.Contains(v, "Sent to "+want); v = m.View() {
		if time.Now().After(deadline) {
			t.Fatalf("the sent pane after the first import:\n%s", v)
		}
		drive(m, nil)
		time.Sleep(10 * time.Millisecond)
	}
}

// A subagent's transcript imported after its parent's changes what the
// parent withholds: the open parent's sent side and counts take in what the
// subagent read, without a restart. So does one imported in the same pass.
func TestWatchedSubagentRedactsItsParent(t *testing.T) {
	t.Run("later", func(t *testing.T) { watchedSubagent(t, false) })
	t.Run("same pass", func(t *testing.T) { watchedSubagent(t, true) })
}

func watchedSubagent(t *testing.T, together bool) {
	st := openStore(t, t.TempDir())
	m, root, ch := openWatched(t, st, "demo/limited") // derived = "redact", /demo/.env denied
	const value = "PURPLE-ELEPHANT-4242-ZEBRA"
	answer := "The notes say:\nLAUNCH_CODE=" + value
	n := 0
	line := func(agent string, v map[string]any) []byte {
		n++
		v["uuid"], v["sessionId"], v["cwd"] = fmt.Sprintf("u%d", n), "s1", "/demo"
		v["timestamp"] = fmt.Sprintf("2025-03-14T09:00:%02d.000Z", n)
		if agent != "" {
			v["isSidechain"], v["agentId"] = true, agent
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	assistant := func(agent string, blocks ...any) []byte {
		return line(agent, map[string]any{"type": "assistant", "message": map[string]any{"id": fmt.Sprintf("m%d", n), "role": "assistant", "model": "claude-sonnet-4-5", "content": blocks}})
	}
	result := func(agent, id string, content any) []byte {
		return line(agent, map[string]any{"type": "user", "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": content}}}})
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	subagent := func() {
		must(os.MkdirAll(filepath.Join(root, "s1", "subagents"), 0o755))
		appendLines(t, filepath.Join(root, "s1", "subagents", "agent-a1.jsonl"), [][]byte{
			line("a1", map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Read .env"}}),
			assistant("a1", map[string]any{"type": "tool_use", "id": "toolu_s1", "name": "Read", "input": map[string]any{"file_path": "/demo/.env"}}),
			result("a1", "toolu_s1", "     1→LAUNCH_CODE="+value+"\n"),
			assistant("a1", map[string]any{"type": "text", "text": answer}),
		})
	}
	appendLines(t, filepath.Join(root, "s1.jsonl"), [][]byte{
		line("", map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "What is in the notes?"}}),
		assistant("", map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Task", "input": map[string]any{"prompt": "Read .env"}}),
		result("", "toolu_1", []any{map[string]any{"type": "text", "text": answer}}),
		assistant("", map[string]any{"type": "text", "text": "The launch code is " + value + "."}),
	})
	if together {
		subagent() // the parent first: scrim opens the first session it imports
	}
	pump(t, m, ch, func() bool {
		return m.tr.count == 4 && len(m.list.headers()) == map[bool]int{false: 1, true: 2}[together]
	})
	// choose selects the listed session whose title want takes, which
	// opens it, and returns its ID.
	choose := func(want func(title string) bool) string {
		t.Helper()
		for m.focus != focusList {
			drive(m, keyMsg("tab"))
		}
		for _, k := range []string{"k", "k", "j", "j", "j"} {
			if h, _ := m.list.selected(); want(h.Title) {
				break
			}
			drive(m, keyMsg(k))
		}
		h, _ := m.list.selected()
		if !want(h.Title) {
			t.Fatalf("no such session in the list (at %q)", h.Title)
		}
		return h.ID
	}
	parent := choose(func(title string) bool { return title == "What is in the notes?" })
	drive(m, keyMsg("enter")) // to the panes
	if m.tr.sid != parent || m.focus != focusPanes {
		t.Fatalf("open %s, focus %d: want the parent %s in the panes", m.tr.sid, m.focus, parent)
	}
	sentOf := func(seq uint64) string {
		t.Helper()
		_, e := m.tr.entry(seq)
		if e == nil || e.sent == nil {
			t.Fatalf("#%d is not loaded with its sent side", seq)
		}
		b, _ := json.Marshal(e.sent.Parts)
		return string(b)
	}
	if !together {
		if !strings.Contains(sentOf(4), value) {
			t.Fatalf("before the subagent is imported nothing says the value is denied: %s", sentOf(4))
		}
		subagent()
	}
	counted := func() bool {
		c := m.counter.get(countKey{parent, m.c.model})
		return len(m.list.headers()) == 2 && c != nil && c.Upto == 4 && c.Derived > 0
	}
	if !together || !counted() {
		pump(t, m, ch, counted)
	}
	if m.tr.sid != parent {
		t.Fatalf("the open session changed to %s", m.tr.sid)
	}
	placeholder := `[Content from /demo/.env filtered — trust tier \"limited\" does not have read access]`
	for _, seq := range []uint64{3, 4} {
		if s := sentOf(seq); strings.Contains(s, value) || !strings.Contains(s, placeholder) {
			t.Fatalf("#%d's sent side after the subagent's import: %s", seq, s)
		}
	}
	// e on the last message says where the file may have been read.
	drive(m, keyMsg("e"))
	d, ok := m.dialog.(*explainDialog)
	if !ok {
		t.Fatalf("e did not explain: dialog %T", m.dialog)
	}
	if got := stripped(strings.Join(d.lines(200), "\n")); !strings.Contains(got, "read in another session of this agent run, a subagent's or a parent's:") {
		t.Fatalf("the explanation does not name the subagents:\n%s", got)
	}
	drive(m, keyMsg("esc"))

	// The subagent's session deleted in scrim: the parent is counted
	// again without what it withheld.
	choose(func(title string) bool { return strings.HasPrefix(title, "subagent: ") })
	drive(m, keyMsg("d"), keyMsg("y"))
	if c := m.counter.get(countKey{parent, m.c.model}); len(m.list.headers()) != 1 || c == nil || c.Upto != 4 || c.Derived != 0 {
		t.Fatalf("after the subagent's delete: %d sessions listed, the parent's count %+v", len(m.list.headers()), c)
	}
}
