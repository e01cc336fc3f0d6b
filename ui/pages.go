package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
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
	model string
	msgs  []session.Message
	hist  []session.Message
	err   error
}

// loadPage reads one page and builds what model is sent of it: through
// runner.Build, the function that makes real requests.
func loadPage(st *session.Store, pol *policy.Policy, sid string, gen int, idx uint64, model string) tea.Cmd {
	return func() tea.Msg {
		return readPage(st, pol, sid, gen, idx, model)
	}
}

func readPage(st *session.Store, pol *policy.Policy, sid string, gen int, idx uint64, model string) pageMsg {
	first := idx*pageSize + 1
	msgs, _, err := st.Range(sid, first, first+pageSize-1)
	pm := pageMsg{sid: sid, gen: gen, idx: idx, model: model, msgs: msgs, err: err}
	if err == nil {
		pm.hist = runner.Build(msgs, sid, model, pol).History
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
}

func rebuild(pol *policy.Policy, sid string, gen int, model string, pages map[uint64][]session.Message) tea.Cmd {
	return func() tea.Msg {
		out := rebuildMsg{sid: sid, gen: gen, model: model, hists: make(map[uint64][]session.Message, len(pages))}
		for idx, msgs := range pages {
			out.hists[idx] = runner.Build(msgs, sid, model, pol).History
		}
		return out
	}
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

func openSession(st *session.Store, pol *policy.Policy, sid string, gen int, model string) tea.Cmd {
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
		out.pages = append(out.pages, readPage(st, pol, sid, gen, lastIdx, model))
		if lastIdx > 0 {
			out.pages = append(out.pages, readPage(st, pol, sid, gen, 0, model))
		}
		return out
	}
}
