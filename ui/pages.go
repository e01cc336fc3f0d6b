package ui

import (
	"strconv"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

// A session is never loaded whole: messages come in pages of pageSize
// around the viewport, and at most maxPages stay in memory.
const (
	pageSize = 64
	maxPages = 40
)

// entry is one message of a loaded page, with what the active model is sent
// of it and its rendered rows (a cache keyed by rowKey).
type entry struct {
	seq  uint64
	msg  *session.Message // nil: the stored record could not be decoded
	sent *session.Message // from runner.Build for page.model; nil for events
	rows []string
	key  rowKey
}

// rowKey is everything a message's rendering depends on besides the message.
type rowKey struct {
	width  int
	layout paneLayout
	model  string
	built  bool
	system bool   // the system entry above message 1 is open
	mark   string // the find whose matches are marked
}

type page struct {
	idx     uint64
	stored  []session.Message // as loaded; entries point into it
	entries []entry           // entries[i].seq == idx*pageSize+i+1
	model   string            // model the sent side was built for
	used    uint64            // last use, for eviction
}

func pageOf(seq uint64) uint64 { return (seq - 1) / pageSize }

func pageBounds(idx, count uint64) (first, last uint64) {
	first = idx*pageSize + 1
	last = min(first+pageSize-1, count)
	return first, last
}

// newPage lays loaded messages out by Seq; a Seq the store could not decode
// keeps an entry without a message, so rows never shift.
func newPage(idx, count uint64, stored, hist []session.Message, model string) *page {
	first, last := pageBounds(idx, count)
	p := &page{idx: idx, stored: stored}
	if last >= first {
		p.entries = make([]entry, last-first+1)
	}
	for i := range p.entries {
		p.entries[i].seq = first + uint64(i)
	}
	for i := range stored {
		if s := stored[i].Seq; s >= first && s <= last {
			p.entries[s-first].msg = &stored[i]
		}
	}
	p.setSent(hist, model)
	return p
}

// setSent pairs Build's history (events dropped, order kept) with the
// stored messages by Seq, and drops rendered rows.
func (p *page) setSent(hist []session.Message, model string) {
	j := 0
	for i := range p.entries {
		e := &p.entries[i]
		e.sent, e.rows = nil, nil
		if e.msg == nil || e.msg.Role == session.RoleEvent {
			continue
		}
		for j < len(hist) && hist[j].Seq < e.seq {
			j++
		}
		if j < len(hist) && hist[j].Seq == e.seq {
			e.sent = &hist[j]
			j++
		}
	}
	p.model = model
}

// pageMsg brings a loaded page; sid and gen say which session (and which
// load of it) it belongs to, so a late page never lands in another session.
type pageMsg struct {
	sid   string
	gen   int
	idx   uint64
	model string // what hist was built for; "" when it was not built
	msgs  []session.Message
	hist  []session.Message
	err   error // the page could not be read: nothing of it came
	// buildErr: the stored side came, the sent side could not be built
	// for model.
	buildErr error
}

// loadPage reads one page and builds what model is sent of it: through
// runner.Build, the function that makes real requests.
func loadPage(x *tally.Contexts, st *session.Store, pol *policy.Policy, sid string, gen int, idx uint64, model string) tea.Cmd {
	return func() tea.Msg {
		return readPage(x, st, pol, sid, gen, idx, model)
	}
}

func readPage(x *tally.Contexts, st *session.Store, pol *policy.Policy, sid string, gen int, idx uint64, model string) pageMsg {
	first := idx*pageSize + 1
	msgs, _, err := st.Range(sid, first, first+pageSize-1)
	pm := pageMsg{sid: sid, gen: gen, idx: idx, model: model, msgs: msgs, err: err}
	if err == nil && !x.Ready(st, pol, sid, model) {
		// The stored side now; the sent side once the session's
		// fingerprints are gathered (rebuildStale builds it).
		pm.model = ""
		return pm
	}
	if err == nil {
		var req runner.Request
		req, pm.buildErr = x.Build(st, pol, sid, model, msgs)
		pm.hist = req.History
	}
	return pm
}

// rebuildMsg brings, after a model switch, what the new model is sent of
// each loaded page.
type rebuildMsg struct {
	sid   string
	gen   int
	model string
	hists map[uint64][]session.Message
	errs  map[uint64]error // pages whose build failed: they keep their old sent side
}

func rebuild(x *tally.Contexts, st *session.Store, pol *policy.Policy, sid string, gen int, model string, pages map[uint64][]session.Message) tea.Cmd {
	return func() tea.Msg {
		out := rebuildMsg{sid: sid, gen: gen, model: model, hists: make(map[uint64][]session.Message, len(pages))}
		for idx, msgs := range pages {
			req, err := x.Build(st, pol, sid, model, msgs)
			if err != nil {
				if out.errs == nil {
					out.errs = map[uint64]error{}
				}
				out.errs[idx] = err
				continue
			}
			out.hists[idx] = req.History
		}
		return out
	}
}

// --- pages that cannot be read or built ---

// A page whose read or build failed is tried again after a wait that
// doubles with each failure in a row, from retryFirst up to retryMax: a
// store that stays broken costs a read every half minute, not one per
// update (fetch and rebuildStale run after every message).
const (
	retryFirst = 500 * time.Millisecond
	retryMax   = 30 * time.Second
)

func retryDelay(tries int) time.Duration {
	d := retryFirst
	for i := 1; i < tries && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// pageFailure is why a page of the open session could not be read (model
// "") or its sent side built for model, and whether its wait is over.
type pageFailure struct {
	model string
	err   error
	tries int  // failures in a row; the wait after the last is retryDelay(tries)
	due   bool // the wait is over: the next fetch or rebuild tries again
}

// retryMsg ends the wait that followed a page's tries-th failure in a row.
type retryMsg struct {
	sid   string
	gen   int
	idx   uint64
	tries int
}

func tick(d time.Duration, msg tea.Msg) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return msg })
}

// failure is what holds page idx back for the active model, or nil. A
// build that failed for another model says nothing about this one's.
func (t *transcript) failure(idx uint64) *pageFailure {
	f := t.failed[idx]
	if f == nil || f.model != "" && f.model != t.c.model {
		return nil
	}
	return f
}

// waiting reports whether page idx is neither read nor built until its
// retry is due.
func (t *transcript) waiting(idx uint64) bool {
	f := t.failure(idx)
	return f != nil && !f.due
}

// fail records that page idx could not be read (model "") or built for
// model, and schedules the end of its wait.
func (t *transcript) fail(idx uint64, model string, err error) tea.Cmd {
	f := t.failed[idx]
	if f == nil || f.model != model {
		f = &pageFailure{model: model}
		t.failed[idx] = f
	}
	f.err, f.due = err, false
	f.tries++
	t.dropRows(idx) // the sent side now says why it is missing
	return t.after(retryDelay(f.tries), retryMsg{sid: t.sid, gen: t.gen, idx: idx, tries: f.tries})
}

// succeed forgets page idx's failure, if any.
func (t *transcript) succeed(idx uint64) {
	if t.failed[idx] != nil {
		delete(t.failed, idx)
		t.dropRows(idx)
	}
}

// retry ends a page's wait. A retry from another session or load of it
// finds nothing to end; one from an earlier failure finds a newer wait
// running, which it leaves alone.
func (t *transcript) retry(rm retryMsg) {
	if rm.sid != t.sid || rm.gen != t.gen {
		return
	}
	if f := t.failed[rm.idx]; f != nil && f.tries == rm.tries {
		f.due = true
	}
}

func (t *transcript) dropRows(idx uint64) {
	if p := t.pages[idx]; p != nil {
		for i := range p.entries {
			p.entries[i].rows = nil
		}
	}
}

// failureStatus is the status line's account of the pages held back: the
// first of them, and how many more; "" when there are none.
func (t *transcript) failureStatus() string {
	var first uint64
	var f *pageFailure
	n := 0
	for idx := range t.failed {
		g := t.failure(idx)
		if g == nil {
			continue
		}
		n++
		if f == nil || idx < first {
			first, f = idx, g
		}
	}
	if f == nil {
		return ""
	}
	lo, hi := pageBounds(first, t.count)
	what := "cannot read"
	if f.model != "" {
		what = "cannot build what " + inertLine(f.model) + " is sent of"
	}
	s := what + " messages #" + strconv.FormatUint(lo, 10) + "–" + strconv.FormatUint(hi, 10) + ": " + oneLine(f.err)
	if n > 1 {
		s += " (and " + plural(n-1, "more page", "more pages") + ")"
	}
	return s + " · retrying"
}

// openedMsg is a session's header with its last and first pages: enough for
// the first frame (the end of the session) and for a jump to the top.
type openedMsg struct {
	sid   string
	gen   int
	head  session.Header
	pages []pageMsg
	err   error
}

func openSession(x *tally.Contexts, st *session.Store, pol *policy.Policy, sid string, gen int, model string) tea.Cmd {
	return func() tea.Msg {
		h, err := st.Get(sid)
		if err != nil {
			return openedMsg{sid: sid, gen: gen, err: err}
		}
		out := openedMsg{sid: sid, gen: gen, head: h}
		if h.Count == 0 {
			return out
		}
		lastIdx := pageOf(h.Count)
		out.pages = append(out.pages, readPage(x, st, pol, sid, gen, lastIdx, model))
		if lastIdx > 0 {
			out.pages = append(out.pages, readPage(x, st, pol, sid, gen, 0, model))
		}
		return out
	}
}

// grow takes a longer header of the open session: the short last page is
// read again, loads in flight are dropped (they may predate the new
// messages), and a view that was at the end follows the new end.
func (t *transcript) grow(g grownMsg) {
	if g.sid != t.sid || g.gen != t.gen || g.head.Count <= t.count {
		return
	}
	last, _ := t.last()
	atEnd := t.sel == 0 || t.sel == last
	if t.count > 0 {
		delete(t.pages, pageOf(t.count))
	}
	t.count, t.title = g.head.Count, g.head.Title
	t.gen++
	t.loading = map[uint64]bool{}
	t.failed = map[uint64]*pageFailure{} // their retries carry the old gen
	t.building = ""
	if atEnd && !t.hide {
		t.follow = true
		t.end()
	}
}

// --- loading ---

// fetch asks for the pages the screen needs, and their neighbours, so that
// scrolling on rarely waits; it also forgets far pages.
func (t *transcript) fetch() tea.Cmd {
	if t.empty() {
		return nil
	}
	first, last := t.visible()
	if first == 0 {
		return nil
	}
	want := []uint64{}
	for idx := pageOf(first); idx <= pageOf(last); idx++ {
		want = append(want, idx)
	}
	if p := pageOf(first); p > 0 {
		want = append(want, p-1)
	}
	if p := pageOf(last); p < pageOf(t.count) {
		want = append(want, p+1)
	}
	if t.hide {
		// Changed messages can be far apart: also their pages.
		s := last
		for i := 0; i < 4; i++ {
			nx, ok := t.next(s)
			if !ok {
				break
			}
			want, s = append(want, pageOf(nx)), nx
		}
	}
	var cmds []tea.Cmd
	for _, idx := range want {
		if t.pages[idx] == nil && !t.loading[idx] && !t.waiting(idx) {
			t.loading[idx] = true
			cmds = append(cmds, loadPage(t.c.ctxs, t.c.store, t.c.pol, t.sid, t.gen, idx, t.c.model))
		}
	}
	t.evict(pageOf(first), pageOf(last))
	return tea.Batch(cmds...)
}

// evict drops the least recently used pages beyond maxPages, never the
// pages on screen.
func (t *transcript) evict(lo, hi uint64) {
	for len(t.pages) > maxPages {
		var victim *page
		for idx, p := range t.pages {
			if idx >= lo && idx <= hi {
				continue
			}
			if victim == nil || p.used < victim.used {
				victim = p
			}
		}
		if victim == nil {
			return
		}
		delete(t.pages, victim.idx)
	}
}

// addPage stores a loaded page if it still belongs here. A page that could
// not be read, or whose sent side could not be built, is held back until
// its retry (the returned command) is due.
func (t *transcript) addPage(pm pageMsg) tea.Cmd {
	if pm.sid != t.sid || pm.gen != t.gen {
		return nil
	}
	delete(t.loading, pm.idx)
	if pm.err != nil {
		return t.fail(pm.idx, "", pm.err)
	}
	var cmd tea.Cmd
	shown := t.onScreen(t.sel)
	if pm.buildErr != nil {
		// The stored side is shown; the sent side waits for a rebuild.
		t.pages[pm.idx] = newPage(pm.idx, t.count, pm.msgs, nil, "")
		cmd = t.fail(pm.idx, pm.model, pm.buildErr)
	} else {
		t.succeed(pm.idx)
		t.pages[pm.idx] = newPage(pm.idx, t.count, pm.msgs, pm.hist, pm.model)
	}
	switch {
	case t.follow:
		t.end()
	case shown:
		t.reveal(t.sel) // the rows that came may be taller than "loading…"
	default:
		t.clampEnd()
	}
	return cmd
}

// rebuildStale starts building, for the active model, the sent side of
// loaded pages built for another model (after a switch, or pages that were
// loading during one); one rebuild at a time.
func (t *transcript) rebuildStale() tea.Cmd {
	if t.sid == "" || t.building == t.c.model {
		return nil
	}
	stale := map[uint64][]session.Message{}
	for idx, p := range t.pages {
		if p.model != t.c.model && !t.waiting(idx) {
			stale[idx] = p.stored
		}
	}
	if len(stale) == 0 {
		return nil
	}
	t.building = t.c.model
	return rebuild(t.c.ctxs, t.c.store, t.c.pol, t.sid, t.gen, t.c.model, stale)
}

// applyRebuild takes a rebuild's sent sides; pages whose build failed are
// held back until their retries (the returned command) are due.
func (t *transcript) applyRebuild(rm rebuildMsg) tea.Cmd {
	if rm.sid != t.sid || rm.gen != t.gen {
		return nil
	}
	if t.building == rm.model {
		t.building = ""
	}
	if rm.model != t.c.model {
		return nil
	}
	// Heights change with the sent side: a view at the end stays there
	// (pages shown while the session's fingerprints were gathered had none).
	last, _ := t.last()
	atEnd := t.sel != 0 && t.sel == last
	shown := t.onScreen(t.sel)
	for idx, hist := range rm.hists {
		if p := t.pages[idx]; p != nil {
			p.setSent(hist, rm.model)
			t.succeed(idx)
		}
	}
	var cmds []tea.Cmd
	for idx, err := range rm.errs {
		if t.pages[idx] != nil {
			cmds = append(cmds, t.fail(idx, rm.model, err))
		}
	}
	switch {
	case atEnd:
		t.end()
	case shown:
		// The current message was on screen: it stays there, however
		// much the rows above it grew.
		t.reveal(t.sel)
	default:
		t.clampEnd()
	}
	return tea.Batch(cmds...)
}

// onScreen reports whether message seq starts on the screen.
func (t *transcript) onScreen(seq uint64) bool {
	if seq == 0 || t.empty() {
		return false
	}
	pos, ok := t.relPos(seq)
	return ok && pos >= 0 && pos < t.height
}
