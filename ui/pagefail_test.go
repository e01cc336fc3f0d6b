package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// pager drives a model like drive, and watches its page traffic: it counts
// the reads (pageMsgs) and rebuilds (rebuildMsgs) that come back, and keeps
// the retries the transcript schedules instead of waiting for them, so a
// test delivers each one itself and nothing depends on the clock.
type pager struct {
	t        testing.TB
	m        *Model
	handled  int // messages handed to the model, to stop a loop that never settles
	reads    map[pageKey]int
	rebuilds int
	retries  []retryMsg
	delays   []time.Duration
}

type pageKey struct {
	sid string
	idx uint64
}

// maxHandled bounds a test's messages: far more than any test here needs,
// reached only when loads answer loads without end.
const maxHandled = 10000

func newPager(t testing.TB, m *Model) *pager {
	p := &pager{t: t, m: m, reads: map[pageKey]int{}}
	m.tr.after = func(d time.Duration, msg tea.Msg) tea.Cmd {
		p.retries = append(p.retries, msg.(retryMsg))
		p.delays = append(p.delays, d)
		return nil
	}
	return p
}

func (p *pager) drive(msgs ...tea.Msg) {
	for _, msg := range msgs {
		if p.handled++; p.handled > maxHandled {
			p.t.Fatalf("over %d messages: the model keeps loading (%d reads, %d rebuilds)", maxHandled, p.totalReads(), p.rebuilds)
		}
		p.note(msg)
		_, cmd := p.m.Update(msg)
		p.run(cmd)
	}
}

func (p *pager) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			p.run(c)
		}
	default:
		p.drive(msg)
	}
}

func (p *pager) note(msg tea.Msg) {
	switch msg := msg.(type) {
	case pageMsg:
		p.reads[pageKey{msg.sid, msg.idx}]++
	case rebuildMsg:
		p.rebuilds++
	}
}

func (p *pager) totalReads() int {
	n := 0
	for _, c := range p.reads {
		n += c
	}
	return n
}

// collect runs cmd without handing its messages to the model.
func collect(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, collect(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

// onScreen is the screen's rows, both panes, as one string.
func onScreen(m *Model) string { return strings.Join(m.tr.view(), "\n") }

// A page of the open session that cannot be read (the store was closed
// underneath) is not read again on every update: the status line and its
// rows say why, it is read again when its retry is due, each wait twice
// the last, and once the store is back it shows and the status clears.
func TestUnreadablePageWaitsAndSaysSo(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	sid := bigSession(t, st, 200) // pages 0–3; the end shows pages 2 and 3, 0 is read with the end
	m := New(fixtureConfig(t, st, "demo/trusted"))
	p := newPager(t, m)
	p.drive(m.Init()())
	size := tea.WindowSizeMsg{Width: 120, Height: 40}
	p.drive(size)
	if m.tr.sid != sid || m.tr.pages[1] != nil || m.tr.pages[0] == nil || m.tr.pages[2] == nil {
		t.Fatalf("setup: want the session open with page 1 (#65–#128) not read yet, its neighbours read")
	}
	page1 := pageKey{sid, 1}

	st.Close()
	_, _, want := st.Range(sid, 65, 128)
	if want == nil {
		t.Fatal("setup: a closed store should fail reads")
	}
	m.tr.jump(100)
	p.drive(size)
	if p.reads[page1] != 1 || len(p.retries) != 1 {
		t.Fatalf("page 1 read %d times, %d retries scheduled; want 1 and 1", p.reads[page1], len(p.retries))
	}
	// (1) Updates while the retry waits do not read the page again.
	p.drive(keys("j", "j", "k", "j", "k")...)
	p.drive(size, size)
	if p.reads[page1] != 1 {
		t.Fatalf("page 1 read %d times over 8 updates; want it read once until its retry", p.reads[page1])
	}
	// (2) The status line names the messages and the error; the rows say so.
	status := "cannot read messages #65–128: " + want.Error()
	if !strings.Contains(m.statusLine(), status) {
		t.Fatalf("status line %q lacks %q", m.statusLine(), status)
	}
	if got := rightPane(m); !strings.Contains(got, "#100 cannot be read: "+want.Error()) || strings.Contains(got, "loading…") {
		t.Fatalf("sent pane should say the page cannot be read:\n%s", got)
	}

	// (3) The retry reads it again; it fails again, and the next wait is
	// twice as long.
	p.drive(p.retries[0])
	if p.reads[page1] != 2 || len(p.retries) != 2 {
		t.Fatalf("after its retry page 1 read %d times, %d retries scheduled; want 2 and 2", p.reads[page1], len(p.retries))
	}
	if p.delays[0] != 500*time.Millisecond || p.delays[1] != time.Second {
		t.Fatalf("waits %v; want 500ms then 1s", p.delays)
	}
	// The first retry again is stale: the second wait is running.
	p.drive(p.retries[0])
	p.drive(keys("j")...)
	if p.reads[page1] != 2 {
		t.Fatalf("page 1 read %d times; a stale retry or an update read it again", p.reads[page1])
	}

	// (4) The store is back: the next retry reads the page, which shows,
	// and the status clears.
	m.c.store = openStore(t, dir)
	p.drive(p.retries[1])
	if p.reads[page1] != 3 || m.tr.pages[1] == nil {
		t.Fatalf("page 1 read %d times, loaded %v; want 3 and loaded", p.reads[page1], m.tr.pages[1] != nil)
	}
	if got := onScreen(m); strings.Contains(got, "cannot be read") || !strings.Contains(got, "#100 tool grep") {
		t.Fatalf("page 1 should show:\n%s", got)
	}
	if got := m.statusLine(); strings.Contains(got, "cannot read") {
		t.Fatalf("status line still reports the failure: %q", got)
	}
	if len(m.tr.failed) != 0 || len(p.retries) != 2 {
		t.Fatalf("failures %v, %d retries; want none left and no new one", m.tr.failed, len(p.retries))
	}
}

// A page failure belongs to one load of one session: opening another
// session clears it from the status line, its late retry reads nothing,
// and opening the first session again reads the page at once.
func TestPageFailureStaysWithItsSession(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	seedFixture(t, st)
	st.Now = func() time.Time { return fixtureTime.Add(time.Hour) } // the most recent: open at start
	big := bigSession(t, st, 200)
	m := New(fixtureConfig(t, st, "demo/trusted"))
	p := newPager(t, m)
	p.drive(m.Init()())
	size := tea.WindowSizeMsg{Width: 120, Height: 40}
	p.drive(size)
	if m.tr.sid != big {
		t.Fatal("setup: the long session should be open")
	}
	page1 := pageKey{big, 1}
	st.Close()
	m.tr.jump(100)
	p.drive(size)
	if p.reads[page1] != 1 || len(p.retries) != 1 || !strings.Contains(m.statusLine(), "cannot read messages #65–128") {
		t.Fatalf("setup: want one failed read of page 1 reported; reads %d, retries %d, status %q", p.reads[page1], len(p.retries), m.statusLine())
	}

	m.c.store = openStore(t, dir)
	p.drive(keys("tab", "j")...) // the list, and the next session in it
	if m.tr.sid == big || m.tr.count == 0 {
		t.Fatalf("j in the list should open another session")
	}
	if got := m.statusLine(); strings.Contains(got, "cannot read") {
		t.Fatalf("another session's status line reports the first one's failure: %q", got)
	}
	if len(m.tr.failed) != 0 {
		t.Fatalf("failures carried over: %v", m.tr.failed)
	}
	p.drive(p.retries[0])
	if p.reads[page1] != 1 {
		t.Fatalf("a retry of the first session read its page in the second")
	}

	p.drive(keys("k")...) // the long session again: a new load of it
	if m.tr.sid != big {
		t.Fatal("k in the list should open the long session again")
	}
	m.tr.jump(100)
	p.drive(size)
	if p.reads[page1] != 2 || m.tr.pages[1] == nil || len(p.retries) != 1 {
		t.Fatalf("page 1 read %d times, loaded %v, %d retries; want it read at once on the new load", p.reads[page1], m.tr.pages[1] != nil, len(p.retries))
	}
	if got := m.statusLine(); strings.Contains(got, "cannot read") {
		t.Fatalf("status line %q", got)
	}
}

// A sent side that cannot be built (the store closed between reading a
// page and gathering the fingerprints its build needs) says so in the sent
// pane and the status line instead of "computing…", and is rebuilt when
// its retry is due, not after every update.
func TestUnbuildableSentSideWaitsAndSaysSo(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	seedFixture(t, st)
	m := New(fixtureConfig(t, st, "demo/limited"))
	// No counting: it would gather the fingerprints before the page's build.
	m.background = func(tea.Cmd) {}
	p := newPager(t, m)
	p.drive(tea.WindowSizeMsg{Width: 120, Height: 40})
	_, cmd := m.Update(m.Init()())
	opened := collect(cmd) // the session's pages, read with the store open
	st.Close()
	p.drive(opened...)
	if p.rebuilds != 1 || len(p.retries) != 1 {
		t.Fatalf("%d rebuilds, %d retries; want 1 failed rebuild and its retry", p.rebuilds, len(p.retries))
	}
	p.drive(keys("j", "k", "j")...)
	if p.rebuilds != 1 {
		t.Fatalf("rebuilt %d times while the retry waits; want once", p.rebuilds)
	}
	if got := m.statusLine(); !strings.Contains(got, "cannot build what demo/limited is sent of messages #1–9: DB Closed") {
		t.Fatalf("status line %q", got)
	}
	got := strings.Join(strings.Fields(rightPane(m)), " ")
	if !strings.Contains(got, "cannot build what demo/limited is sent: DB Closed") || strings.Contains(got, "computing") {
		t.Fatalf("sent pane should say why it is missing:\n%s", got)
	}
	if !strings.Contains(onScreen(m), "Where is the API key used?") {
		t.Fatalf("the stored side should show:\n%s", onScreen(m))
	}

	m.c.store = openStore(t, dir)
	p.drive(p.retries[0])
	if p.rebuilds != 2 {
		t.Fatalf("%d rebuilds after the retry; want 2", p.rebuilds)
	}
	if got := rightPane(m); !strings.Contains(got, "[Content from /demo/.env filtered") {
		t.Fatalf("the sent side should be built:\n%s", got)
	}
	if got := m.statusLine(); strings.Contains(got, "cannot build") {
		t.Fatalf("status line still reports the failure: %q", got)
	}
	if len(m.tr.failed) != 0 {
		t.Fatalf("failures left: %v", m.tr.failed)
	}
}
