package session

import (
	"strings"
	"testing"
)

func TestAppendWithHeaderIsAtomic(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Create(Header{Title: "t", LastModel: "a/x"})
	if err != nil {
		t.Fatal(err)
	}
	ev := &Message{Role: RoleEvent, Parts: []Part{{Kind: PartText, Text: "model switched"}}}
	user := &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}}
	if err := s.AppendWithHeader(h.ID, func(h *Header) { h.LastModel = "b/y"; h.Count = 99 }, ev, user); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get(h.ID)
	if got.LastModel != "b/y" || got.Count != 2 || ev.Seq != 1 || user.Seq != 2 {
		t.Fatalf("header %+v, seqs %d %d", got, ev.Seq, user.Seq)
	}
	// One invalid message: neither the messages nor the header change.
	bad := &Message{Role: "robot"}
	err = s.AppendWithHeader(h.ID, func(h *Header) { h.LastModel = "c/z" }, &Message{Role: RoleUser}, bad)
	if err == nil || !strings.Contains(err.Error(), "robot") {
		t.Fatalf("error %v", err)
	}
	after, _ := s.Get(h.ID)
	msgs, _, _ := s.Messages(h.ID)
	if after.LastModel != "b/y" || after.Count != 2 || len(msgs) != 2 {
		t.Fatalf("partial write: header %+v, %d messages", after, len(msgs))
	}
}
