package runner

import (
	"net/http"
	"strings"
	"testing"
	"unsafe"

	"github.com/scrim-dev/scrim/session"
)

// A message's text for the provider: its parts but tool calls, a line
// between two, and for a message of one such part that part's own text,
// not a copy (the prompt of a long session held a second copy of it).
func TestJoinText(t *testing.T) {
	text := func(s string) session.Part { return session.Part{Kind: session.PartText, Text: s} }
	call := session.Part{Kind: session.PartToolCall, CallID: "c1", Name: "read", Input: []byte(`{"path":"a"}`)}
	for _, c := range []struct {
		parts []session.Part
		want  string
	}{
		{nil, ""},
		{[]session.Part{call}, ""},
		{[]session.Part{text("one")}, "one"},
		{[]session.Part{call, text("after a call")}, "after a call"},
		{[]session.Part{text("a"), text("b")}, "a\nb"},
		{[]session.Part{text("a"), call, text("b")}, "a\nb"},
		{[]session.Part{text(""), text("b")}, "b"},
		{[]session.Part{text("a"), text(""), text("b")}, "a\n\nb"},
		{[]session.Part{{Kind: session.PartToolResult, Text: "out"}, text("note")}, "out\nnote"},
	} {
		m := &session.Message{Parts: c.parts}
		if got := joinText(m); got != c.want {
			t.Errorf("joinText(%+v) = %q, want %q", c.parts, got, c.want)
		}
	}
	long := strings.Repeat("x", 1<<16)
	m := &session.Message{Parts: []session.Part{call, text(long)}}
	if got := joinText(m); unsafe.StringData(got) != unsafe.StringData(long) {
		t.Error("the text of a message of one text part was copied")
	}
}

// The preview reads the client's body into a slice of its length when the
// client says it, whatever it says, and whole when it does not.
func TestReadBody(t *testing.T) {
	body := strings.Repeat("0123456789", 10_000)
	for _, n := range []int64{-1, 0, 1, int64(len(body)) - 1, int64(len(body)), int64(len(body)) + 600} {
		req, err := http.NewRequest("POST", "http://127.0.0.1/v1/chat/completions", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = n
		got, err := readBody(req)
		if err != nil || string(got) != body {
			t.Errorf("ContentLength %d: read %d bytes, %v", n, len(got), err)
		}
	}
}
