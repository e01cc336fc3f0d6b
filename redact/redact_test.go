package redact

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tools"
)

// testPolicy is the shared three tiers with the limited one labelled apart
// from its name: placeholders and reports must show the label.
var testPolicy = policytest.Labelled("limited cloud")

// fixture is a real work tree and a history made by the real tools under the
// trusted model, as an agent session would hold it.
type fixture struct {
	root string
	pol  *policy.Policy
	msgs []session.Message
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root, err := policy.Canonical(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"src/main.go":        "package main // TOKEN in main\n",
		"secrets/api.key":    "TOKEN=sk-secret-1\n",
		"secrets/second.key": "TOKEN=sk-secret-2\n",
		"docs/readme.md":     "no token here\n",
		"show.sh":            "cat secrets/api.key\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := fixture{root: root, pol: policytest.Policy(t, testPolicy)}
	env := tools.Env{Policy: f.pol, Model: "trusted/a", WorkDir: root}
	run := func(name string, in any) session.Message {
		tool, _ := tools.Lookup(name)
		raw, _ := json.Marshal(in)
		res := tool.Run(context.Background(), env, raw)
		if res.Message.IsError {
			t.Fatalf("%s: %s", name, res.Message.Text())
		}
		return res.Message
	}
	text := func(role session.Role, s string) session.Message {
		return session.Message{Role: role, Model: "trusted/a", Parts: []session.Part{{Kind: session.PartText, Text: s}}}
	}
	f.msgs = []session.Message{
		text(session.RoleUser, "look at the keys"),
		run("read", map[string]any{"path": "secrets/api.key"}), // 1: denied for limited
		run("read", map[string]any{"path": "src/main.go"}),     // 2: allowed
		run("grep", map[string]any{"pattern": "TOKEN"}),        // 3: mixed
		run("bash", map[string]any{"command": "bash show.sh"}), // 4: a script: unknown source, no sourcePaths
		run("glob", map[string]any{"pattern": "**/*.key"}),     // 5: names only
		{Role: session.RoleEvent, Parts: []session.Part{{Kind: session.PartText, Text: "model switched from trusted/a (tier all) to limited/b (tier limited)"}}},
		text(session.RoleAssistant, "done"),
	}
	for i := range f.msgs {
		f.msgs[i].ID = string(rune('a' + i))
	}
	return f
}

// deepCopy copies msgs and every slice reachable from them.
func deepCopy(msgs []session.Message) []session.Message {
	if msgs == nil {
		return nil
	}
	out := make([]session.Message, len(msgs))
	for i, m := range msgs {
		out[i] = m
		if m.Parts != nil {
			out[i].Parts = make([]session.Part, len(m.Parts))
			for j, p := range m.Parts {
				out[i].Parts[j] = p
				if p.Input != nil {
					out[i].Parts[j].Input = append(json.RawMessage{}, p.Input...)
				}
			}
		}
		if m.Meta.SourcePaths != nil {
			out[i].Meta.SourcePaths = append([]string{}, m.Meta.SourcePaths...)
		}
	}
	return out
}

func TestHistoryOnRealToolResults(t *testing.T) {
	f := newFixture(t)
	before := deepCopy(f.msgs)
	out, rep := History(f.msgs, "limited/b", f.pol)
	key := filepath.Join(f.root, "secrets", "api.key")
	second := filepath.Join(f.root, "secrets", "second.key")
	ph := func(p string) string { return Placeholder(p, "limited cloud") }

	if len(out) != len(f.msgs)-1 {
		t.Fatalf("%d messages, want %d (the event dropped)", len(out), len(f.msgs)-1)
	}
	t.Run("denied path becomes the placeholder", func(t *testing.T) {
		m := out[1]
		want := `[Content from ` + key + ` filtered — trust tier "limited cloud" does not have read access]`
		if len(m.Parts) != 1 || m.Parts[0].Text != want || !m.Parts[0].Redacted || m.Parts[0].SourcePath != key {
			t.Fatalf("parts %+v", m.Parts)
		}
		if !slices.Equal(m.Meta.SourcePaths, []string{key}) || m.ID != "b" || m.Tool != "read" {
			t.Fatalf("message identity changed: %+v", m)
		}
	})
	t.Run("allowed path unchanged", func(t *testing.T) {
		if !reflect.DeepEqual(out[2], before[2]) {
			t.Fatalf("got %+v\nwant %+v", out[2], before[2])
		}
	})
	t.Run("no sourcePaths unchanged", func(t *testing.T) {
		for _, i := range []int{0, 4, 5} {
			if !reflect.DeepEqual(out[i], before[i]) {
				t.Fatalf("message %d: got %+v\nwant %+v", i, out[i], before[i])
			}
		}
		if !strings.Contains(out[4].Text(), "sk-secret-1") {
			t.Fatal("bash output is not file content and is passed through (unknown source)")
		}
		if out[6].ID != "h" {
			t.Fatalf("order after the event: %q", out[6].ID)
		}
	})
	t.Run("mixed grep: only the denied files' parts replaced", func(t *testing.T) {
		in, m := before[3], out[3]
		if len(in.Parts) != 3 || len(m.Parts) != 3 { // api.key, second.key, main.go; no note
			t.Fatalf("grep parts: in %d, out %d: %q", len(in.Parts), len(m.Parts), m.Text())
		}
		for i, p := range m.Parts {
			switch in.Parts[i].SourcePath {
			case key, second:
				if p.Text != ph(in.Parts[i].SourcePath) || !p.Redacted {
					t.Errorf("part %d: %q", i, p.Text)
				}
			default:
				if !reflect.DeepEqual(p, in.Parts[i]) {
					t.Errorf("part %d changed: %q", i, p.Text)
				}
			}
		}
		if strings.Contains(m.Text(), "sk-secret") {
			t.Fatalf("leak: %q", m.Text())
		}
	})
	t.Run("report", func(t *testing.T) {
		want := Report{
			Tier: Tier{Name: "limited", Label: "limited cloud"}, Messages: 7, RedactedMessages: 2, RedactedParts: 3,
			UnknownSource: 1, Events: 1, // the script's output; glob's names are no file's content
			DeniedPaths: []DeniedPath{ // the deny pattern is on line 12 of policytest.Tiers
				{Path: key, Pattern: "**/secrets/**", Line: 12, Reason: `deny pattern "**/secrets/**" matches`},
				{Path: second, Pattern: "**/secrets/**", Line: 12, Reason: `deny pattern "**/secrets/**" matches`},
			},
			DerivedFrom: []PathCount{}, SecretRules: []RuleCount{},
		}
		if !reflect.DeepEqual(rep, want) {
			t.Fatalf("report %+v\nwant %+v", rep, want)
		}
	})
	t.Run("input not mutated", func(t *testing.T) {
		if !reflect.DeepEqual(f.msgs, before) {
			t.Fatal("History changed its input")
		}
		// Writing through the output must not reach the input either.
		for i := range out {
			for j := range out[i].Parts {
				out[i].Parts[j].Text = "overwritten"
				if out[i].Parts[j].Input != nil {
					out[i].Parts[j].Input[0] = 'X'
				}
			}
			if len(out[i].Meta.SourcePaths) > 0 {
				out[i].Meta.SourcePaths[0] = "/overwritten"
			}
			out[i].Parts = append(out[i].Parts, session.Part{Text: "appended"})
		}
		if !reflect.DeepEqual(f.msgs, before) {
			t.Fatal("the output shares storage with the input")
		}
	})
	t.Run("switch back shows the stored history", func(t *testing.T) {
		back, rep := History(f.msgs, "trusted/a", f.pol)
		want := slices.Delete(deepCopy(f.msgs), 6, 7)
		if !reflect.DeepEqual(back, want) {
			t.Fatalf("trusted view differs from the stored history")
		}
		if rep.RedactedParts != 0 || len(rep.DeniedPaths) != 0 {
			t.Fatalf("report %+v", rep)
		}
	})
}

func TestHistoryWholeMessageAttribution(t *testing.T) {
	pol := policytest.Policy(t, testPolicy)
	msg := func(paths []string, parts ...session.Part) session.Message {
		return session.Message{Role: session.RoleTool, Tool: "read", Parts: parts, Meta: session.Meta{SourcePaths: paths}}
	}
	txt := func(s, src string) session.Part {
		return session.Part{Kind: session.PartText, Text: s, SourcePath: src}
	}
	ph := func(p string) session.Part {
		return session.Part{Kind: session.PartText, Text: Placeholder(p, "limited cloud"), SourcePath: p, Redacted: true}
	}
	for _, tc := range []struct {
		name string
		in   session.Message
		want []session.Part
	}{
		{"imported, one denied path", msg([]string{"/w/secrets/a", "/w/ok"}, txt("a and ok", "")), []session.Part{ph("/w/secrets/a")}},
		{"imported, two denied paths in order", msg([]string{"/w/secrets/b", "/w/ok", "/w/secrets/a"}, txt("x", ""), txt("y", "")), []session.Part{ph("/w/secrets/b"), ph("/w/secrets/a")}},
		{"imported, all allowed", msg([]string{"/w/ok"}, txt("fine", "")), []session.Part{txt("fine", "")}},
		{"consecutive parts of one path collapse", msg([]string{"/w/secrets/a", "/w/ok"}, txt("1", "/w/secrets/a"), txt("2", "/w/secrets/a"), txt("3", "/w/ok"), txt("4", "/w/secrets/a")),
			[]session.Part{ph("/w/secrets/a"), txt("3", "/w/ok"), ph("/w/secrets/a")}},
		{"different denied paths do not collapse", msg([]string{"/w/secrets/a", "/w/secrets/b"}, txt("1", "/w/secrets/a"), txt("2", "/w/secrets/b")),
			[]session.Part{ph("/w/secrets/a"), ph("/w/secrets/b")}},
		{"a denied path no part carries takes the whole message", msg([]string{"/w/ok", "/w/secrets/a"}, txt("ok part", "/w/ok"), txt("unattributed", "")),
			[]session.Part{ph("/w/secrets/a")}},
		{"parts attributed but sourcePaths missing: parts still decide", msg(nil, txt("s", "/w/secrets/a"), txt("n", "")),
			[]session.Part{ph("/w/secrets/a"), txt("n", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := deepCopy([]session.Message{tc.in})
			out, _ := History([]session.Message{tc.in}, "limited/x", pol)
			if !reflect.DeepEqual(out[0].Parts, tc.want) {
				t.Fatalf("parts %+v\nwant  %+v", out[0].Parts, tc.want)
			}
			if !reflect.DeepEqual([]session.Message{tc.in}, before) {
				t.Fatal("input mutated")
			}
		})
	}
}

func TestDefaultTierAndUndecidablePathsFailClosed(t *testing.T) {
	pol := policytest.Policy(t, testPolicy)
	in := []session.Message{{Role: session.RoleTool, Parts: []session.Part{{Kind: session.PartText, Text: "x", SourcePath: "/etc/hosts"}, {Kind: session.PartText, Text: "y", SourcePath: "/bad\x00path"}}, Meta: session.Meta{SourcePaths: []string{"/etc/hosts", "/bad\x00path"}}}}
	out, rep := History(in, "unknown/model", pol)
	if rep.Tier.Name != "none" || len(out[0].Parts) != 2 || !out[0].Parts[0].Redacted || !out[0].Parts[1].Redacted {
		t.Fatalf("report %+v, parts %+v", rep, out[0].Parts)
	}
	out, _ = History(in, "trusted/x", pol)
	if out[0].Parts[0].Redacted || !out[0].Parts[1].Redacted {
		t.Fatalf("an undecidable path must be denied even for a read-all tier: %+v", out[0].Parts)
	}
}

// TestDecisionsAreMemoised counts policy decisions: one per distinct path,
// whether the history is cut as usual or into seven chunks, each noting the
// same paths in a map of its own.
func TestDecisionsAreMemoised(t *testing.T) {
	pol := policytest.Policy(t, testPolicy)
	for _, tc := range []struct {
		distinct int
		l        layout
	}{{50, defaultLayout}, {5000, defaultLayout}, {50, layout{chunkMin: 1, maxChunks: 7, block: 3}}, {5000, layout{chunkMin: 1, maxChunks: 7, block: 3}}} {
		distinct := tc.distinct
		t.Run(fmt.Sprintf("%d paths, %+v", distinct, tc.l), func(t *testing.T) {
			msgs := make([]session.Message, 10000)
			var order []string
			seen := map[string]bool{}
			for i := range msgs {
				k := (i * 7) % distinct
				path := fmt.Sprintf("/work/%s/file%d.txt", []string{"src", "secrets"}[k%2], k)
				if !seen[path] {
					seen[path] = true
					order = append(order, path)
				}
				msgs[i] = session.Message{Role: session.RoleTool, Parts: []session.Part{{Kind: session.PartText, Text: "c", SourcePath: path}}, Meta: session.Meta{SourcePaths: []string{path}}}
			}
			if len(seen) != distinct {
				t.Fatalf("fixture has %d distinct paths, want %d", len(seen), distinct)
			}
			start := pol.DecisionCount()
			out, rep, _ := history(msgs, "limited/x", pol, Context{}, tc.l, false)
			if n := pol.DecisionCount() - start; n != uint64(distinct) {
				t.Fatalf("%d decisions for %d distinct paths", n, distinct)
			}
			var wantDenied []string
			for _, p := range order {
				if strings.Contains(p, "/secrets/") {
					wantDenied = append(wantDenied, p)
				}
			}
			var gotDenied []string
			for _, d := range rep.DeniedPaths {
				gotDenied = append(gotDenied, d.Path)
			}
			if !slices.Equal(gotDenied, wantDenied) {
				t.Fatalf("denied paths not in order of first appearance")
			}
			for i, m := range out {
				if m.Parts[0].Redacted != strings.Contains(msgs[i].Parts[0].SourcePath, "/secrets/") {
					t.Fatalf("message %d decided wrongly: %+v", i, m.Parts[0])
				}
			}
		})
	}
}

func TestNamesFile(t *testing.T) {
	const path = "/home/dev/shop/secrets/notes.env"
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{path, true},
		{"secrets/notes.env", true},
		{"./secrets/notes.env", true},
		{"notes.env", true},
		{"/notes.env", false},       // another file, absolute
		{"tes.env", false},          // not a whole name
		{"/home/dev/shop", false},   // its folder
		{"LAUNCH=notes.env", false}, // content that ends with its name
		{"", false},
		{"./", false},
	} {
		if got := namesFile(tt.s, path); got != tt.want {
			t.Errorf("namesFile(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
