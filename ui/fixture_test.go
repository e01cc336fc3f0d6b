package ui

import (
	"encoding/json"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// The fixture's paths live under /demo, which does not exist: policy
// decisions on them are pure (no symlinks to resolve), so golden files do
// not depend on the machine.
const fixturePolicy = `
default_tier = "public"

[tiers.trusted]
label = "trusted"
read  = ["/**"]

[tiers.limited]
label = "limited"
read  = ["/demo/**"]
deny  = ["/demo/secrets/**", "/demo/.env"]
derived = "redact"
secrets = "redact"

[tiers.public]
label = "public"
read  = ["/demo/docs/**"]

[[models]]
match = "demo/trusted"
tier  = "trusted"

[[models]]
match = "demo/limited"
tier  = "limited"

[[models]]
match = "demo/public"
tier  = "public"
`

var fixtureTime = time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)

func init() {
	lipgloss.SetColorProfile(termenv.Ascii)
}

func fixturePolicyT(t testing.TB) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(fixturePolicy), "/demo/policy.toml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func openStore(t testing.TB, dir string) *session.Store {
	t.Helper()
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.Now = func() time.Time { return fixtureTime }
	t.Cleanup(func() { st.Close() })
	return st
}

func text(role session.Role, s string) *session.Message {
	return &session.Message{Role: role, Parts: []session.Part{{Kind: session.PartText, Text: s}}}
}

func call(id, tool string, input any, say string) *session.Message {
	in, _ := json.Marshal(input)
	m := &session.Message{Role: session.RoleAssistant, Model: "demo/trusted"}
	if say != "" {
		m.Parts = append(m.Parts, session.Part{Kind: session.PartText, Text: say})
	}
	m.Parts = append(m.Parts, session.Part{Kind: session.PartToolCall, CallID: id, Name: tool, Input: in})
	return m
}

// result is a tool result whose parts come from files: pairs of (path, text);
// path "" is a part that is not file content.
func result(id, tool string, pairs ...string) *session.Message {
	m := &session.Message{Role: session.RoleTool, Tool: tool, ToolCallID: id, Model: "demo/trusted"}
	for i := 0; i+1 < len(pairs); i += 2 {
		m.Parts = append(m.Parts, session.Part{Kind: session.PartToolResult, SourcePath: pairs[i], Text: pairs[i+1]})
	}
	m.SyncSourcePaths()
	return m
}

// seedFixture writes two sessions: a short tour, and the API-key hunt with
// content from allowed and denied files (the second is the most recent).
func seedFixture(t testing.TB, st *session.Store) (tour, hunt string) {
	t.Helper()
	at := fixtureTime.Add(-2 * time.Hour)
	add := func(sid string, msgs ...*session.Message) {
		for _, m := range msgs {
			at = at.Add(7 * time.Second)
			m.CreatedAt = at
		}
		if err := st.Append(sid, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	h, err := st.Create(session.Header{Title: "Tour of the project"})
	if err != nil {
		t.Fatal(err)
	}
	tour = h.ID
	add(tour,
		text(session.RoleUser, "Give me a tour of the project."),
		call("c1", "read", map[string]any{"path": "docs/overview.md"}, "Starting with the overview."),
		result("c1", "read", "/demo/docs/overview.md", "     1\t# Overview\n     2\tA tiny service that greets people.\n     3\tConfiguration comes from .env."),
		text(session.RoleAssistant, "It is a tiny greeting service configured from .env."),
	)
	st.Now = func() time.Time { return fixtureTime.Add(time.Minute) }
	h, err = st.Create(session.Header{Title: "Where is the API key used?"})
	if err != nil {
		t.Fatal(err)
	}
	hunt = h.ID
	add(hunt,
		text(session.RoleUser, "Where is the API key used?"),
		call("c1", "grep", map[string]any{"pattern": "API_KEY"}, "Let me search the workspace."),
		result("c1", "grep",
			"/demo/src/config.go", "/demo/src/config.go:7:\tkey := os.Getenv(\"API_KEY\")",
			"/demo/.env", "/demo/.env:1:API_KEY=sk-demo-4f9a2c",
			"/demo/secrets/api.key", "/demo/secrets/api.key:1:API_KEY=sk-live-DO-NOT-SHARE"),
		call("c2", "read", map[string]any{"path": "secrets/api.key"}, ""),
		result("c2", "read", "/demo/secrets/api.key", "     1\tAPI_KEY=sk-live-DO-NOT-SHARE\n     2\tissued=2025-01-01"),
		&session.Message{Role: session.RoleEvent, Parts: []session.Part{{Kind: session.PartText, Text: "model switched from demo/trusted (tier trusted) to demo/limited (tier limited)"}}},
		call("c3", "bash", map[string]any{"command": "wc -l src/*.go"}, ""),
		result("c3", "bash", "", "  12 src/config.go\n  20 src/main.go\n  32 total"),
		text(session.RoleAssistant, "The key is read from the environment in src/config.go; the real one lives in secrets/api.key."),
	)
	st.Now = func() time.Time { return fixtureTime }
	return tour, hunt
}

func fixtureConfig(t testing.TB, st *session.Store, model string) Config {
	return Config{
		Store:    st,
		StoreDir: "/demo/store",
		Policy:   fixturePolicyT(t),
		Models: []ModelChoice{
			{ID: "demo/trusted", Note: "demo"},
			{ID: "demo/limited", Note: "demo"},
			{ID: "demo/public", Note: "demo"},
			{ID: "anthropic/claude-sonnet-4-5", Note: "catalogue"},
		},
		Model:    model,
		Now:      func() time.Time { return fixtureTime.Add(5 * time.Minute) },
		Location: time.UTC,
	}
}

// drive feeds msgs to m and runs every command they return, synchronously
// and to completion, feeding results back: the state after drive is what
// the program shows once all loads, builds and counts are done.
func drive(m *Model, msgs ...tea.Msg) {
	for _, msg := range msgs {
		_, cmd := m.Update(msg)
		runCmd(m, cmd)
	}
}

func runCmd(m *Model, cmd tea.Cmd) { runHolding(m, cmd, nil, nil) }

// runHolding is runCmd that keeps back in *held, not handed to Update, the
// messages hold picks.
func runHolding(m *Model, cmd tea.Cmd, hold func(tea.Msg) bool, held *[]tea.Msg) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			runHolding(m, c, hold, held)
		}
	case tea.QuitMsg:
	default:
		if hold != nil && hold(msg) {
			*held = append(*held, msg)
			return
		}
		_, next := m.Update(msg)
		runHolding(m, next, hold, held)
	}
}

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func keys(ss ...string) []tea.Msg {
	out := make([]tea.Msg, len(ss))
	for i, s := range ss {
		out[i] = keyMsg(s)
	}
	return out
}

// headers are the sessions the list holds, in order.
func (s *sessionList) headers() []session.Header {
	var out []session.Header
	for _, it := range s.l.Items() {
		out = append(out, it.(sessionItem).h)
	}
	return out
}
