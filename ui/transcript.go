package ui

import (
	"sort"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/session"
)

// paneLayout is which panes the transcript shows.
type paneLayout int

const (
	layoutSplit paneLayout = iota // stored | sent, side by side
	layoutSent
	layoutStored
)

// anchor is the first visible line: a message and a line within it. Heights
// of messages above it are never needed, so scrolling a 100,000-message
// session costs what the visible rows cost.
type anchor struct {
	seq uint64
	off int
}

// transcript is the aligned stored | sent view of one session: one row
// block per message, both panes wrapped to their width, scrolled together.
type transcript struct {
	c     *common
	sid   string
	title string
	count uint64 // messages 1..count
	gen   int    // bumped on every (re)open, to drop late pages

	pages   map[uint64]*page
	loading map[uint64]bool
	clock   uint64

	top    anchor
	sel    uint64 // the current message (gutter mark; n/N, e act on it)
	hide   bool   // show only messages the active model does not get as stored
	layout paneLayout

	redacted []uint64 // Seqs with a placeholder for the active model (from counts)
	follow   bool     // keep the end in view as messages arrive (chat)
	building string   // model a rebuild of the sent side is running for

	width, height int // rows area, without the pane titles
}

func newTranscript(c *common) *transcript {
	return &transcript{c: c, pages: map[uint64]*page{}, loading: map[uint64]bool{}}
}

// reset empties the transcript for session sid (or none).
func (t *transcript) reset(sid string) {
	t.sid, t.title, t.count = sid, "", 0
	t.gen++
	t.pages = map[uint64]*page{}
	t.loading = map[uint64]bool{}
	t.top, t.sel = anchor{}, 0
	t.redacted = nil
	t.follow, t.building = false, ""
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
	t.building = ""
	if atEnd && !t.hide {
		t.follow = true
		t.end()
	}
}

// setSize lays the transcript out for w×h rows area and a pane layout.
// When that changes, every height changes: the current message is kept in
// view (at the end, the end stays in view).
func (t *transcript) setSize(w, h int, layout paneLayout) {
	w, h = max(w, 10), max(h, 1)
	changed := w != t.width || h != t.height || layout != t.layout
	last, _ := t.last()
	atEnd := t.sel != 0 && t.sel == last
	t.width, t.height, t.layout = w, h, layout
	switch {
	case !changed || t.empty() || t.sel == 0:
		t.clampEnd()
	case atEnd:
		t.end()
	default:
		t.reveal(t.sel)
	}
}

// reveal scrolls as little as possible to bring seq's start, and as much of
// it as fits, into view.
func (t *transcript) reveal(seq uint64) {
	pos, ok := t.relPos(seq)
	switch {
	case !ok || pos < 0:
		t.jump(seq)
	case pos+t.heightOf(seq) > t.height:
		t.scrollDown(min(pos+t.heightOf(seq)-t.height, pos))
	default:
		t.clampEnd()
	}
}

func (t *transcript) empty() bool { return t.sid == "" || t.count == 0 }

// --- the visible sequence of messages (all, or only the changed ones) ---

func (t *transcript) first() (uint64, bool) {
	if t.hide {
		if len(t.redacted) == 0 {
			return 0, false
		}
		return t.redacted[0], true
	}
	return 1, t.count > 0
}

func (t *transcript) last() (uint64, bool) {
	if t.hide {
		if len(t.redacted) == 0 {
			return 0, false
		}
		return t.redacted[len(t.redacted)-1], true
	}
	return t.count, t.count > 0
}

func (t *transcript) next(seq uint64) (uint64, bool) {
	if t.hide {
		i := sort.Search(len(t.redacted), func(i int) bool { return t.redacted[i] > seq })
		if i == len(t.redacted) {
			return 0, false
		}
		return t.redacted[i], true
	}
	return seq + 1, seq < t.count
}

func (t *transcript) prev(seq uint64) (uint64, bool) {
	if t.hide {
		i := sort.Search(len(t.redacted), func(i int) bool { return t.redacted[i] >= seq })
		if i == 0 {
			return 0, false
		}
		return t.redacted[i-1], true
	}
	return seq - 1, seq > 1
}

// --- rows and heights ---

func (t *transcript) entry(seq uint64) (*page, *entry) {
	p := t.pages[pageOf(seq)]
	if p == nil {
		return nil, nil
	}
	i := seq - p.idx*pageSize - 1
	if i >= uint64(len(p.entries)) {
		return p, nil
	}
	t.clock++
	p.used = t.clock
	return p, &p.entries[i]
}

// rows is a message's rendered lines (both panes, without the selection
// gutter), from the cache when the key still holds.
func (t *transcript) rows(seq uint64) []string {
	p, e := t.entry(seq)
	if e == nil {
		return []string{t.c.st.Dim.wrap(padTo("#"+strconv.FormatUint(seq, 10)+" loading…", t.width-1))}
	}
	key := rowKey{width: t.width, layout: t.layout, model: t.c.model, built: p.model == t.c.model}
	if e.rows == nil || e.key != key {
		e.rows, e.key = t.render(e, key.built), key
	}
	return e.rows
}

func (t *transcript) heightOf(seq uint64) int { return len(t.rows(seq)) }

func padTo(s string, w int) string {
	if n := textWidth(s); n < w {
		return s + spaces(w-n)
	}
	return s
}

// paneWidths splits the row width (minus the gutter) between the panes.
func (t *transcript) paneWidths() (left, right int) {
	inner := t.width - 1
	switch t.layout {
	case layoutStored:
		return inner, 0
	case layoutSent:
		return 0, inner
	}
	left = (inner - 3) / 2
	return left, inner - 3 - left
}

func (t *transcript) render(e *entry, built bool) []string {
	lw, rw := t.paneWidths()
	st, loc, tier := t.c.st, t.c.loc, t.c.tierLabel()
	if e.msg == nil {
		note := "#" + strconv.FormatUint(e.seq, 10) + " cannot be decoded: left out of what is shown and sent"
		return joinSides(st, wrapSegs([]seg{{text: note, ink: st.Err}}, max(lw, 1)), lw, wrapSegs([]seg{{text: note, ink: st.Err}}, max(rw, 1)), rw)
	}
	var left, right []line
	if lw > 0 {
		v := sideView{msg: e.msg, tier: tier}
		if built {
			v.denied, v.whole = withheld(e.msg, e.sent)
		}
		left = st.renderSide(v, e.seq, e.msg, lw, loc)
	}
	if rw > 0 {
		v := sideView{msg: e.sent, sent: true, tier: tier}
		switch {
		case e.msg.Role == session.RoleEvent:
			v.note = "not sent: events stay in the stored history only"
		case !built:
			v.note = "computing what " + inertLine(t.c.model) + " is sent…"
		case e.sent == nil:
			v.note = "missing from the request"
		}
		right = st.renderSide(v, e.seq, e.msg, rw, loc)
	}
	return joinSides(st, left, lw, right, rw)
}

// joinSides puts the panes' lines side by side, padding the shorter one, so
// both panes of a message start and end on the same rows.
func joinSides(st *styles, left []line, lw int, right []line, rw int) []string {
	n := max(len(left), len(right))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		if lw > 0 {
			if i < len(left) {
				b.WriteString(left[i].render(lw))
			} else {
				b.WriteString(spaces(lw))
			}
		}
		if lw > 0 && rw > 0 {
			b.WriteString(st.sep)
		}
		if rw > 0 {
			if i < len(right) {
				b.WriteString(right[i].render(rw))
			} else {
				b.WriteString(spaces(rw))
			}
		}
		out[i] = b.String()
	}
	return out
}

// --- scrolling ---

func (t *transcript) scrollDown(n int) {
	for n > 0 {
		h := t.heightOf(t.top.seq)
		if t.top.off+n < h {
			t.top.off += n
			break
		}
		n -= h - t.top.off
		nx, ok := t.next(t.top.seq)
		if !ok {
			t.top.off = h - 1
			break
		}
		t.top = anchor{nx, 0}
	}
	t.clampEnd()
}

func (t *transcript) scrollUp(n int) {
	for n > 0 {
		if t.top.off >= n {
			t.top.off -= n
			return
		}
		n -= t.top.off
		pv, ok := t.prev(t.top.seq)
		if !ok {
			t.top.off = 0
			return
		}
		t.top = anchor{pv, t.heightOf(pv)}
	}
}

// clampEnd keeps the viewport full: the last message's end never rises
// above the bottom row. It looks at no more than a screenful of rows.
func (t *transcript) clampEnd() {
	if t.empty() || t.top.seq == 0 {
		return
	}
	if h := t.heightOf(t.top.seq); t.top.off >= h {
		t.top.off = h - 1
	}
	avail, seq := t.heightOf(t.top.seq)-t.top.off, t.top.seq
	for avail < t.height {
		nx, ok := t.next(seq)
		if !ok {
			break
		}
		seq, avail = nx, avail+t.heightOf(nx)
	}
	if avail < t.height {
		t.scrollUp(t.height - avail)
	}
}

// relPos is the row of seq's first line relative to the top of the
// viewport, when seq is within about two screens of it.
func (t *transcript) relPos(seq uint64) (int, bool) {
	limit := 2 * t.height
	switch {
	case seq == t.top.seq:
		return -t.top.off, true
	case seq > t.top.seq:
		pos, s := t.heightOf(t.top.seq)-t.top.off, t.top.seq
		for pos <= limit {
			nx, ok := t.next(s)
			if !ok {
				return 0, false
			}
			if nx == seq {
				return pos, true
			}
			s, pos = nx, pos+t.heightOf(nx)
		}
	default:
		pos, s := -t.top.off, t.top.seq
		for pos >= -limit {
			pv, ok := t.prev(s)
			if !ok {
				return 0, false
			}
			pos -= t.heightOf(pv)
			if pv == seq {
				return pos, true
			}
			s = pv
		}
	}
	return 0, false
}

// down reads on: first the rest of the current message, then the next one.
func (t *transcript) down() {
	if t.empty() {
		return
	}
	if pos, ok := t.relPos(t.sel); ok && pos+t.heightOf(t.sel) > t.height {
		t.scrollDown(1)
		return
	}
	nx, ok := t.next(t.sel)
	if !ok {
		return
	}
	t.sel = nx
	t.reveal(nx)
}

// up is down's mirror: the part of the current message above, then the
// previous message (its end first when it is taller than the screen).
func (t *transcript) up() {
	if t.empty() {
		return
	}
	if pos, ok := t.relPos(t.sel); ok && pos < 0 {
		t.scrollUp(1)
		return
	}
	pv, ok := t.prev(t.sel)
	if !ok {
		return
	}
	t.sel = pv
	pos, ok := t.relPos(pv)
	if ok && pos >= 0 && pos < t.height {
		return
	}
	h := t.heightOf(pv)
	t.top = anchor{pv, max(0, h-t.height)}
	t.clampEnd()
}

func (t *transcript) pageDown() {
	before := t.top
	t.scrollDown(max(1, t.height-1))
	if t.top == before {
		if l, ok := t.last(); ok {
			t.sel = l
		}
		return
	}
	t.selectTop()
}

func (t *transcript) pageUp() {
	before := t.top
	t.scrollUp(max(1, t.height-1))
	if t.top == before {
		if f, ok := t.first(); ok {
			t.sel = f
		}
		return
	}
	t.selectTop()
}

// selectTop makes the first message whose start is visible current.
func (t *transcript) selectTop() {
	t.sel = t.top.seq
	if t.top.off > 0 {
		if nx, ok := t.next(t.top.seq); ok {
			if pos, ok := t.relPos(nx); ok && pos < t.height {
				t.sel = nx
			}
		}
	}
}

func (t *transcript) home() {
	if f, ok := t.first(); ok {
		t.jump(f)
	}
}

func (t *transcript) end() {
	l, ok := t.last()
	if !ok {
		return
	}
	t.sel = l
	t.top = anchor{l, 0}
	t.clampEnd()
}

// jump makes seq current and puts it at the top (as far as the end allows).
func (t *transcript) jump(seq uint64) {
	t.sel = seq
	t.top = anchor{seq, 0}
	t.clampEnd()
}

// --- redactions ---

// nextRedaction makes the next redacted message current, wrapping around
// at the end; wrapped says it did.
func (t *transcript) nextRedaction() (found, wrapped bool) {
	if len(t.redacted) == 0 {
		return false, false
	}
	i := sort.Search(len(t.redacted), func(i int) bool { return t.redacted[i] > t.sel })
	if i == len(t.redacted) {
		i, wrapped = 0, true
	}
	t.jump(t.redacted[i])
	return true, wrapped
}

func (t *transcript) prevRedaction() (found, wrapped bool) {
	if len(t.redacted) == 0 {
		return false, false
	}
	i := sort.Search(len(t.redacted), func(i int) bool { return t.redacted[i] >= t.sel })
	if i == 0 {
		i, wrapped = len(t.redacted), true
	}
	t.jump(t.redacted[i-1])
	return true, wrapped
}

// redactionIndex is the 1-based place of the current message among the
// redacted ones, 0 when it is not one of them.
func (t *transcript) redactionIndex() int {
	i := sort.Search(len(t.redacted), func(i int) bool { return t.redacted[i] >= t.sel })
	if i < len(t.redacted) && t.redacted[i] == t.sel {
		return i + 1
	}
	return 0
}

// setHide switches hiding unchanged messages, keeping the place as well as
// it can.
func (t *transcript) setHide(on bool) {
	t.hide = on
	if t.empty() {
		return
	}
	if on {
		i := sort.Search(len(t.redacted), func(i int) bool { return t.redacted[i] >= t.sel })
		switch {
		case len(t.redacted) == 0:
			t.top, t.sel = anchor{}, 0
			return
		case i == len(t.redacted):
			i--
		}
		t.jump(t.redacted[i])
		return
	}
	if t.sel == 0 {
		t.end()
		return
	}
	t.jump(t.sel)
}

// setRedacted takes a longer list of redacted messages from the counter.
func (t *transcript) setRedacted(seqs []uint64) {
	t.redacted = seqs
	if t.hide && t.sel == 0 && len(seqs) > 0 {
		t.jump(seqs[0])
	}
}

// --- view ---

// view is the visible rows, each with the selection gutter.
func (t *transcript) view() []string {
	out := make([]string, 0, t.height)
	if t.top.seq == 0 {
		return out
	}
	seq, off := t.top.seq, t.top.off
	for len(out) < t.height {
		rows := t.rows(seq)
		g := " "
		if seq == t.sel {
			g = t.c.st.Selected.wrap("▌")
		}
		for _, r := range rows[min(off, len(rows)):] {
			if len(out) == t.height {
				break
			}
			out = append(out, g+r)
		}
		nx, ok := t.next(seq)
		if !ok {
			break
		}
		seq, off = nx, 0
	}
	return out
}

// visible is the first and last message with a row on screen.
func (t *transcript) visible() (first, last uint64) {
	if t.top.seq == 0 {
		return 0, 0
	}
	seq, rows := t.top.seq, t.heightOf(t.top.seq)-t.top.off
	for rows < t.height {
		nx, ok := t.next(seq)
		if !ok {
			break
		}
		seq, rows = nx, rows+t.heightOf(nx)
	}
	return t.top.seq, seq
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
		if t.pages[idx] == nil && !t.loading[idx] {
			t.loading[idx] = true
			cmds = append(cmds, loadPage(t.c.store, t.c.pol, t.sid, t.gen, idx, t.c.model))
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

// addPage stores a loaded page if it still belongs here.
func (t *transcript) addPage(pm pageMsg) {
	if pm.sid != t.sid || pm.gen != t.gen {
		return
	}
	delete(t.loading, pm.idx)
	if pm.err != nil {
		return
	}
	t.pages[pm.idx] = newPage(pm.idx, t.count, pm.msgs, pm.hist, pm.model)
	if t.follow {
		t.end()
	}
	t.clampEnd()
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
		if p.model != t.c.model {
			stale[idx] = p.stored
		}
	}
	if len(stale) == 0 {
		return nil
	}
	t.building = t.c.model
	return rebuild(t.c.pol, t.sid, t.gen, t.c.model, stale)
}

func (t *transcript) applyRebuild(rm rebuildMsg) {
	if rm.sid != t.sid || rm.gen != t.gen {
		return
	}
	if t.building == rm.model {
		t.building = ""
	}
	if rm.model != t.c.model {
		return
	}
	for idx, hist := range rm.hists {
		if p := t.pages[idx]; p != nil {
			p.setSent(hist, rm.model)
		}
	}
	t.clampEnd()
}
