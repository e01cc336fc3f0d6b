package ui

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

type modelItem struct {
	id, note string
	tierLine string // the badge, rendered once
}

func (i modelItem) FilterValue() string { return i.id + " " + i.note }

type modelDelegate struct{ c *common }

func (d modelDelegate) Height() int                         { return 1 }
func (d modelDelegate) Spacing() int                        { return 0 }
func (d modelDelegate) Update(tea.Msg, *list.Model) tea.Cmd { return nil }

func (d modelDelegate) Render(w io.Writer, m list.Model, index int, item list.Item) {
	it, ok := item.(modelItem)
	if !ok {
		return
	}
	mark, idStyle := "  ", d.c.st.Title.UnsetBold()
	if index == m.Index() {
		mark, idStyle = d.c.st.Selected.wrap("▌")+" ", d.c.st.FocusTitle
	}
	note := inertLine(it.note)
	if it.id == d.c.model && it.note != "active" {
		note += " · active"
	}
	// Columns: model ID, tier badge, note. An ID is never cut to fit its
	// column (two IDs that differ only in their end would look the same):
	// a longer one pushes the tier and note along, and they are cut instead.
	idW := max(m.Width()/2, 12)
	id := inertLine(it.id)
	pad := max(idW-lipgloss.Width(id), 0)
	badge := it.tierLine + spaces(max(18-lipgloss.Width(it.tierLine), 0))
	row := mark + idStyle.Render(id) + spaces(pad) + "  " + badge + " " + d.c.st.Muted.Render(note)
	fmt.Fprint(w, ansi.Truncate(row, m.Width(), "…"))
}

// picker chooses the active model among configured and catalogue models,
// each shown with the tier it maps to under the policy.
type picker struct {
	c *common
	l list.Model
}

// modelItems makes the picker's entries once: a model's tier depends only
// on the policy, and catalogues list a thousand models or more.
func modelItems(c *common, choices []ModelChoice) []list.Item {
	items := make([]list.Item, 0, len(choices))
	for _, ch := range choices {
		items = append(items, modelItem{id: ch.ID, note: ch.Note, tierLine: c.st.tierBadge(tierOf(c, ch.ID))})
	}
	return items
}

// newPicker opens on the active model; one typed in by hand (not among the
// choices) is added for this opening.
func newPicker(c *common, choices []list.Item) *picker {
	items, sel := choices, -1
	for i, it := range items {
		if it.(modelItem).id == c.model {
			sel = i
		}
	}
	if sel < 0 && c.model != "" {
		items = append(append(make([]list.Item, 0, len(choices)+1), choices...),
			modelItem{id: c.model, note: "active", tierLine: c.st.tierBadge(tierOf(c, c.model))})
		sel = len(items) - 1
	}
	l := newList(c, items, modelDelegate{c: c}, 60, 12, 0, "model", "models")
	l.Title = "Switch model: what is sent follows its tier"
	l.Styles.Title = c.st.DialogTitle
	l.Filter = rankModels
	l.Select(max(sel, 0))
	return &picker{c: c, l: l}
}

// update handles a key; it returns the chosen model when one is chosen and
// closed when the picker is done (chosen or cancelled).
func (p *picker) update(msg tea.KeyMsg) (chosen string, closed bool, cmd tea.Cmd) {
	k := p.c.keys
	if p.l.SettingFilter() {
		switch {
		case msg.Type == tea.KeyCtrlC:
			p.l.ResetFilter()
			return "", false, nil
		case key.Matches(msg, k.Choose):
			// enter while filtering: a whole model ID typed is used as typed
			// unless a listed model has exactly that ID (the nearest match
			// may be another model, of another tier); else the highlighted
			// match.
			if v, ok := p.typedID(); ok {
				return v, true, nil
			}
			if it, ok := p.l.SelectedItem().(modelItem); ok && len(p.l.VisibleItems()) > 0 {
				return it.id, true, nil
			}
		}
		p.l, cmd = p.l.Update(msg)
		return "", false, cmd
	}
	switch {
	case key.Matches(msg, k.Choose):
		if it, ok := p.l.SelectedItem().(modelItem); ok {
			return it.id, true, nil
		}
	case key.Matches(msg, k.Close), msg.String() == "q", msg.Type == tea.KeyCtrlC:
		if p.l.IsFiltered() && msg.Type == tea.KeyEsc {
			p.l.ResetFilter()
			return "", false, nil
		}
		return "", true, nil
	}
	p.l, cmd = p.l.Update(msg)
	return "", false, cmd
}

// typedID is the filter text when it is a whole model ID (provider/model)
// that no listed model has exactly.
func (p *picker) typedID() (string, bool) {
	v := strings.TrimSpace(p.l.FilterValue())
	if !strings.Contains(v, "/") || strings.ContainsAny(v, " \t") || strings.HasSuffix(v, "/") {
		return "", false
	}
	for _, it := range p.l.Items() {
		if it.(modelItem).id == v {
			return "", false
		}
	}
	return v, true
}

// rankModels filters the picker: an exact ID first, then IDs it begins,
// then those where it begins a word (after / - . or _), then any that
// hold it. No fuzzy matching: /ollama lists the IDs that hold "ollama",
// not every ID with its letters in that order (35 llama models); with none,
// the picker says so and how to use an ID as typed.
func rankModels(term string, targets []string) []list.Rank {
	term = strings.ToLower(strings.TrimSpace(term))
	type ranked struct {
		r     list.Rank
		class int
	}
	var hits []ranked
	for i, t := range targets {
		id, _, _ := strings.Cut(strings.ToLower(t), " ")
		at := strings.Index(id, term)
		if at < 0 {
			continue
		}
		class := 3
		switch {
		case id == term:
			class = 0
		case at == 0:
			class = 1
		case strings.ContainsRune("/-._", rune(id[at-1])):
			class = 2
		}
		idx := make([]int, len(term))
		for k := range idx {
			idx[k] = at + k
		}
		hits = append(hits, ranked{list.Rank{Index: i, MatchedIndexes: idx}, class})
	}
	if len(hits) == 0 {
		return nil
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].class < hits[b].class })
	out := make([]list.Rank, len(hits))
	for i, h := range hits {
		out[i] = h.r
	}
	return out
}

// passThrough hands the list its non-key messages (filter results).
func (p *picker) passThrough(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	p.l, cmd = p.l.Update(msg)
	return cmd
}

func (p *picker) typing() bool { return p.l.SettingFilter() }

func (p *picker) view(width, height int) string {
	// While a filter is typed the list shows it in place of its title, so
	// what enter will do goes on a line of its own below the list.
	hint := ""
	if p.l.SettingFilter() {
		if v, ok := p.typedID(); ok {
			hint = "enter uses " + inertLine(v) + " as typed: " + p.c.st.tierBadge(tierOf(p.c, v))
		} else if v := strings.TrimSpace(p.l.FilterValue()); v != "" && len(p.l.VisibleItems()) == 0 {
			hint = "no model ID holds " + strconv.Quote(inertLine(v)) + "; type provider/model to use one as typed"
		}
	}
	w := min(width-4, 76)
	h := min(height-2, len(p.l.Items())+9)
	p.l.SetSize(w-4, max(h-3, 5))
	fitPages(&p.l)
	body := p.l.View() + "\n" + p.c.st.Muted.Render(ansi.Truncate(hint, w-6, "…"))
	return p.c.st.Dialog.Width(w - 2).Render(body)
}

func (p *picker) ShortHelp() []key.Binding {
	k := p.c.keys
	if p.typing() {
		return []key.Binding{k.Choose, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter"))}
	}
	return []key.Binding{k.Up, k.Down, k.Choose, key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")), k.Close}
}

func (p *picker) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }
