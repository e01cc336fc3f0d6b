package session

import "testing"

// TestCountRecords: a count record is kept beside its session, the session's
// revision moves only when a stored message changes, and deleting the
// session drops both.
func TestCountRecords(t *testing.T) {
	s := openTest(t)
	h, err := s.Create(Header{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(h.ID, &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCountRecord(h.ID, "tier/x", []byte("figures")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.CountRecord(h.ID, "tier/x"); err != nil || !ok || string(v) != "figures" {
		t.Fatalf("record %q %v %v", v, ok, err)
	}
	rev := func() uint64 {
		t.Helper()
		r, err := s.Revision(h.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if err := s.Append(h.ID, &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "more"}}}); err != nil {
		t.Fatal(err)
	}
	if r := rev(); r != 0 {
		t.Fatalf("an append moved the revision to %d", r)
	}
	b, err := s.BeginBulk()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Continue(h.ID); err != nil {
		t.Fatal(err)
	}
	b.Revise(h.ID, 1, func(m *Message) { m.Parts[0].Text = "hello" })
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if r := rev(); r != 1 {
		t.Fatalf("a revised message left the revision at %d", r)
	}
	if err := s.Delete(h.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.CountRecord(h.ID, "tier/x"); ok {
		t.Fatal("the count record outlives its session")
	}
	if r := rev(); r != 0 {
		t.Fatalf("the revision outlives its session: %d", r)
	}
	if err := s.PutCountRecord(h.ID, "tier/x", []byte("late")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.CountRecord(h.ID, "tier/x"); ok {
		t.Fatal("a record is kept for a session that no longer exists")
	}
}

// TestCountRecordTooLong: a record of MaxCountRecord bytes is kept; a
// longer one is refused with an error before Badger sees it, and the one
// kept before stays.
func TestCountRecordTooLong(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	if err := s.PutCountRecord(h.ID, "gathered/x", make([]byte, s.MaxCountRecord())); err != nil {
		t.Fatalf("a record of MaxCountRecord bytes: %v", err)
	}
	if err := s.PutCountRecord(h.ID, "gathered/x", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCountRecord(h.ID, "gathered/x", make([]byte, s.MaxCountRecord()+1)); err == nil {
		t.Fatal("a record past MaxCountRecord was taken")
	}
	if v, ok, err := s.CountRecord(h.ID, "gathered/x"); err != nil || !ok || string(v) != "kept" {
		t.Fatalf("after the refusal: %q %v %v", v, ok, err)
	}
}
