package ui

import (
	"regexp"
	"strings"
	"testing"
)

// f on the session list finds in all sessions, for the active model: the
// live key exists only in a file limited may not read, so every hit is
// withheld, named by its path, and its text is on no pane that shows what
// is sent. n/N walk the hits; esc ends the find and n walks redactions again.
func TestFindWithheldForTheActiveModel(t *testing.T) {
	m := ready(t, "demo/limited", 120, 40)
	drive(m, keys("tab", "f", "sk-live", "enter")...)
	f := m.find
	if f == nil || !f.done || f.err != nil {
		t.Fatalf("find not done: %+v", f)
	}
	if f.scope != "" || len(f.hits) != 2 {
		t.Fatalf("scope %q, %d hits: %+v", f.scope, len(f.hits), f.hits)
	}
	for _, h := range f.hits {
		if !h.Withheld || h.WithheldIn != "/demo/secrets/api.key" || h.Tier != "limited" || h.Text != "" {
			t.Fatalf("hit not withheld with its path: %+v", h)
		}
	}
	if m.tr.sel != f.hits[0].Seq || !strings.Contains(m.statusLine(), `withheld from tier "limited"`) {
		t.Fatalf("current #%d, status %q", m.tr.sel, m.statusLine())
	}
	if strings.Contains(rightPane(m), "sk-live") {
		t.Fatalf("the sent pane shows the key:\n%s", rightPane(m))
	}
	drive(m, keyMsg("n"))
	if m.tr.sel != f.hits[1].Seq || !strings.Contains(m.statusLine(), "hit 2 of 2") {
		t.Fatalf("n: current #%d, status %q", m.tr.sel, m.statusLine())
	}
	drive(m, keyMsg("n"))
	if m.tr.sel != f.hits[0].Seq {
		t.Fatalf("n does not wrap around: #%d", m.tr.sel)
	}
	drive(m, keyMsg("esc"))
	if m.find != nil || m.tr.mark != nil {
		t.Fatal("esc does not end the find")
	}
	drive(m, keyMsg("g"), keyMsg("n"))
	if m.tr.sel != 3 || !strings.Contains(m.statusLine(), "redaction 1/2") {
		t.Fatalf("after the find n walks redactions: #%d %q", m.tr.sel, m.statusLine())
	}
}

// f on the panes finds in the open session only; for a model that may read
// everything the hits carry their lines, and switching the model searches
// again for what the new one is sent.
func TestFindInSession(t *testing.T) {
	m := ready(t, "demo/trusted", 120, 40)
	drive(m, keys("f", "API_KEY", "enter")...)
	f := m.find
	if f == nil || f.scope != m.tr.sid || !f.done {
		t.Fatalf("find: %+v", f)
	}
	var got []string
	for _, h := range f.hits {
		if h.SessionID != m.tr.sid || h.Withheld {
			t.Fatalf("hit outside the session or withheld: %+v", h)
		}
		got = append(got, h.Text[h.Start:h.End])
	}
	if len(got) != 5 || strings.Join(got, ",") != strings.Repeat("API_KEY,", 4)+"API_KEY" {
		t.Fatalf("hits %q", got)
	}
	if m.tr.sel != f.hits[0].Seq {
		t.Fatalf("the first hit is not current: #%d", m.tr.sel)
	}
	drive(m, keys("m", "j", "enter")...) // demo/limited
	if m.find == nil || m.find.model != "demo/limited" || !m.find.done {
		t.Fatalf("switching the model does not search again: %+v", m.find)
	}
	withheld := 0
	for _, h := range m.find.hits {
		if h.Withheld {
			withheld++
		}
	}
	if withheld == 0 {
		t.Fatalf("limited: no hit withheld: %+v", m.find.hits)
	}
}

// Matches are drawn in the Hit ink, splitting the segment they are in.
func TestMarkSegs(t *testing.T) {
	s := &styles{Hit: ink{pre: "<", post: ">"}}
	segs := s.markSegs([]seg{{text: "a key, a KEY", gutter: "│ "}, {text: "none"}}, regexp.MustCompile("(?i)key"))
	var b strings.Builder
	for _, sg := range segs {
		b.WriteString(sg.ink.wrap(sg.text) + "|")
		if sg.text != "none" && sg.gutter != "│ " {
			t.Fatalf("a piece lost its gutter: %+v", sg)
		}
	}
	if b.String() != "a |<key>|, a |<KEY>|none|" {
		t.Fatalf("marked %q", b.String())
	}
}
