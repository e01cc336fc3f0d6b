package session

import (
	"strings"
	"testing"
)

// A message longer than a value can be is refused by every way of writing
// one, in a line that says how big it is, and the session stays as it was;
// one just under the bound is stored and read back whole.
func TestMessageLongerThanARecordCanBe(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Create(Header{ID: "big", Title: "big"}); err != nil {
		t.Fatal(err)
	}
	first := &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "cat the log"}}}
	if err := s.Append("big", first); err != nil {
		t.Fatal(err)
	}
	output := func(n int) *Message { // n bytes of text, none of them escaped in JSON
		return &Message{Role: RoleTool, Tool: "bash", Parts: []Part{{Kind: PartToolResult, Text: strings.Repeat("x", n)}}}
	}
	tooBig := output(maxRecord + 1)
	for name, write := range map[string]func() error{
		"Append":     func() error { return s.Append("big", first, tooBig) },
		"AppendBulk": func() error { return s.AppendBulk("big", []*Message{first, tooBig}) },
	} {
		err := write()
		if err == nil {
			t.Fatalf("%s of a %d-byte message: no error", name, len(tooBig.Parts[0].Text))
		}
		if msg := err.Error(); len(msg) > 300 || !strings.Contains(msg, "64.0 MiB") || !strings.Contains(msg, "tool_result part of 64.0 MiB") {
			t.Errorf("%s: %q; want one short line with the sizes", name, msg)
		}
		if h, _ := s.Get("big"); h.Count != 1 {
			t.Fatalf("%s: the session has %d messages after the refused write, want 1", name, h.Count)
		}
	}
	fits := output(maxRecord - 1<<20)
	if err := s.Append("big", fits); err != nil {
		t.Fatalf("a message of %d bytes: %v", len(fits.Parts[0].Text), err)
	}
	msgs, bad, err := s.Messages("big")
	if err != nil || len(bad) != 0 || len(msgs) != 2 || msgs[1].Text() != fits.Text() {
		t.Fatalf("read back: %v %v, %d messages", err, bad, len(msgs))
	}
}
