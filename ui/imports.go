package ui

import (
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/internal/watch"
	"github.com/scrim-dev/scrim/session"
)

// Transcripts written while scrim is open are imported in the background
// (internal/watch, started by the CLI); its reports come here as
// importMsgs. The status line says what is being imported and what was;
// sessions that changed are listed again, and the open one is read again.

// importMsg is one report of the background import.
type importMsg struct{ ev watch.Event }

// waitImport waits for the next report; a closed channel ends the wait.
func waitImport(ch <-chan watch.Event) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return nil
		}
		return importMsg{ev}
	}
}

// imported takes a report: the status line, then the list and the open
// session when the report's file changed sessions.
func (m *Model) imported(ev watch.Event) tea.Cmd {
	m.importStatus(ev)
	if len(ev.Changed) == 0 && len(ev.Parents) == 0 && len(ev.Subagents) == 0 {
		return nil
	}
	// Counts go back to the first message that may have changed: an
	// import revises the last message it wrote when that turn grew.
	for _, sid := range ev.Changed {
		if from, ok := ev.From[sid]; ok {
			m.counter.rewind(sid, from)
		}
	}
	// A subagent's session changed: what its parents withhold did too
	// (for a tier with derived = "redact"), from their first message.
	for _, sid := range ev.Parents {
		m.counter.rewind(sid, 1)
		m.c.ctxs.Forget(sid)
	}
	// Their subagents' figures rest on them up to the subagents' end: a
	// count kept at the same scope is read back, not made again.
	for _, sid := range ev.Subagents {
		m.counter.rewind(sid, 1)
	}
	m.syncRedacted()
	cmds := []tea.Cmd{m.loadSessions()}
	if m.tr.sid != "" && (slices.Contains(ev.Changed, m.tr.sid) || slices.Contains(ev.Parents, m.tr.sid) || slices.Contains(ev.Subagents, m.tr.sid)) {
		cmds = append(cmds, m.reloadOpen())
	}
	return tea.Batch(cmds...)
}

// importStatus puts ev in the status line: "importing 3 files…" while a
// pass runs, then what it imported and the first failure. A pass that
// imported nothing and failed nowhere (a file touched, a half-written
// line) leaves the status line as it was before the pass.
func (m *Model) importStatus(ev watch.Event) {
	switch {
	case ev.Files == 0:
		if ev.Err != nil {
			m.setStatus(oneLine(ev.Err), true)
		}
		return
	case !ev.Finished:
		if m.status != m.importing || m.importing == "" {
			m.beforeImport, m.beforeFailed = m.status, m.failed
		}
		s := "importing " + plural(ev.Files, "file", "files") + "…"
		if ev.Done > 0 {
			s += " (" + plural(ev.Done, "done", "done") + ")"
		}
		m.importing = s
		m.setStatus(s, false)
		return
	}
	shown := m.status == m.importing
	m.importing = ""
	if ev.Messages == 0 && ev.Err == nil {
		if shown {
			m.setStatus(m.beforeImport, m.beforeFailed)
		}
		return
	}
	imported := "imported " + plural(ev.Messages, "message", "messages") + " into " + plural(ev.Sessions, "session", "sessions")
	if ev.Err == nil {
		m.setStatus(imported, false)
		return
	}
	// The failure first: it is what a narrow status line must not cut.
	// The importer's errors read "import FILE: why".
	why := oneLine(ev.Err)
	s := "cannot import: " + why
	if rest, ok := strings.CutPrefix(why, "import "); ok {
		s = "cannot import " + rest
	}
	if ev.Failed > 1 {
		s = plural(ev.Failed, "file", "files") + " not imported; the first: " + s
	}
	if ev.Messages > 0 {
		s += " · " + imported
	}
	m.setStatus(s, true)
}

// reloadedMsg is the open session's header read again after the
// background import changed it.
type reloadedMsg struct {
	sid  string
	head session.Header
}

func (m *Model) reloadOpen() tea.Cmd {
	st, sid := m.c.store, m.tr.sid
	return func() tea.Msg {
		h, err := st.Get(sid)
		if err != nil {
			return nil // deleted: the list, read again, says so
		}
		return reloadedMsg{sid: sid, head: h}
	}
}

// reload reads again every loaded page of the open session, which an
// import may have added to or revised (a turn's further blocks, a call's
// late result), keeping them on screen until the new ones come; a view
// that was at the end follows the new end, any other stays put.
func (t *transcript) reload(sid string, h session.Header) tea.Cmd {
	if sid != t.sid || h.Count < t.count {
		return nil
	}
	last, _ := t.last()
	atEnd := t.sel == 0 || t.sel == last
	// The short last page has no entries for the new messages: they show
	// as loading until it comes again.
	t.count, t.title = h.Count, h.Title
	t.gen++ // loads in flight may predate the import
	t.loading = map[uint64]bool{}
	t.failed = map[uint64]*pageFailure{}
	t.building = ""
	var cmds []tea.Cmd
	for idx := range t.pages {
		t.loading[idx] = true
		cmds = append(cmds, loadPage(t.c.ctxs, t.c.store, t.c.pol, t.sid, t.gen, idx, t.c.model))
	}
	if atEnd && !t.hide && t.count > 0 {
		t.follow = true
		t.end()
	}
	return tea.Batch(cmds...)
}
