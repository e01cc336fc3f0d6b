// Package importtest helps the importers' tests: a real store in a temp
// folder and a one-line rendering of messages that tests compare exactly.
package importtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// Store opens a real store in a temporary folder, closed when t ends.
func Store(t testing.TB) *session.Store {
	t.Helper()
	st, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Describe renders a message as one line: role, tool, model, calls, the
// sourcePaths of each part and of the message, and its note. The text is
// left out: tests check it separately where it matters.
func Describe(m *session.Message) string {
	var b strings.Builder
	b.WriteString(string(m.Role))
	if m.Tool != "" {
		b.WriteString(" " + m.Tool)
	}
	if m.IsError {
		b.WriteString(" error")
	}
	if m.Model != "" {
		b.WriteString(" model=" + m.Model)
	}
	var parts []string
	for _, p := range m.Parts {
		switch {
		case p.Kind == session.PartToolCall:
			call := "call:" + p.CallID + ":" + p.Name
			if p.SourcePath != "" {
				call += ":writes:" + p.SourcePath
			}
			parts = append(parts, call)
		case p.SourcePath != "":
			parts = append(parts, "from:"+p.SourcePath)
		default:
			parts = append(parts, string(p.Kind))
		}
	}
	fmt.Fprintf(&b, " parts=[%s]", strings.Join(parts, " "))
	if m.Meta.SourcePaths == nil {
		b.WriteString(" paths=nil")
	} else {
		fmt.Fprintf(&b, " paths=[%s]", strings.Join(m.Meta.SourcePaths, " "))
	}
	if m.Meta.Note != "" {
		b.WriteString(" note=" + m.Meta.Note)
	}
	if m.Meta.NoFiles {
		b.WriteString(" nofiles")
	}
	if m.Meta.UnknownSource != "" {
		b.WriteString(" unknown=" + m.Meta.UnknownSource)
	}
	return b.String()
}

// Compare fails t with a line-by-line diff when msgs do not render as want.
func Compare(t testing.TB, msgs []session.Message, want []string) {
	t.Helper()
	n := max(len(msgs), len(want))
	bad := false
	for i := 0; i < n; i++ {
		got, exp := "<none>", "<none>"
		if i < len(msgs) {
			got = Describe(&msgs[i])
		}
		if i < len(want) {
			exp = want[i]
		}
		if got != exp {
			bad = true
			t.Errorf("message %d:\n got  %s\n want %s", i+1, got, exp)
		}
	}
	if bad {
		t.FailNow()
	}
}

// Session returns the header and messages of the session whose title is
// title.
func Session(t testing.TB, st *session.Store, title string) (session.Header, []session.Message) {
	t.Helper()
	hs, _, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, h := range hs {
		if h.Title == title {
			msgs, bad, err := st.Messages(h.ID)
			if err != nil || len(bad) > 0 {
				t.Fatalf("messages of %s: %v %v", h.ID, err, bad)
			}
			return h, msgs
		}
		titles = append(titles, h.Title)
	}
	t.Fatalf("no session titled %q; have %q", title, titles)
	return session.Header{}, nil
}

// FuzzImport feeds arbitrary transcripts through the whole import of one
// agent's format: it must never panic, never fail on bad input (only skip
// it), and only write messages the store accepts.
func FuzzImport(f *testing.F, agent string, newParser importers.Factory) {
	st := Store(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "fuzz.jsonl")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := importers.Import(st, agent, file, newParser)
		if err != nil {
			t.Fatalf("import failed on input %q: %v", data, err)
		}
		if res.Skipped > res.Lines {
			t.Fatalf("%d skipped of %d lines", res.Skipped, res.Lines)
		}
	})
}

// FuzzSource is FuzzImport for a source read whole: arbitrary file
// content, named name, must never panic; a file the source reads must
// import (every message it builds is one the store accepts); a file it
// refuses (not of its format) must be refused by the import too.
func FuzzSource(f *testing.F, src importers.Source, name string) {
	st := Store(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		read, readErr := src.Read(file, importers.NewPaths())
		for _, c := range read.Conversations {
			for _, m := range c.Messages {
				if err := m.Validate(); err != nil {
					t.Fatalf("message the store refuses, built from %q: %v", data, err)
				}
			}
		}
		res, err := importers.ImportSource(st, src, file, nil)
		if errors.Is(readErr, importers.ErrIncomplete) {
			if err != nil || !res.Incomplete {
				t.Fatalf("a file being written imported as %v, %v", res, err)
			}
			return
		}
		if (err != nil) != (readErr != nil) {
			t.Fatalf("read error %v but import error %v on %q", readErr, err, data)
		}
		if res.Skipped > res.Lines {
			t.Fatalf("%d skipped of %d records", res.Skipped, res.Lines)
		}
	})
}

// Linked fails t unless the subagents of the session titled parent
// (session.Store.Subagents) are exactly the sessions titled subs, in any
// order, and each of them names parent among its parents.
func Linked(t testing.TB, st *session.Store, parent string, subs ...string) {
	t.Helper()
	p, _ := Session(t, st, parent)
	got, err := st.Subagents(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, h := range got {
		titles = append(titles, h.Title)
		up, err := st.Parents(h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(up, func(u session.Header) bool { return u.ID == p.ID }) {
			t.Errorf("parents of %q: %v, want %s among them", h.Title, up, p.ID)
		}
	}
	slices.Sort(titles)
	subs = slices.Clone(subs)
	slices.Sort(subs)
	if !slices.Equal(titles, subs) {
		t.Errorf("subagents of %q: %q, want %q", parent, titles, subs)
	}
}
