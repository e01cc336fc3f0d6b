package ui

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tools"
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
	// opening: the session is being opened; until it is, its count is not
	// known, and an empty pane means loading, not an empty session.
	opening bool
	// early are the pane keys pressed while opening, played once it is
	// open: a key is never lost to the open's jump to the end.
	early []tea.KeyMsg
	gen   int // bumped on every (re)open, to drop late pages

	pages   map[uint64]*page
	loading map[uint64]bool
	failed  map[uint64]*pageFailure // pages held back after a failed read or build
	clock   uint64
	// after schedules msg after d: tea.Tick; tests deliver the message
	// themselves instead of waiting.
	after func(d time.Duration, msg tea.Msg) tea.Cmd

	top    anchor
	sel    uint64 // the current message (gutter mark; n/N, e act on it)
	hide   bool   // show only messages the active model does not get as stored
	layout paneLayout

	redacted []uint64 // Seqs with a placeholder for the active model (from counts)
	unknowns []uint64 // Seqs whose content of unknown source is sent unchecked (from counts)
	// walkUnknown makes n/N walk unknowns instead of redacted.
	walkUnknown bool
	follow      bool   // keep the end in view as messages arrive (chat)
	building    string // model a rebuild of the sent side is running for

	width, height int // rows area, without the pane titles

	systemOpen bool // the system entry above message 1 is open (p)

	// mark draws the find's matches; markKey names the find, so rows
	// rendered for another are drawn again.
	mark    *regexp.Regexp
	markKey string
}

// jumpMatch makes seq current and brings the k-th of its rows that the
// find marks near the top; a message not loaded yet is shown from its top.
// A match past what a pane shows of a long part (shown) brings the line
// that says so near the top: the match is in what scrim show prints.
func (t *transcript) jumpMatch(seq uint64, k int) {
	t.jump(seq)
	if _, e := t.entry(seq); e == nil || t.mark == nil {
		return
	}
	n, cut := 0, -1
	for i, r := range t.rows(seq) {
		plain := ansi.Strip(r)
		if cut < 0 && strings.Contains(plain, notShown) {
			cut = i
		}
		if !t.mark.MatchString(plain) {
			continue
		}
		if n == k {
			t.top = anchor{seq, max(0, i-1)}
			t.clampEnd()
			return
		}
		n++
	}
	if cut >= 0 {
		t.top = anchor{seq, max(0, cut-1)}
		t.clampEnd()
	}
}

// setMark marks re's matches in the panes from now on (nil: none).
func (t *transcript) setMark(re *regexp.Regexp, key string) { t.mark, t.markKey = re, key }

func newTranscript(c *common) *transcript {
	return &transcript{c: c, pages: map[uint64]*page{}, loading: map[uint64]bool{}, failed: map[uint64]*pageFailure{}, after: tick}
}

// reset empties the transcript for session sid (or none).
func (t *transcript) reset(sid string) {
	t.sid, t.title, t.count = sid, "", 0
	t.opening = sid != ""
	t.early = nil
	t.gen++
	t.pages = map[uint64]*page{}
	t.loading = map[uint64]bool{}
	t.failed = map[uint64]*pageFailure{}
	t.top, t.sel = anchor{}, 0
	t.redacted = nil
	t.follow, t.building = false, ""
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
		if f := t.failure(pageOf(seq)); f != nil && f.model == "" {
			return t.unreadable(seq, f.err)
		}
		return []string{t.c.st.Dim.wrap(padTo("#"+strconv.FormatUint(seq, 10)+" loading…", t.width-1))}
	}
	key := rowKey{width: t.width, layout: t.layout, model: t.c.model, built: p.model == t.c.model, mark: t.markKey, system: seq == 1 && t.systemOpen}
	if e.rows == nil || e.key != key {
		e.rows, e.key = t.render(e, key.built), key
	}
	return e.rows
}

// unreadable is the row of a message whose page cannot be read: one row,
// as while it loads, so that nothing moves when the page comes at last.
func (t *transcript) unreadable(seq uint64, err error) []string {
	note := "#" + strconv.FormatUint(seq, 10) + " cannot be read: " + oneLine(err)
	side := func(w int) []line {
		s := ansi.Truncate(note, w, "…")
		return []line{{segs: []seg{{text: s, ink: t.c.st.Err}}, width: textWidth(s)}}
	}
	lw, rw := t.paneWidths()
	return joinSides(t.c.st, side(lw), lw, side(rw), rw)
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
		v := sideView{msg: e.msg, tier: tier, mark: t.mark}
		if built {
			v.denied, v.whole = withheld(e.msg, e.sent)
			v.spans = redact.StoredSpans(e.msg, e.sent)
		}
		left = st.renderSide(v, e.seq, e.msg, lw, loc)
	}
	if rw > 0 {
		v := sideView{msg: e.sent, sent: true, tier: tier, mark: t.mark}
		switch {
		case e.msg.Role == session.RoleEvent:
			v.note = "not sent: events stay in the stored history only"
		case !built:
			v.note = "computing what " + inertLine(t.c.model) + " is sent…"
			if f := t.failure(pageOf(e.seq)); f != nil {
				v.note = "cannot build what " + inertLine(t.c.model) + " is sent: " + oneLine(f.err) + " · retrying"
			}
		case e.sent == nil:
			v.note = "missing from the request"
		}
		right = st.renderSide(v, e.seq, e.msg, rw, loc)
	}
	if e.seq == 1 {
		left, right = t.withSystem(left, lw, right, rw)
	}
	return joinSides(st, left, lw, right, rw)
}

// withSystem puts the system entry above message 1: what the active model
// is sent before the history (scrim's system prompt and the tools its tier
// is offered), one line until p opens it. The stored side says it is not
// stored.
func (t *transcript) withSystem(left []line, lw int, right []line, rw int) ([]line, []line) {
	st := t.c.st
	tier, _ := t.c.pol.TierFor(t.c.model)
	offered := tools.Offered(tier)
	names := make([]string, len(offered))
	for i, tool := range offered {
		names[i] = tool.Name()
	}
	list := "no tools"
	if len(names) > 0 {
		list = "tools: " + strings.Join(names, ", ")
	}
	var segs []seg
	if !t.systemOpen {
		segs = []seg{{text: "▸ system prompt, " + list + " (p)", ink: st.Event}}
	} else {
		segs = []seg{{text: "▾ sent before the history · p closes", ink: st.Event}, {text: "\n"},
			{text: "system: ", ink: st.Dim}, {text: runner.DefaultSystem}}
		for _, tool := range offered {
			desc, _, _ := strings.Cut(tool.Description(), "\n")
			segs = append(segs, seg{text: "\n"}, seg{text: "tool " + tool.Name() + ": ", ink: st.Dim}, seg{text: desc})
		}
		if len(offered) == 0 {
			segs = append(segs, seg{text: "\n"}, seg{text: "no tools: tier " + inertLine(tier.Label) + " is offered none", ink: st.Dim})
		}
	}
	var sys []line
	if rw > 0 {
		sys = wrapSegs(segs, rw)
	}
	var note []line
	if lw > 0 {
		note = wrapSegs([]seg{{text: "· not stored: added when sent (p)", ink: st.Dim}}, lw)
	}
	n := max(len(sys), len(note))
	pad := func(ls []line, w int) []line {
		for len(ls) < n && w > 0 {
			ls = append(ls, line{})
		}
		return ls
	}
	if lw > 0 {
		left = append(pad(note, lw), left...)
	}
	if rw > 0 {
		right = append(pad(sys, rw), right...)
	}
	return left, right
}

// toggleSystem opens or closes the system entry; the rows of message 1
// change height, so the view is kept full.
func (t *transcript) toggleSystem() {
	t.systemOpen = !t.systemOpen
	if !t.empty() {
		t.clampEnd()
	}
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
