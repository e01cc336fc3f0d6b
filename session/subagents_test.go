package session

import (
	"fmt"
	"slices"
	"testing"
)

// TestParentOrigins: each importer's subagent origin names its parent's; a
// session that is no one's subagent names none; an ambiguous mark names
// every reading. The importers' own tests
// check the links on sessions they import (importtest.Linked).
func TestParentOrigins(t *testing.T) {
	for _, tc := range []struct{ origin, parent string }{
		{"imported from claude: /p/a/s1/subagents/agent-x.jsonl (subagent of /p/a/s1.jsonl)", "imported from claude: /p/a/s1.jsonl"},
		{"imported from claude: /p/a/agent-x.jsonl (subagent of /p/a/s1.jsonl)", "imported from claude: /p/a/s1.jsonl"},
		{"imported from claude: /p/a/s1.jsonl (sidechain)", "imported from claude: /p/a/s1.jsonl"},
		{"imported from crush: /p/.crush/crush.db (session c1) (subagent of p1)", "imported from crush: /p/.crush/crush.db (session p1)"},
		{"imported from opencode: /d/opencode.db (session ses_2) (subagent of ses_1)", "imported from opencode: /d/opencode.db (session ses_1)"},
		// A folder named like a mark: the last mark is the link.
		{"imported from claude: /p/x (subagent of y)/agent-1.jsonl (subagent of /p/x (subagent of y)/s.jsonl)", "imported from claude: /p/x (subagent of y)/s.jsonl"},
		{"imported from codex: /c/2025/09/01/rollout-2025-09-01T10-00-05-0199a1b2-ffff-7e5f-8a9b-0c1d2e3f4a5b.jsonl (subagent of thread 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b)", "imported from codex: thread 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
		{"imported from gemini: /g/tmp/ab12/chats/8f3c2d1e-0000-4000-8000-000000000001/4b5a.jsonl (subagent of session 8f3c2d1e-0000-4000-8000-000000000001)", "imported from gemini: /g/tmp/ab12/chats session 8f3c2d1e"},
		{"imported from claude: /p/a/s1.jsonl", ""},
		{"imported from crush: /p/.crush/crush.db (session p1)", ""},
		{"imported from codex: /c/rollout.jsonl", ""},
		{"", ""},
		{"made in scrim (subagent of x)", ""},
		{" (sidechain)", ""},
		{"imported from claude: /p/a/agent-x.jsonl (subagent of )", ""},
	} {
		got := ParentOrigins(tc.origin)
		if tc.parent == "" && got != nil || tc.parent != "" && !slices.Contains(got, tc.parent) {
			t.Errorf("ParentOrigins(%q) = %q; want %q", tc.origin, got, tc.parent)
		}
	}
}

// TestSubagentsFollowTheStore: the links are read again once sessions are
// made or deleted, so a subagent made after its parent was asked about is
// found, and a deleted one is not; a subagent's subagent is one too.
func TestSubagentsFollowTheStore(t *testing.T) {
	s := openTest(t)
	create := func(origin string) string {
		t.Helper()
		h, err := s.Create(Header{Title: origin, Origin: origin})
		if err != nil {
			t.Fatal(err)
		}
		return h.ID
	}
	subs := func(id string) []string {
		t.Helper()
		hs, err := s.Subagents(id)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hs {
			ids = append(ids, h.ID)
		}
		slices.Sort(ids)
		return ids
	}
	parent := create("imported from claude: /p/s.jsonl")
	create("imported from claude: /p/t.jsonl")
	if got := subs(parent); got != nil {
		t.Fatalf("subagents before any: %q", got)
	}
	a := create("imported from claude: /p/s/subagents/agent-a.jsonl (subagent of /p/s.jsonl)")
	if got := subs(parent); !slices.Equal(got, []string{a}) {
		t.Fatalf("subagents %q, want %q", got, a)
	}
	side := create("imported from claude: /p/s/subagents/agent-a.jsonl (sidechain)")
	want := []string{a, side}
	slices.Sort(want)
	if got := subs(parent); !slices.Equal(got, want) {
		t.Fatalf("subagents %q, want %q (a subagent's sidechain is the parent's too)", got, want)
	}
	if up, err := s.Parents(side); err != nil || len(up) != 2 {
		t.Fatalf("parents of the sidechain: %v %v, want its subagent and the main session", up, err)
	}
	if err := s.Delete(side); err != nil {
		t.Fatal(err)
	}
	if got := subs(parent); !slices.Equal(got, []string{a}) {
		t.Fatalf("subagents after a delete %q, want %q", got, a)
	}
	// A Codex rollout is named after its thread, which its agents'
	// rollouts name.
	codex := create("imported from codex: /c/2025/09/01/rollout-2025-09-01T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
	agent := create("imported from codex: /c/2025/09/01/rollout-2025-09-01T10-00-05-0199a1b2-ffff-7e5f-8a9b-0c1d2e3f4a5b.jsonl (subagent of thread 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b)")
	create("imported from codex: /c/2025/09/01/rollout-2025-09-01T10-00-09-not-a-thread.jsonl")
	if got := subs(codex); !slices.Equal(got, []string{agent}) {
		t.Fatalf("the Codex rollout's subagents %q, want %q", got, agent)
	}
	if up, err := s.Parents(agent); err != nil || len(up) != 1 || up[0].ID != codex {
		t.Fatalf("the Codex agent's parents %v %v, want %s", up, err, codex)
	}
	// A Gemini CLI subagent's file is in a folder named after its
	// parent's whole ID, whose own file has the first 8 of it.
	gem := create("imported from gemini: /g/tmp/ab12/chats/session-2026-01-05T10-00-8f3c2d1e.jsonl")
	create("imported from gemini: /g/tmp/ab12/chats/session-2026-01-05T11-00-0badcafe.jsonl")
	gemSub := create("imported from gemini: /g/tmp/ab12/chats/8f3c2d1e-0000-4000-8000-000000000001/4b5a.jsonl (subagent of session 8f3c2d1e-0000-4000-8000-000000000001)")
	if got := subs(gem); !slices.Equal(got, []string{gemSub}) {
		t.Fatalf("the Gemini session's subagents %q, want %q", got, gemSub)
	}
	if got := subs(create("made in scrim")); got != nil {
		t.Fatalf("a session made in scrim has subagents %q", got)
	}
}

// BenchmarkSubagents: a session's subagents in a store of 5,000 imported
// sessions (a large ~/.claude: a fifth of them subagents), read from every
// header (cold: the first question), after a session changed (an import's),
// and from the links read before (warm).
func BenchmarkSubagents(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var parent string
	for i := range 4000 {
		h, err := s.Create(Header{Origin: fmt.Sprintf("imported from claude: /home/me/.claude/projects/-home-me-p%d/%d.jsonl", i%40, i)})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			parent = h.ID
		}
	}
	for i := range 1000 {
		o := fmt.Sprintf("imported from claude: /home/me/.claude/projects/-home-me-p%d/%d/subagents/agent-%d.jsonl (subagent of /home/me/.claude/projects/-home-me-p%d/%d.jsonl)", (i*4)%40, i*4, i, (i*4)%40, i*4)
		if _, err := s.Create(Header{Origin: o}); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		touch func()
	}{
		{"cold", func() { s.links.mu.Lock(); s.links.read = false; s.links.mu.Unlock() }},
		{"one changed", func() { s.links.changed(parent) }},
		{"warm", func() {}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				tc.touch()
				subs, err := s.Subagents(parent)
				if err != nil || len(subs) != 1 {
					b.Fatalf("%d subagents, %v", len(subs), err)
				}
			}
		})
	}
}
