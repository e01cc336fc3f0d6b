package ui

import (
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/scrim-dev/scrim/internal/cores"
	"github.com/scrim-dev/scrim/internal/memlimit"
	"github.com/scrim-dev/scrim/session"
)

type focus int

const (
	focusList focus = iota
	focusPanes
	focusPrompt
)

// narrowWidth: below it the panes do not fit side by side and the session
// list and the panes take turns.
const narrowWidth = 100

// Model is the root of the program. It handles global keys first, then hands
// the key to the dialog, picker, or focused view; it does no I/O itself:
// every load, build and write is a tea.Cmd whose result names its session.
type Model struct {
	c       *common
	cfg     Config
	focus   focus
	list    sessionList
	tr      *transcript
	picker  *picker
	models  []list.Item // the picker's entries, made on first use
	dialog  dialog
	chat    *chat
	counter counter
	layout  paneLayout // the user's choice; narrow screens never split
	loaded  bool       // the session list has been read once
	status  string
	failed  bool // status is an error
	// pageStatus is the transcript's page failure last put in the status,
	// to clear it once the page is read, and only if nothing replaced it.
	pageStatus string
	// importing is the background import's "importing …" while it is in
	// the status line; beforeImport is what the status line said before.
	importing    string
	beforeImport string
	beforeFailed bool

	// spares: the program keeps a processor for the UI while keys come
	// (atKeys); spareGen names the last key's release of it.
	spares   bool
	spareGen int

	find    *finder // the find n/N walk, nil when there is none
	findGen int
	// lastQuery fills the find dialog again.
	lastQuery string

	// background receives the whole-session counting steps, which run beside
	// the UI; nil means they are returned as ordinary commands. Benchmarks
	// set it to keep counting out of the latency they measure.
	background func(tea.Cmd)
}

// New builds the program for cfg.
func New(cfg Config) *Model {
	c := newCommon(cfg)
	m := &Model{c: c, cfg: cfg, focus: focusPanes, counter: newCounter()}
	m.tr = newTranscript(c)
	m.chat = newChat(c)
	m.list = newSessionList(c, m.badge)
	return m
}

// Run starts the program on in and out and blocks until the user quits.
// When out is not a terminal (a pipe, a test) nothing reports its size, so
// the layout is $COLUMNS×$LINES, else 80×24.
func Run(cfg Config, in io.Reader, out io.Writer) error {
	memlimit.Soft()
	m := New(cfg)
	m.spares = true
	// Frames at up to 120 a second, Bubble Tea's most, not its 60: a key's
	// change reached the screen 9 ms sooner (tmux, 150 steps: median
	// 16.6-16.9 ms against 25.7-25.9 from send-keys to the pane changed),
	// and a frame is written only where the view changed.
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithInput(in), tea.WithOutput(out), tea.WithFPS(120)}
	if !cfg.NoMouse {
		// Holding shift still selects text in most terminals.
		opts = append(opts, tea.WithMouseCellMotion())
	}
	p := tea.NewProgram(m, opts...)
	if f, ok := out.(*os.File); !ok || !term.IsTerminal(f.Fd()) {
		getenv := cfg.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		go p.Send(tea.WindowSizeMsg{Width: envInt(getenv, "COLUMNS", 80), Height: envInt(getenv, "LINES", 24)})
	}
	_, err := p.Run()
	m.chat.stop()
	return err
}

func envInt(getenv func(string) string, name string, def int) int {
	if n, err := strconv.Atoi(getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

type sessionsMsg struct {
	headers []session.Header
	err     error
}

func (m *Model) loadSessions() tea.Cmd {
	st := m.c.store
	return func() tea.Msg {
		hs, _, err := st.List()
		return sessionsMsg{headers: hs, err: err}
	}
}

func (m *Model) Init() tea.Cmd {
	if m.cfg.Imports != nil {
		return tea.Batch(m.loadSessions(), waitImport(m.cfg.Imports))
	}
	return m.loadSessions()
}

// badge is the session list's "N redacted" for the active model.
func (m *Model) badge(h session.Header) string {
	c := m.counter.get(countKey{h.ID, m.c.model})
	switch {
	case h.Count == 0:
		return ""
	case c == nil:
		return "counting…"
	case c.Upto < h.Count:
		return "counting " + plural(len(c.Redacted), "redacted", "redacted") + "…"
	}
	return plural(len(c.Redacted), "redacted", "redacted")
}

func (m *Model) setStatus(s string, failed bool) { m.status, m.failed = s, failed }

// syncPageStatus shows the transcript's page failures in the status line: a
// new one at once, a known one again when nothing else is shown (a model
// switch clears the status); the status is cleared when none is left.
func (m *Model) syncPageStatus() {
	s := m.tr.failureStatus()
	switch {
	case s != "" && (s != m.pageStatus || m.status == ""):
		m.setStatus(s, true)
	case s == "" && m.pageStatus != "" && m.status == m.pageStatus:
		m.setStatus("", false)
	}
	m.pageStatus = s
}

// Update is Bubble Tea's update: cheap state changes only.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
	case tea.MouseMsg:
		cmds = append(cmds, m.mouse(msg), m.atKeys())
	case spareMsg:
		if msg.gen == m.spareGen {
			cores.Spare(false)
		}
	case tea.KeyMsg:
		cmds = append(cmds, m.atKeys())
		for _, k := range keystrokes(msg) {
			asked := m.dialog
			cmd, quit := m.key(k)
			if quit {
				m.chat.stop()
				return m, tea.Quit
			}
			cmds = append(cmds, cmd)
			if _, del := m.dialog.(*deleteDialog); del && m.dialog != asked {
				break // a burst never answers the question it raised
			}
		}
	case sessionsMsg:
		cmds = append(cmds, m.gotSessions(msg))
	case openedMsg:
		cmds = append(cmds, m.opened(msg))
	case pageMsg:
		cmds = append(cmds, m.tr.addPage(msg))
	case rebuildMsg:
		cmds = append(cmds, m.tr.applyRebuild(msg))
	case retryMsg:
		m.tr.retry(msg) // fetch or rebuildStale below tries again
	case countsMsg:
		m.counter.take(msg)
		m.syncRedacted()
	case keptMsg:
		m.counter.takeKept(msg)
		m.syncRedacted()
	case savedMsg:
		m.counter.takeSaved(msg)
	case findStartMsg:
		m.lastQuery = msg.query
		cmds = append(cmds, m.startFind(msg))
	case findMsg:
		cmds = append(cmds, m.gotFind(msg))
	case explainMsg:
		if msg.sid == m.tr.sid && msg.model == m.c.model {
			m.dialog = &explainDialog{c: m.c, em: msg}
		}
	case renamedMsg:
		if msg.err != nil {
			m.setStatus("rename failed: "+oneLine(msg.err), true)
		} else {
			m.setStatus("renamed", false)
		}
		cmds = append(cmds, m.loadSessions())
	case deletedMsg:
		cmds = append(cmds, m.deleted(msg))
	case chatDeltaMsg:
		if msg.sid == m.chat.sid && m.chat.note(msg.delta) && msg.sid == m.tr.sid {
			cmds = append(cmds, m.refresh())
		}
		cmds = append(cmds, waitChat(msg.sid, m.chat.model, msg.events))
	case grownMsg:
		m.tr.grow(msg)
	case importMsg:
		cmds = append(cmds, m.imported(msg.ev), waitImport(m.cfg.Imports))
	case reloadedMsg:
		cmds = append(cmds, m.tr.reload(msg.sid, msg.head))
	case chatDoneMsg:
		cmds = append(cmds, m.chatDone(msg))
	default:
		// list internals (filter results, …): to the picker when open
		if m.picker != nil {
			cmds = append(cmds, m.picker.passThrough(msg))
		} else {
			cmds = append(cmds, m.list.update(msg), m.syncOpen())
		}
	}
	m.resize()
	m.syncPageStatus()
	cmds = append(cmds, m.tr.fetch(), m.tr.rebuildStale())
	if c := m.counter.next(m.c.ctxs, m.c.store, m.c.pol, m.c.model, m.countJobs()); c != nil {
		if m.background != nil {
			m.background(c)
		} else {
			cmds = append(cmds, c)
		}
	}
	return m, tea.Batch(cmds...)
}

func oneLine(err error) string {
	return inertLine(strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " "))
}

func (m *Model) gotSessions(msg sessionsMsg) tea.Cmd {
	if msg.err != nil {
		m.setStatus("cannot list sessions: "+oneLine(msg.err), true)
		return nil
	}
	first := !m.loaded
	m.loaded = true
	var adopt tea.Cmd
	if m.c.model == "" {
		model := ""
		switch {
		case len(msg.headers) > 0 && msg.headers[0].LastModel != "":
			model = msg.headers[0].LastModel
		case len(msg.headers) > 0 && len(m.cfg.Models) > 0:
			// An empty store has nothing to preview: no model is made up
			// for it (the header says how to pick one).
			model = m.cfg.Models[0].ID
		}
		if first {
			m.c.model = model
		} else if model != "" {
			// Opened on an empty store, whose first session the watch
			// just imported: its model becomes active, as it would have
			// at the start; the sent pane had said each message was
			// missing from a request there was no model for.
			adopt = m.useModel(model)
		}
	}
	cmd := m.list.setSessions(msg.headers)
	if len(msg.headers) == 0 {
		m.focus = focusList
	}
	// The open session grew (chat, another process): show the new messages.
	var grow tea.Cmd
	for _, h := range msg.headers {
		if h.ID == m.tr.sid && h.Count > m.tr.count && m.tr.count > 0 {
			grow = m.refresh()
		}
	}
	return tea.Batch(cmd, grow, adopt, m.syncOpen())
}

// syncOpen opens the session selected in the list, if it is not open yet.
func (m *Model) syncOpen() tea.Cmd {
	h, ok := m.list.selected()
	if !ok {
		// A filter that matches nothing keeps the open session on screen;
		// an empty store has none.
		if len(m.list.l.Items()) == 0 && m.tr.sid != "" {
			m.tr.reset("")
		}
		return nil
	}
	if h.ID == m.tr.sid {
		return nil
	}
	m.tr.reset(h.ID)
	m.tr.title = h.Title
	return openSession(m.c.ctxs, m.c.store, m.c.pol, h.ID, m.tr.gen, m.c.model)
}

func (m *Model) opened(msg openedMsg) tea.Cmd {
	t := m.tr
	if msg.sid != t.sid || msg.gen != t.gen {
		return nil
	}
	t.opening = false
	early := t.early
	t.early = nil
	if msg.err != nil {
		m.setStatus("cannot open session: "+oneLine(msg.err), true)
		return nil
	}
	t.count, t.title = msg.head.Count, msg.head.Title
	var cmds []tea.Cmd
	for _, pm := range msg.pages {
		cmds = append(cmds, t.addPage(pm))
	}
	m.syncRedacted()
	t.end()
	m.openedForFind()
	for _, k := range early {
		cmds = append(cmds, m.panesKey(k))
	}
	return tea.Batch(cmds...)
}

// syncRedacted hands the transcript the counted redactions for the open
// session and the active model.
func (m *Model) syncRedacted() {
	var seqs, unknowns []uint64
	if c := m.counter.get(countKey{m.tr.sid, m.c.model}); c != nil {
		seqs, unknowns = c.Redacted, c.Unknowns
	}
	m.tr.setRedacted(seqs)
	m.tr.unknowns = unknowns
}

// countJobs is what to count, most wanted first: the open session, then the
// list in order.
func (m *Model) countJobs() countJobs {
	var open countJob
	if m.tr.sid != "" && m.tr.count > 0 {
		open = countJob{m.tr.sid, m.tr.count}
	}
	items := m.list.l.Items()
	first := 0 // where the listed sessions start
	if open.sid != "" {
		first = 1
	}
	at := func(i int) countJob {
		if i < first {
			return open
		}
		h := items[i-first].(sessionItem).h // setSessions makes every item
		return countJob{h.ID, h.Count}
	}
	return countJobs{n: first + len(items), at: at, list: m.list.items, open: open}
}

// setModel makes model active: the sent pane is rebuilt for it (in a Cmd),
// the counts switch to its own.
func (m *Model) setModel(model string) tea.Cmd {
	if model == m.c.model {
		return nil
	}
	m.setStatus("", false)
	return m.useModel(model)
}

// useModel is setModel but for the status line, which keeps what it says.
func (m *Model) useModel(model string) tea.Cmd {
	m.c.model = model
	m.syncRedacted()
	if m.tr.hide {
		m.tr.setHide(true)
	}
	if f := m.find; f != nil {
		// Its hits were of what the model before is sent.
		return m.startFind(findStartMsg{query: f.query, scope: f.scope, regex: f.regex})
	}
	return nil // Update's rebuildStale rebuilds the sent pane for model
}

// grownMsg is the open session's header read again after messages were
// added to it.
type grownMsg struct {
	sid  string
	gen  int
	head session.Header
}

func (m *Model) refresh() tea.Cmd {
	st, sid, gen := m.c.store, m.tr.sid, m.tr.gen
	return func() tea.Msg {
		h, err := st.Get(sid)
		if err != nil {
			return nil
		}
		return grownMsg{sid: sid, gen: gen, head: h}
	}
}

func (m *Model) deleted(msg deletedMsg) tea.Cmd {
	if msg.err != nil {
		m.setStatus("delete failed: "+oneLine(msg.err), true)
		return m.loadSessions()
	}
	m.counter.forget(msg.sid)
	m.c.ctxs.Forget(msg.sid)
	for _, p := range msg.related {
		m.counter.rewind(p, 1)
		m.c.ctxs.Forget(p)
	}
	if msg.sid == m.tr.sid {
		m.tr.reset("")
	}
	m.setStatus("session deleted", false)
	return m.loadSessions()
}

func (m *Model) chatDone(msg chatDoneMsg) tea.Cmd {
	if msg.sid != m.chat.sid {
		return nil
	}
	m.chat.sending = false
	if msg.err != nil {
		m.chat.err = oneLine(msg.err)
		switch {
		case !m.chat.promptStored && m.chat.input.Value() == "":
			// Nothing of the turn was kept: the prompt is not lost.
			m.chat.input.SetValue(m.chat.prompt)
			m.chat.input.CursorEnd()
			m.chat.err += " — your prompt is back in the input: fix what is wrong (m picks another model) and press enter"
		case m.chat.promptStored:
			m.chat.err += " — your prompt is stored in the session; scrim send SESSION --continue sends it again"
		}
	} else {
		m.chat.reply.Reset()
	}
	return m.loadSessions()
}

// typing reports whether a text field has the keys: then q and ctrl+c do
// not quit.
func (m *Model) typing() bool {
	switch {
	case m.dialog != nil:
		return m.dialog.typing()
	case m.picker != nil:
		return m.picker.typing()
	case m.focus == focusPrompt:
		return true
	}
	return m.list.typing()
}

func (m *Model) narrow() bool { return m.c.width < narrowWidth }

// shortHelp is the focused view's keys for the footer.
func (m *Model) shortHelp() []key.Binding {
	switch {
	case m.dialog != nil:
		return m.dialog.ShortHelp()
	case m.picker != nil:
		return m.picker.ShortHelp()
	case m.focus == focusPrompt:
		return m.chat.ShortHelp()
	case m.loaded && len(m.list.l.Items()) == 0:
		return []key.Binding{m.c.keys.Quit, m.c.keys.Help}
	case m.focus == focusList:
		return m.list.ShortHelp()
	}
	return m.panesShortHelp()
}

func (m *Model) fullHelp() [][]key.Binding {
	if m.focus == focusList {
		return m.list.FullHelp()
	}
	return m.panesFullHelp()
}

// spareFor is how long after the last key or mouse event the processor
// kept for the UI stays kept.
const spareFor = time.Second

// spareMsg gives the kept processor back, unless a key came since.
type spareMsg struct{ gen int }

// atKeys keeps a processor for the UI's own goroutines while the user is
// at the keys (cores.Spare), for spareFor after the last: counting and
// gathering keep every core the work is spread over busy, and a key's
// way to the screen waited at each step for one of them to be preempted.
// Only while keys come, since kept all along it cost the first count
// about a twentieth of its time.
func (m *Model) atKeys() tea.Cmd {
	if !m.spares {
		return nil
	}
	cores.Spare(true)
	m.spareGen++
	gen := m.spareGen
	return tea.Tick(spareFor, func(time.Time) tea.Msg { return spareMsg{gen} })
}
