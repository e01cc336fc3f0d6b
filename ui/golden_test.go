package ui

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// probe wraps the program's model so a test can wait for a frame: every
// View is kept, and waitFrame polls the latest one. Sending the next key
// only after the frame it depends on is drawn keeps the tests stable.
type probe struct {
	*Model
	frame *atomic.Value
}

func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.Model.Update(msg)
	return p, cmd
}

func (p probe) View() string {
	v := p.Model.View()
	p.frame.Store(v)
	return v
}

type prog struct {
	t  *testing.T
	tm *teatest.TestModel
	p  probe
}

func start(t *testing.T, m *Model, w, h int) *prog {
	t.Helper()
	p := probe{Model: m, frame: &atomic.Value{}}
	p.frame.Store("")
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(w, h))
	return &prog{t: t, tm: tm, p: p}
}

// waitFrame waits until the latest frame contains every one of want. The
// wait is long (frames come in milliseconds): only a frame that never
// comes should fail, not a busy machine running the race detector.
func (s *prog) waitFrame(want ...string) {
	s.t.Helper()
	deadline := time.Now().Add(frameWait)
	for {
		f := s.p.frame.Load().(string)
		ok := true
		for _, w := range want {
			if !strings.Contains(f, w) {
				ok = false
				break
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no frame with %q; last frame:\n%s", want, f)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *prog) press(k string) { s.tm.Send(keyMsg(k)) }

const frameWait = 30 * time.Second

// finish quits and compares the final frame with the golden file.
func (s *prog) finish() {
	s.t.Helper()
	if err := s.tm.Quit(); err != nil {
		s.t.Fatal(err)
	}
	fm := s.tm.FinalModel(s.t, teatest.WithFinalTimeout(frameWait))
	golden.RequireEqual(s.t, []byte(fm.View()))
}

// settled is what every fixture frame shows once loads and counts are done.
var settled = []string{"2 redacted", "0 redacted"}

func fixtureModel(t *testing.T, model string) *Model {
	st := openStore(t, t.TempDir())
	seedFixture(t, st)
	return New(fixtureConfig(t, st, model))
}

func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		model string
		w, h  int
		steps func(s *prog)
	}{
		{"split_limited", "demo/limited", 120, 40, func(s *prog) {
			s.waitFrame(append(settled, "[Content from /demo/.env filtered", "2 of 9 messages redacted")...)
		}},
		{"split_trusted", "demo/trusted", 120, 40, func(s *prog) {
			s.waitFrame("9 msgs · 0 redacted", "4 msgs · 0 redacted", "0 of 9 messages redacted")
		}},
		{"session_list", "demo/limited", 120, 40, func(s *prog) {
			s.waitFrame(settled...)
			s.press("tab")
			s.waitFrame("▸ Sessions")
			s.press("j")
			s.waitFrame("#4/4", "Give me a tour")
		}},
		{"model_picker", "demo/limited", 120, 40, func(s *prog) {
			s.waitFrame(settled...)
			s.press("m")
			s.waitFrame("Switch model", "anthropic/claude-sonnet-4-5")
		}},
		{"explain", "demo/limited", 120, 40, func(s *prog) {
			s.waitFrame(settled...)
			s.press("n")
			s.waitFrame("redaction 1/2")
			s.press("e")
			s.waitFrame("Explain #3", "deny pattern")
		}},
		{"help", "demo/limited", 120, 40, func(s *prog) {
			s.waitFrame(settled...)
			s.press("?")
			s.waitFrame("Keys", "hide unchanged")
		}},
		{"narrow_80x24", "demo/limited", 80, 24, func(s *prog) {
			// The sent side built (a placeholder drawn), not only counted.
			s.waitFrame("2/9 redacted", "Sent to demo/limited", "✖ [Content from")
			s.press("k")
			s.press("k")
			s.waitFrame("#7/9")
		}},
		{"narrow_stored_80x24", "demo/limited", 80, 24, func(s *prog) {
			// Built, not only counted: the stored side marks what is withheld.
			s.waitFrame("2/9 redacted", "Sent to demo/limited", "✖ [Content from")
			s.press("s")
			s.waitFrame("Stored  (s: sent)")
			s.press("n")
			s.waitFrame("redaction 1/2")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, fixtureModel(t, c.model), c.w, c.h)
			c.steps(s)
			s.finish()
		})
	}
}

func TestGoldenEmptyStore(t *testing.T) {
	for _, size := range []struct {
		name string
		w, h int
	}{{"120x40", 120, 40}, {"80x24", 80, 24}} {
		t.Run(size.name, func(t *testing.T) {
			st := openStore(t, t.TempDir())
			s := start(t, New(fixtureConfig(t, st, "demo/limited")), size.w, size.h)
			s.waitFrame("Welcome to scrim", "scrim demo")
			s.finish()
		})
	}
}

// Without colour, what each line is stays readable from its mark alone: a
// file whose text is a placeholder prints as content (│), a real
// placeholder and a withheld result as ✖, stored content the model does not
// get as ✗.
func TestGoldenMarks(t *testing.T) {
	st := openStore(t, t.TempDir())
	h, err := st.Create(session.Header{Title: "Marks"})
	if err != nil {
		t.Fatal(err)
	}
	fake := `[Content from /demo/.env filtered — trust tier "limited" does not have read access]`
	web := result("c3", "webfetch", "", "Release notes: version 2 is out.")
	web.Meta.UnknownSource = "content fetched from the web"
	msgs := []*session.Message{
		text(session.RoleUser, "Read the quote and the settings."),
		call("c1", "read", map[string]any{"path": "docs/quote.md"}, ""),
		result("c1", "read", "/demo/docs/quote.md", "     1\t"+fake),
		call("c2", "read", map[string]any{"path": ".env"}, ""),
		result("c2", "read", "/demo/.env", "     1\tAPI_KEY=sk-demo-4f9a2c"),
		call("c3", "webfetch", map[string]any{"url": "https://example.com"}, ""),
		web,
	}
	for i, m := range msgs {
		m.CreatedAt = fixtureTime.Add(time.Duration(i) * time.Second)
	}
	if err := st.Append(h.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	cfg := fixtureConfig(t, st, "demo/limited")
	pol, err := policy.Parse([]byte(strings.Replace(fixturePolicy, `deny  = ["/demo/secrets/**", "/demo/.env"]`,
		`deny  = ["/demo/secrets/**", "/demo/.env"]`+"\nunknown_source = \"withhold\"", 1)), "/demo/policy.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policy = pol
	s := start(t, New(cfg), 120, 30)
	s.waitFrame("Content of unknown source withheld", "2 of 7 messages redacted")
	s.finish()
}

// With no model given, an empty store does not make one up: the header
// says how to pick one instead of naming the first model and its tier.
func TestEmptyStoreHasNoModelYet(t *testing.T) {
	st := openStore(t, t.TempDir())
	s := start(t, New(fixtureConfig(t, st, "")), 120, 40)
	s.waitFrame("Welcome to scrim", "no model yet (m picks one)")
	if f := s.p.frame.Load().(string); strings.Contains(f, "[tier") {
		t.Fatalf("the header names a tier:\n%s", f)
	}
	if err := s.tm.Quit(); err != nil {
		t.Fatal(err)
	}
}

// At 60x20 the keys do not fit: the help shows a window of them, and ↓
// reaches the last (q quit).
func TestGoldenHelpScrollsAt60x20(t *testing.T) {
	s := start(t, fixtureModel(t, "demo/limited"), 60, 20)
	s.waitFrame("2/9 redacted")
	s.press("?")
	s.waitFrame("↑/↓ scroll")
	for range 30 {
		s.press("j")
	}
	s.waitFrame("q          quit", "of 26)")
	s.finish()
}
