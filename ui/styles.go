package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/scrim-dev/scrim/policy"
)

// ink is an inline text style reduced to the escape sequences around the
// text. Message bodies are styled segment by segment; going through lipgloss
// for each would dominate the cost of rendering a long transcript.
type ink struct{ pre, post string }

func (k ink) wrap(s string) string {
	if k.pre == "" || s == "" {
		return s
	}
	return k.pre + s + k.post
}

// inkOf captures what st puts around a text. Style sequences never contain
// the letter x, so the rendered "x" splits them apart.
func inkOf(st lipgloss.Style) ink {
	r := st.Render("x")
	i := strings.IndexByte(r, 'x')
	if i < 0 {
		return ink{}
	}
	return ink{pre: r[:i], post: r[i+1:]}
}

// styles is the semantic palette, built once per program. Meaning never rests
// on colour alone: placeholders keep their brackets, denials and unknown
// sources carry a word or a symbol too.
type styles struct {
	// lipgloss styles for layout pieces
	App, Title, FocusTitle, Muted, Rule, Status, Error, Dialog, DialogTitle, Key, KeyDesc lipgloss.Style
	TierOpen, TierLimited, TierClosed                                                     lipgloss.Style

	// inks for message bodies (see ink)
	Text, Dim, Placeholder, Denied, Unknown, Event, Err, Call, Path, Selected ink
	Hit                                                                       ink // a match of the find
	User, Assistant, Tool, System                                             ink
	HeaderRule                                                                ink

	// the layout styles above as inks, for what is drawn on every frame
	AppInk, TitleInk, FocusTitleInk, MutedInk, KeyInk, DescInk, ErrorInk, RuleInk ink

	sep string // between the stored and the sent pane
}

func newStyles() *styles {
	accent := lipgloss.AdaptiveColor{Light: "#5A56E0", Dark: "#8B87FF"}
	muted := lipgloss.AdaptiveColor{Light: "#7A7A7A", Dark: "#8A8A8A"}
	denied := lipgloss.AdaptiveColor{Light: "#C0392B", Dark: "#FF6B6B"}
	warn := lipgloss.AdaptiveColor{Light: "#A66300", Dark: "#F5B041"}
	good := lipgloss.AdaptiveColor{Light: "#1E8449", Dark: "#58D68D"}
	onBadge := lipgloss.Color("#101010")

	s := &styles{
		App:         lipgloss.NewStyle().Bold(true).Foreground(accent),
		Title:       lipgloss.NewStyle().Bold(true),
		FocusTitle:  lipgloss.NewStyle().Bold(true).Foreground(accent).Underline(true),
		Muted:       lipgloss.NewStyle().Foreground(muted),
		Rule:        lipgloss.NewStyle().Foreground(muted),
		Status:      lipgloss.NewStyle(),
		Error:       lipgloss.NewStyle().Foreground(denied).Bold(true),
		Dialog:      lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		DialogTitle: lipgloss.NewStyle().Bold(true).Foreground(accent),
		Key:         lipgloss.NewStyle().Bold(true),
		KeyDesc:     lipgloss.NewStyle().Foreground(muted),
		TierOpen:    lipgloss.NewStyle().Background(good).Foreground(onBadge),
		TierLimited: lipgloss.NewStyle().Background(warn).Foreground(onBadge),
		TierClosed:  lipgloss.NewStyle().Background(denied).Foreground(onBadge),
	}
	s.Text = ink{}
	s.Dim = inkOf(lipgloss.NewStyle().Foreground(muted))
	s.Placeholder = inkOf(lipgloss.NewStyle().Background(warn).Foreground(onBadge))
	s.Denied = inkOf(lipgloss.NewStyle().Foreground(denied).Underline(true))
	s.Unknown = inkOf(lipgloss.NewStyle().Foreground(warn).Bold(true))
	s.Event = inkOf(lipgloss.NewStyle().Foreground(muted).Italic(true))
	s.Err = inkOf(lipgloss.NewStyle().Foreground(denied))
	s.Call = inkOf(lipgloss.NewStyle().Foreground(accent))
	s.Path = inkOf(lipgloss.NewStyle().Foreground(muted))
	s.Selected = inkOf(lipgloss.NewStyle().Foreground(accent).Bold(true))
	s.User = inkOf(lipgloss.NewStyle().Foreground(good).Bold(true))
	s.Assistant = inkOf(lipgloss.NewStyle().Foreground(accent).Bold(true))
	s.Tool = inkOf(lipgloss.NewStyle().Foreground(warn).Bold(true))
	s.System = inkOf(lipgloss.NewStyle().Foreground(muted).Bold(true))
	s.HeaderRule = inkOf(lipgloss.NewStyle().Foreground(muted))
	s.Hit = inkOf(lipgloss.NewStyle().Reverse(true).Bold(true))
	s.AppInk, s.TitleInk, s.FocusTitleInk = inkOf(s.App), inkOf(s.Title), inkOf(s.FocusTitle)
	s.MutedInk, s.KeyInk, s.DescInk = inkOf(s.Muted), inkOf(s.Key), inkOf(s.KeyDesc)
	s.ErrorInk, s.RuleInk = inkOf(s.Error), inkOf(s.Rule)
	s.sep = s.RuleInk.wrap(" │ ")
	return s
}

// tierClass sorts a tier into open (reads everything, denies nothing),
// closed (reads nothing) and limited (the rest), for the badge colour.
func tierClass(t *policy.Tier) int {
	switch {
	case t == nil || len(t.Read) == 0:
		return 2
	case len(t.Deny) == 0 && len(t.Read) == 1 && t.Read[0].Raw == "/**":
		return 0
	}
	return 1
}

// tierBadge renders "[tier label]"; the brackets carry the meaning without colour.
func (s *styles) tierBadge(t *policy.Tier) string {
	label := "none"
	if t != nil {
		label = inertLine(t.Label)
	}
	st := [...]lipgloss.Style{s.TierOpen, s.TierLimited, s.TierClosed}[tierClass(t)]
	return st.Render("[tier " + label + "]")
}
