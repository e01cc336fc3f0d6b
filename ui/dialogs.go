package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// dialog is a box over the main area that takes every key while open.
type dialog interface {
	update(msg tea.KeyMsg) (closed bool, cmd tea.Cmd)
	view(width, height int) string
	typing() bool
	ShortHelp() []key.Binding
}

func (c *common) box(title string, body []string, width int) string {
	return c.boxUpTo(title, body, width, 84)
}

// boxUpTo is box at most maxW cells wide.
func (c *common) boxUpTo(title string, body []string, width, maxW int) string {
	w := min(width-4, maxW)
	content := c.st.DialogTitle.Render(title) + "\n\n" + strings.Join(body, "\n")
	return c.st.Dialog.Width(w - 2).Render(content)
}

// --- explain ---

// explainMsg is the policy's answer for each sourcePath of a message, worked
// out in a tea.Cmd because deciding a path resolves symlinks (I/O).
type explainMsg struct {
	sid   string
	seq   uint64
	model string
	msg   session.Message
	sent  *session.Message // what the model is sent of it, when built
	exps  []policy.Explanation
	// related are the IDs of the session's subagents' and parents'
	// sessions, whose withheld content a derived span may repeat
	// (tally.Scope).
	related []string
}

func explain(st *session.Store, pol *policy.Policy, sid string, m session.Message, sent *session.Message, model string) tea.Cmd {
	return func() tea.Msg {
		out := explainMsg{sid: sid, seq: m.Seq, model: model, msg: m, sent: sent}
		for _, p := range m.Meta.SourcePaths {
			out.exps = append(out.exps, pol.Explain(model, p))
		}
		if sent != nil && st != nil {
			parents, subs, _ := st.Related(sid) // only a note: none if it cannot be told
			out.related = session.IDs(append(subs, parents...))
		}
		return out
	}
}

type explainDialog struct {
	c    *common
	em   explainMsg
	off  int
	rows int
}

func (d *explainDialog) lines(width int) []string {
	spans := d.spanLines()
	out := d.pathLines()
	if len(spans) > 0 {
		// "sent as stored" holds but for the placeholders inside it.
		for i, l := range out {
			out[i] = strings.Replace(l, "sent as stored.", "sent as stored, but for the placeholders below.", 1)
		}
	}
	return append(out, spans...)
}

// spanLines explains the placeholders inside the message's parts: what
// each kind replaced and why.
func (d *explainDialog) spanLines() []string {
	if d.em.sent == nil {
		return nil
	}
	st := d.c.st
	type key struct{ kind, what string }
	count := map[key]int{}
	var order []key
	for _, p := range d.em.sent.Parts {
		for _, f := range p.Filtered {
			k := key{f.Kind, f.Path}
			if f.Kind == "secret" {
				k.what = f.Rule
			}
			if count[k] == 0 {
				order = append(order, k)
			}
			count[k]++
		}
	}
	if len(order) == 0 {
		return nil
	}
	t, _ := d.c.pol.TierFor(d.em.model)
	out := []string{"", "Placeholders inside its text, for tier " + inertLine(t.Label) + ":", ""}
	for _, k := range order {
		n := count[k]
		if k.kind == "path" {
			out = append(out, st.Placeholder.wrap("✖ filtered "+inertLine(k.what))+"  "+plural(n, "string", "strings")+" of a call that writes it",
				st.Muted.Render("    (what an edit replaces and what it writes are that file's content)"))
			continue
		}
		if k.kind == "derived" {
			out = append(out, st.Placeholder.wrap("✖ derived from "+inertLine(k.what))+"  "+plural(n, "span repeats", "spans repeat")+" content of that denied file",
				st.Muted.Render("    (derived = \"redact\": the file's distinctive lines and tokens are looked for everywhere)"))
			if rel := d.em.related; len(rel) > 0 {
				named := strings.Join(rel[:min(len(rel), 3)], ", ")
				if len(rel) > 3 {
					named += fmt.Sprintf(" and %d more", len(rel)-3)
				}
				out = append(out, st.Muted.Render("    (the file may have been read in another session of this agent run, a subagent's or a parent's: "+named+")"))
			}
			continue
		}
		out = append(out, st.Placeholder.wrap("✖ secret: "+inertLine(k.what))+"  "+plural(n, "credential", "credentials")+" found by that gitleaks rule",
			st.Muted.Render("    (secrets = \"redact\": credentials are replaced whatever their source)"))
	}
	return out
}

func (d *explainDialog) pathLines() []string {
	st, m := d.c.st, &d.em.msg
	t, rule := d.c.pol.TierFor(d.em.model)
	ruleText := "(no [[models]] rule matches: the default tier)"
	if rule != nil {
		ruleText = "(rule match = " + strconv.Quote(inertLine(rule.Match)) + ", policy line " + strconv.Itoa(rule.Line) + ")"
	}
	out := []string{
		inertLine(d.em.model) + " maps to " + st.tierBadge(t) + " " + ruleText,
		"Policy " + inertLine(d.c.pol.File),
		"",
	}
	switch {
	case m.Role == session.RoleEvent:
		return append(out, "An event: shown in the stored history, never sent to a model.")
	case m.Meta.SourcePaths == nil && m.Meta.UnknownSource == "" && m.Role == session.RoleTool && !m.Meta.NoFiles:
		return append(out,
			st.Unknown.wrap("? Unknown source.")+" This tool result carries no sourcePaths and no record of",
			"where it came from, so scrim cannot check it against the policy: it is sent as stored.")
	case m.Meta.SourcePaths == nil && m.Meta.UnknownSource != "":
		return append(out,
			st.Unknown.wrap("? Unknown source: ")+inertLine(m.Meta.UnknownSource)+".",
			"scrim cannot tell which files this content came from, so it cannot check it",
			"against the policy: it is sent as stored.")
	case m.Meta.SourcePaths == nil:
		return append(out, "No file content (no sourcePaths): sent as stored.")
	}
	if m.Meta.UnknownSource != "" {
		out = append(out,
			st.Unknown.wrap("? Not all of its source is known: ")+inertLine(m.Meta.UnknownSource)+".",
			"The files below are known to have been read; if any is denied the whole message",
			"is withheld, otherwise it is sent as stored.", "")
	}
	out = append(out, "Each source path, the decision for tier "+inertLine(t.Label)+" and what decided it:", "")
	for _, e := range d.em.exps {
		mark, k, verdict := "✓ ", st.User, "allowed"
		if !e.Decision.Allowed {
			mark, k, verdict = "✗ ", st.Err, "denied"
		}
		out = append(out, k.wrap(mark+verdict)+"  "+inertLine(e.Decision.Path))
		why := "    " + inertLine(e.Decision.Reason)
		if e.Decision.Line > 0 && e.Decision.File == "" { // a team file's reason names its own line
			why += " (policy line " + strconv.Itoa(e.Decision.Line) + ")"
		}
		out = append(out, st.Muted.Render(why))
	}
	return out
}

func (d *explainDialog) update(msg tea.KeyMsg) (bool, tea.Cmd) {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.Down):
		d.off++
	case key.Matches(msg, k.Up):
		d.off = max(d.off-1, 0)
	case key.Matches(msg, k.Close), key.Matches(msg, k.Explain), msg.String() == "q", msg.Type == tea.KeyCtrlC, msg.Type == tea.KeyEnter:
		return true, nil
	}
	return false, nil
}

func (d *explainDialog) view(width, height int) string {
	w := min(width-4, 84)
	all := d.lines(w - 4)
	room := max(height-6, 3)
	d.off = min(d.off, max(len(all)-room, 0))
	shown := all[d.off:min(len(all), d.off+room)]
	if rest := len(all) - d.off - len(shown); rest > 0 {
		shown = append(shown, d.c.st.Muted.Render("… "+strconv.Itoa(rest)+" more lines (↓/j)"))
	}
	title := "Explain #" + strconv.FormatUint(d.em.seq, 10) + " · " + string(d.em.msg.Role)
	if d.em.msg.Tool != "" {
		title += " " + inertLine(d.em.msg.Tool)
	}
	return d.c.box(title, wrapBlock(shown, w-4), width)
}

// wrapBlock wraps lines that may hold styles to width (dialogs only: these
// lines are short and few).
func wrapBlock(lines []string, width int) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, strings.Split(lipgloss.NewStyle().Width(width).Render(l), "\n")...)
	}
	return out
}

func (d *explainDialog) typing() bool { return false }

func (d *explainDialog) ShortHelp() []key.Binding {
	k := d.c.keys
	return []key.Binding{k.Down, k.Up, k.Close}
}

// --- help ---

// helpWidth: the help's three columns of keys side by side.
const helpWidth = 96

type helpDialog struct {
	c      *common
	groups [][]key.Binding
	top    int  // first line shown, when the keys do not fit
	more   bool // lines below the last shown (set by view)
}

func (d *helpDialog) update(msg tea.KeyMsg) (bool, tea.Cmd) {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.Help), key.Matches(msg, k.Close), msg.String() == "q", msg.Type == tea.KeyCtrlC:
		return true, nil
	case key.Matches(msg, k.Down), key.Matches(msg, k.PageDown):
		if d.more {
			d.top++
		}
	case key.Matches(msg, k.Up), key.Matches(msg, k.PageUp):
		d.top = max(d.top-1, 0)
	}
	return false, nil
}

func (d *helpDialog) view(width, height int) string {
	st := d.c.st
	var cols []string
	total := 0
	for _, g := range d.groups {
		kw := 0
		for _, b := range g {
			kw = max(kw, textWidth(b.Help().Key))
		}
		var rows []string
		for _, b := range g {
			if b.Enabled() {
				rows = append(rows, st.Key.Render(padTo(b.Help().Key, kw))+"  "+st.KeyDesc.Render(b.Help().Desc))
			}
		}
		col := strings.Join(rows, "\n")
		cols = append(cols, col)
		total += lipgloss.Width(col) + 4
	}
	w := min(width-4, helpWidth)
	body := strings.Join(cols, "\n\n")
	if total-4 <= w-4 {
		body = lipgloss.JoinHorizontal(lipgloss.Top, joinCols(cols)...)
	}
	foot := "? or esc closes this help"
	// A short terminal shows a window of the keys, moved with ↑/↓: every
	// key stays reachable. The box takes 6 lines around the keys.
	if lines := strings.Split(body, "\n"); height > 0 && len(lines) > height-6 {
		n := max(height-6, 1)
		d.top = min(d.top, len(lines)-n)
		d.more = d.top+n < len(lines)
		body = strings.Join(lines[d.top:d.top+n], "\n")
		foot = fmt.Sprintf("↑/↓ scroll (%d–%d of %d) · ? or esc closes", d.top+1, d.top+n, len(lines))
	} else {
		d.top, d.more = 0, false
	}
	return d.c.boxUpTo("Keys", []string{body, "", st.Muted.Render(foot)}, width, helpWidth)
}

func joinCols(cols []string) []string {
	out := make([]string, 0, 2*len(cols))
	for i, c := range cols {
		if i > 0 {
			out = append(out, "    ")
		}
		out = append(out, c)
	}
	return out
}

func (d *helpDialog) typing() bool { return false }

func (d *helpDialog) ShortHelp() []key.Binding { return []key.Binding{d.c.keys.Help, d.c.keys.Close} }

// --- rename ---

type renamedMsg struct {
	sid string
	err error
}

type renameDialog struct {
	c     *common
	sid   string
	input textinput.Model
}

func newRenameDialog(c *common, h session.Header) *renameDialog {
	in := textinput.New()
	in.Prompt = "title: "
	in.SetValue(h.Title)
	in.CharLimit = 200
	in.Cursor.SetMode(cursor.CursorStatic)
	in.Focus()
	return &renameDialog{c: c, sid: h.ID, input: in}
}

func (d *renameDialog) update(msg tea.KeyMsg) (bool, tea.Cmd) {
	switch {
	case msg.Type == tea.KeyEsc, msg.Type == tea.KeyCtrlC:
		return true, nil
	case msg.Type == tea.KeyEnter:
		title := strings.TrimSpace(d.input.Value())
		if title == "" {
			return false, nil
		}
		st, sid := d.c.store, d.sid
		return true, func() tea.Msg { return renamedMsg{sid: sid, err: st.Rename(sid, title)} }
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return false, cmd
}

func (d *renameDialog) view(width, _ int) string {
	d.input.Width = min(width-4, 84) - 12
	return d.c.box("Rename session "+shortID(d.sid), []string{d.input.View(), "", d.c.st.Muted.Render("enter saves · esc cancels")}, width)
}

func (d *renameDialog) typing() bool { return true }

func (d *renameDialog) ShortHelp() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "save")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

// --- delete ---

type deletedMsg struct {
	sid string
	err error
	// related are the sessions sid was a subagent or a parent of: what a
	// tier with derived = "redact" withholds of them changed.
	related []string
}

type deleteDialog struct {
	c *common
	h session.Header
}

func (d *deleteDialog) update(msg tea.KeyMsg) (bool, tea.Cmd) {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.Confirm):
		st, sid := d.c.store, d.h.ID
		return true, func() tea.Msg {
			ps, ss, _ := st.Related(sid) // asked before: a deleted session has none
			return deletedMsg{sid: sid, err: st.Delete(sid), related: session.IDs(append(ps, ss...))}
		}
	case key.Matches(msg, k.Refuse), msg.String() == "q", msg.Type == tea.KeyCtrlC:
		return true, nil
	}
	return false, nil
}

func (d *deleteDialog) view(width, _ int) string {
	title := inertLine(d.h.Title)
	if title == "" {
		title = shortID(d.h.ID)
	}
	body := []string{
		"Delete " + strconv.Quote(title) + " (" + plural(int(d.h.Count), "message", "messages") + ") from the store?",
		"This cannot be undone.",
		"",
		d.c.st.Key.Render("y") + " delete   " + d.c.st.Key.Render("n/esc") + " keep it",
	}
	return d.c.box("Delete session", body, width)
}

func (d *deleteDialog) typing() bool { return false }

func (d *deleteDialog) ShortHelp() []key.Binding {
	return []key.Binding{d.c.keys.Confirm, d.c.keys.Refuse}
}
