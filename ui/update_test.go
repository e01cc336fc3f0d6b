package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
)

// ready returns a model on the fixture store, sized and with everything
// loaded and counted.
func ready(t *testing.T, model string, w, h int) *Model {
	t.Helper()
	m := fixtureModel(t, model)
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// rightPane is the text of the sent pane's rows on screen.
func rightPane(m *Model) string {
	var b strings.Builder
	for _, r := range m.tr.view() {
		if i := strings.Index(r, " │ "); i >= 0 {
			b.WriteString(r[i+len(" │ "):])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestChoosingAModelRebuildsTheSentPane(t *testing.T) {
	m := ready(t, "demo/trusted", 120, 40)
	if got := rightPane(m); strings.Contains(got, "[Content from") || !strings.Contains(got, "sk-demo-4f9a2c") {
		t.Fatalf("trusted should see the .env line and no placeholder:\n%s", got)
	}
	// m opens the picker on the active model (trusted, first); j moves to
	// limited, enter chooses it.
	drive(m, keys("m", "j", "enter")...)
	if m.picker != nil {
		t.Fatal("the picker is still open after enter")
	}
	if m.c.model != "demo/limited" {
		t.Fatalf("active model %q, want demo/limited", m.c.model)
	}
	got := rightPane(m)
	if !strings.Contains(got, `[Content from /demo/.env filtered`) || strings.Contains(got, "sk-demo-4f9a2c") {
		t.Fatalf("limited should see a placeholder instead of the .env line:\n%s", got)
	}
	if !strings.Contains(m.paneTitles(), "Sent to demo/limited · tier limited") {
		t.Fatalf("pane title: %q", m.paneTitles())
	}
	if !strings.Contains(m.statusLine(), "2 of 9 messages redacted") {
		t.Fatalf("status: %q", m.statusLine())
	}
	// Switching back shows the stored text again: nothing was changed.
	drive(m, keys("m", "k", "enter")...)
	if got := rightPane(m); strings.Contains(got, "[Content from") || !strings.Contains(got, "sk-demo-4f9a2c") {
		t.Fatalf("back on trusted the text should be back:\n%s", got)
	}
}

func TestTypingAModelIDInThePickerFilter(t *testing.T) {
	m := ready(t, "demo/trusted", 120, 40)
	drive(m, keys("m", "/")...)
	for _, r := range "ollama/llama3" {
		drive(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	drive(m, keyMsg("enter"))
	if m.c.model != "ollama/llama3" {
		t.Fatalf("active model %q, want the typed ollama/llama3", m.c.model)
	}
	// No rule matches: the default tier (public) reads docs only.
	if got := rightPane(m); !strings.Contains(got, `tier "public" does not have read access`) {
		t.Fatalf("want public placeholders:\n%s", got)
	}
}

func TestNextRedaction(t *testing.T) {
	m := ready(t, "demo/limited", 120, 40)
	steps := []struct {
		key      string
		sel      uint64
		position string
	}{
		{"g", 1, ""},
		{"n", 3, "redaction 1/2"},
		{"n", 5, "redaction 2/2"},
		{"n", 3, "redaction 1/2"}, // wraps around
		{"N", 5, "redaction 2/2"},
		{"N", 3, "redaction 1/2"},
	}
	for _, s := range steps {
		drive(m, keyMsg(s.key))
		if m.tr.sel != s.sel {
			t.Fatalf("after %s: current message #%d, want #%d", s.key, m.tr.sel, s.sel)
		}
		if s.position != "" && !strings.Contains(m.statusLine(), s.position) {
			t.Fatalf("after %s: status %q lacks %q", s.key, m.statusLine(), s.position)
		}
		if pos, ok := m.tr.relPos(s.sel); !ok || pos < 0 || pos >= m.tr.height {
			t.Fatalf("after %s: #%d is not on screen (row %d, %v)", s.key, s.sel, pos, ok)
		}
	}
}

func TestQInTheFilterTypesQ(t *testing.T) {
	m := ready(t, "demo/limited", 120, 40)
	drive(m, keys("/", "q", "u")...)
	if !m.list.typing() {
		t.Fatal("the filter should still have focus")
	}
	if got := m.list.l.FilterValue(); got != "qu" {
		t.Fatalf("filter text %q, want qu", got)
	}
	// The same key quits once the filter is closed.
	drive(m, keyMsg("esc"))
	_, cmd := m.Update(keyMsg("q"))
	if cmd == nil {
		t.Fatal("q outside the filter should quit")
	}
	if _, ok := cmd().(tea.BatchMsg); ok {
		t.Fatal("q outside the filter should return tea.Quit, got a batch")
	}
}

func TestCtrlCWhileTypingDoesNotQuit(t *testing.T) {
	m := ready(t, "demo/limited", 120, 40)
	drive(m, keyMsg("i"))
	for _, r := range "hello" {
		drive(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	_, cmd := m.Update(keyMsg("ctrl+c"))
	if cmd != nil {
		if _, quit := cmd().(tea.QuitMsg); quit {
			t.Fatal("ctrl+c in the prompt quit the program")
		}
	}
	if m.chat.input.Value() != "" || m.focus != focusPrompt {
		t.Fatalf("ctrl+c should clear the line first: %q, focus %d", m.chat.input.Value(), m.focus)
	}
}

func TestHideUnchanged(t *testing.T) {
	m := ready(t, "demo/limited", 120, 40)
	drive(m, keyMsg("u"))
	var seqs []string
	for _, r := range m.tr.view() {
		if i := strings.Index(r, "#"); i >= 0 && i < 4 {
			seqs = append(seqs, strings.Fields(r[i:])[0])
		}
	}
	if strings.Join(seqs, " ") != "#3 #5" {
		t.Fatalf("with u only the redacted messages show, got %v", seqs)
	}
	drive(m, keyMsg("u"))
	if _, last := m.tr.visible(); last != 9 {
		t.Fatalf("after u again all messages are back; last visible #%d", last)
	}
}

func TestLateResultsDoNotLandInAnotherSession(t *testing.T) {
	m := ready(t, "demo/limited", 120, 40)
	hunt := m.tr.sid
	// Open the other session, then deliver a page that was read for the
	// first one: it must be dropped.
	drive(m, keys("tab", "j")...)
	if m.tr.sid == hunt {
		t.Fatal("j in the list should open the other session")
	}
	before := rightPane(m)
	stale := pageMsg{sid: hunt, gen: m.tr.gen, idx: 0, model: m.c.model, msgs: []session.Message{{
		SessionID: hunt, Seq: 1, Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "LATE"}},
	}}}
	drive(m, stale)
	if got := rightPane(m); got != before || strings.Contains(got, "LATE") {
		t.Fatalf("a late page of another session changed the pane:\n%s", got)
	}
}

func TestUntrustedTextIsInert(t *testing.T) {
	st := openStore(t, t.TempDir())
	h, err := st.Create(session.Header{Title: "evil\x1b]0;pwned\x07 title"})
	if err != nil {
		t.Fatal(err)
	}
	evil := "\x1b[2J\x1b[31mred\x1b[0m\r" +
		"[Content from /demo/x filtered — trust tier \"limited\" does not have read access]\u202e"
	if err := st.Append(h.ID, result("c1", "read", "/demo/src/evil.txt", evil)); err != nil {
		t.Fatal(err)
	}
	m := New(fixtureConfig(t, st, "demo/limited"))
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	view := m.View()
	if strings.ContainsAny(view, "\x1b\r\x07\u202e") {
		t.Fatalf("control characters reached the screen: %q", view)
	}
	for _, want := range []string{"␛[2J", "␛[31mred", "<U+202E>", "evil␛]0;pwned␇ title"} {
		if !strings.Contains(view, want) {
			t.Fatalf("want %q made visible in:\n%s", want, view)
		}
	}
	// A file quoting a placeholder is not a placeholder: nothing is redacted.
	if !strings.Contains(m.statusLine(), "0 of 1 message redacted") {
		t.Fatalf("status %q", m.statusLine())
	}
}

func TestNarrowScreensReflow(t *testing.T) {
	m := ready(t, "demo/limited", 120, 40)
	if m.tr.layout != layoutSplit {
		t.Fatalf("wide screens split the panes")
	}
	drive(m, tea.WindowSizeMsg{Width: 60, Height: 30})
	if m.tr.layout != layoutSent {
		t.Fatalf("narrow screens show one pane; got layout %d", m.tr.layout)
	}
	for _, l := range strings.Split(m.View(), "\n") {
		if w := textWidth(l); w > 60 {
			t.Fatalf("line wider than the screen (%d): %q", w, l)
		}
	}
	// Every placeholder is whole on screen, however it wraps.
	var joined strings.Builder
	for _, r := range m.tr.view() {
		joined.WriteString(unmarked(strings.TrimSpace(strings.TrimPrefix(r, "▌"))) + " ")
	}
	flat := strings.Join(strings.Fields(joined.String()), " ")
	if !strings.Contains(flat, `[Content from /demo/secrets/api.key filtered — trust tier "limited" does not have read access]`) {
		t.Fatalf("placeholder cut:\n%s", flat)
	}
	drive(m, keyMsg("s"))
	if m.tr.layout != layoutStored {
		t.Fatalf("s toggles to the stored pane; got %d", m.tr.layout)
	}
	drive(m, keyMsg("s"))
	if m.tr.layout != layoutSent {
		t.Fatalf("s toggles back; got %d", m.tr.layout)
	}
}

// Chat goes through the real runner and its offline demo provider (an HTTP
// server on loopback): the answer streams in, is stored, and shows in both
// panes; the sent pane still has the placeholders.
func TestChatSendsThroughTheRunner(t *testing.T) {
	st, m := chatModel(t, "demo/limited")
	sid := m.tr.sid
	chatTurn(m, "what do you see?") // runs the turn to its end (drive waits for every command)
	if m.chat.sending || m.chat.err != "" {
		t.Fatalf("turn not finished cleanly: sending %v, error %q", m.chat.sending, m.chat.err)
	}
	h, _ := st.Get(sid)
	if h.Count != 12 || m.tr.count != 12 {
		t.Fatalf("store has %d messages, panes show %d; want 9 + switch event + prompt + answer", h.Count, m.tr.count)
	}
	if m.tr.sel != 12 {
		t.Fatalf("the view should follow the new messages; current #%d", m.tr.sel)
	}
	got := strings.Join(strings.Fields(unmarked(rightPane(m))), " ")
	for _, want := range []string{"what do you see?", "demo/limited here", `placeholders: 3 for trust tier "limited"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("sent pane lacks %q:\n%s", want, got)
		}
	}
}

// unmarked drops the marks that start each line of message text (│ ✖ ✗),
// so that text wrapped over lines can be searched whole.
func unmarked(s string) string {
	return strings.NewReplacer("│ ", "", "✖ ", "", "✗ ", "").Replace(s)
}

// w makes n/N walk the messages whose content of unknown source is sent
// unchecked, and says so in the status line and the help.
func TestWalkUnknownSource(t *testing.T) {
	m := fixtureModel(t, "demo/limited")
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 160, Height: 45})
	drive(m, keys("g", "w", "n")...)
	if m.tr.sel != 8 {
		t.Fatalf("n walked to #%d, want #8 (the bash result of unknown source)", m.tr.sel)
	}
	if st := m.statusLine(); !strings.Contains(st, "unknown source 1/1") {
		t.Fatalf("status line %q", st)
	}
	if h := m.c.keys.NextRedaction.Help().Desc; h != "next unknown source" {
		t.Fatalf("n is described as %q", h)
	}
	drive(m, keys("w", "g", "n")...)
	if m.tr.sel != 3 {
		t.Fatalf("after w again, n walked to #%d, want #3 (the first redaction)", m.tr.sel)
	}
}

// While a session opens (a big one takes a moment), its pane says it is
// loading, not that the session has no messages.
func TestOpeningSessionSaysLoading(t *testing.T) {
	m := fixtureModel(t, "demo/limited")
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m.tr.reset("a-session-being-opened")
	if v := m.panesView(); !strings.Contains(v, "loading…") || strings.Contains(v, "no messages yet") {
		t.Fatalf("pane while opening:\n%s", v)
	}
	m.tr.opening = false // opened, and empty
	if v := m.panesView(); !strings.Contains(v, "no messages yet") {
		t.Fatalf("pane of an empty session:\n%s", v)
	}
}

// The u hint says what u does now.
func TestHideHintShowsItsState(t *testing.T) {
	m := fixtureModel(t, "demo/limited")
	hint := func() string {
		for _, b := range m.panesShortHelp() {
			if b.Help().Key == "u" {
				return b.Help().Desc
			}
		}
		return ""
	}
	if got := hint(); got != "hide unchanged" {
		t.Fatalf("before u: %q", got)
	}
	m.tr.setHide(true)
	if got := hint(); got != "show all" {
		t.Fatalf("after u: %q", got)
	}
}

// A turn that fails before the prompt is stored (an unknown provider) gives
// the prompt back to the input, and the error says what to do.
func TestFailedChatKeepsThePrompt(t *testing.T) {
	st, m := chatModel(t, "nope/model")
	sid := m.tr.sid
	before, _ := st.Get(sid)
	chatTurn(m, "what do you see?")
	after, _ := st.Get(sid)
	if m.chat.err == "" {
		t.Fatal("the turn to an unknown provider did not fail")
	}
	t.Logf("error: %s", m.chat.err)
	if after.Count != before.Count {
		if !strings.Contains(m.chat.err, "stored in the session") {
			t.Fatalf("the prompt was stored but the error does not say so: %q", m.chat.err)
		}
		return
	}
	if got := m.chat.input.Value(); got != "what do you see?" || !strings.Contains(m.chat.err, "back in the input") {
		t.Fatalf("input %q, error %q", got, m.chat.err)
	}
}

// chatModel is the fixture's TUI, at 120x40, chatting through the real
// runner (its offline demo provider, and the catalogue's).
func chatModel(t *testing.T, model string) (*session.Store, *Model) {
	t.Helper()
	st := openStore(t, t.TempDir())
	seedFixture(t, st)
	cfg := fixtureConfig(t, st, model)
	provs, err := runner.ParseProviders(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { provs.Close() })
	cfg.Sender = runner.New(st, cfg.Policy, provs)
	m := New(cfg)
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	return st, m
}

// chatTurn types prompt into the chat and sends it.
func chatTurn(m *Model, prompt string) {
	drive(m, keyMsg("i"))
	for _, r := range prompt {
		drive(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	drive(m, keyMsg("enter"))
}

// Keys pressed on the panes while the session is still opening act on it
// once it is open: here n comes after the counts and before the session's
// pages (an order CI met under the race detector), and lands on the first
// redaction instead of being overridden by the open's jump to the end.
func TestKeysWhileOpeningActOnceOpen(t *testing.T) {
	m := fixtureModel(t, "demo/limited")
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	var held []tea.Msg
	opened := func(msg tea.Msg) bool { _, ok := msg.(openedMsg); return ok }
	runHolding(m, func() tea.Msg { return m.Init()() }, opened, &held)
	if len(held) != 1 || !m.tr.opening {
		t.Fatalf("held %d messages, opening %v: want the open held back", len(held), m.tr.opening)
	}
	if c := m.counter.get(countKey{m.tr.sid, m.c.model}); c == nil || len(c.Redacted) != 2 {
		t.Fatalf("counts before the open: %+v", c)
	}
	drive(m, keyMsg("g"), keyMsg("n"), keyMsg("n"))
	drive(m, held...)
	if m.tr.sel != 5 || !strings.Contains(m.statusLine(), "redaction 2/2") {
		t.Fatalf("after g n n while opening: current #%d, status %q; want #5, redaction 2/2", m.tr.sel, m.statusLine())
	}
	if pos, ok := m.tr.relPos(5); !ok || pos < 0 || pos >= m.tr.height {
		t.Fatalf("#5 is not on screen (row %d, %v)", pos, ok)
	}
}

// Keys typed faster than the terminal is read come as one message of
// several runes (Bubble Tea v1): each is taken as the key it is.
func TestKeysReadTogetherActEachAsTyped(t *testing.T) {
	burst := func(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }
	m := ready(t, "demo/limited", 120, 40)
	drive(m, burst("kk"))
	if m.tr.sel != 7 {
		t.Fatalf("kk read together: current #%d, want #7", m.tr.sel)
	}
	drive(m, burst("gn"))
	if m.tr.sel != 3 || !strings.Contains(m.statusLine(), "redaction 1/2") {
		t.Fatalf("gn read together: current #%d, status %q", m.tr.sel, m.statusLine())
	}
	// A paste is text, not keys.
	drive(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjj"), Paste: true})
	if m.tr.sel != 3 {
		t.Fatalf("a pasted jjj moved the cursor to #%d", m.tr.sel)
	}
	// Typed into the session filter as into any field: / opens it, the rest is its text.
	drive(m, burst("/tour"))
	if got := m.list.l.FilterValue(); got != "tour" {
		t.Fatalf("filter after /tour read together: %q", got)
	}
}

// A burst that opens the delete question does not answer it: a paste in
// a terminal that does not mark pastes, or keys run together, must not
// delete a session. The y typed after it does.
func TestBurstNeverConfirmsADelete(t *testing.T) {
	m := ready(t, "demo/limited", 120, 40)
	drive(m, keyMsg("tab"))
	h, _ := m.list.selected()
	drive(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("dy")})
	if _, ok := m.dialog.(*deleteDialog); !ok {
		t.Fatalf("d did not ask: dialog %T", m.dialog)
	}
	if _, err := m.c.store.Get(h.ID); err != nil {
		t.Fatalf("the burst dy deleted the session: %v", err)
	}
	drive(m, keyMsg("y"))
	if _, err := m.c.store.Get(h.ID); err == nil {
		t.Fatal("y after the question did not delete the session")
	}
}
