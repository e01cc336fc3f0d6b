package session

import (
	"fmt"
	"strings"
	"testing"
)

// scanOf is a record that tells what it was made from: the message's Seq
// and its texts and inputs as the import handed them over. Events get
// none, as package secrets gives them none.
func scanOf(m *Message) []byte {
	if m.Role == RoleEvent {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d", m.Seq)
	for _, p := range m.Parts {
		b.WriteString("|" + p.Text + "|" + string(p.Input))
	}
	return []byte(b.String())
}

// kept reads the scan records of session id, by Seq.
func kept(t *testing.T, s *Store, id string) map[uint64]string {
	t.Helper()
	got := map[uint64]string{}
	if err := s.ScanRecords(id, 1, 1<<40, func(seq uint64, v []byte) error {
		got[seq] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// importMessages imports n messages into session id (a new one when id is
// ""), every tenth an event, each handed over in a Message that the
// importer then reuses for the next, as an importer may; commit false
// cancels the import instead.
func importMessages(t *testing.T, s *Store, id string, n int, commit bool) string {
	t.Helper()
	b, err := s.BeginBulk()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Cancel()
	if id == "" {
		if id, err = b.NewSession(Header{Title: "imported"}); err != nil {
			t.Fatal(err)
		}
	} else if _, err := b.Continue(id); err != nil {
		t.Fatal(err)
	}
	reused := &Message{Parts: make([]Part, 1)}
	input := make([]byte, 0, 64)
	for i := range n {
		role := RoleTool
		if i%10 == 9 {
			role = RoleEvent
		}
		input = fmt.Appendf(input[:0], `{"n":%d}`, i)
		*reused = Message{Role: role, Tool: "bash", Parts: reused.Parts[:1]}
		reused.Parts[0] = Part{Kind: PartToolResult, Text: fmt.Sprintf("output %d", i), Input: input}
		if err := b.Add(id, reused); err != nil {
			t.Fatal(err)
		}
		reused.Parts[0].Text, input[2] = "overwritten", 'X' // the importer's next message
	}
	if commit {
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// TestImportKeepsScanRecords: an import keeps, once it commits, the record
// ScanOnImport makes of each message it wrote, made from the message as it
// was handed over and stored; none for events; across groups; beside the
// records of the messages the session held before; none for an import
// that does not commit.
func TestImportKeepsScanRecords(t *testing.T) {
	s := openTemp(t)
	s.ScanOnImport(scanOf)
	id := importMessages(t, s, "", 600, true)
	want := func(got map[uint64]string, from, to uint64) {
		t.Helper()
		msgs, _, err := s.Range(id, from, to)
		if err != nil {
			t.Fatal(err)
		}
		for i := range msgs {
			m := &msgs[i]
			rec, ok := got[m.Seq]
			if m.Role == RoleEvent {
				if ok {
					t.Fatalf("event %d has a record %q", m.Seq, rec)
				}
				continue
			}
			if w := string(scanOf(m)); rec != w {
				t.Fatalf("message %d: record %q, want %q (made from the stored message)", m.Seq, rec, w)
			}
		}
	}
	got := kept(t, s, id)
	if len(got) != 540 {
		t.Fatalf("%d records for 600 messages, 60 of them events", len(got))
	}
	want(got, 1, 600)

	// Records a preview kept of the first messages stay as they are; the
	// session grows in the middle of a group (600 = 2×256 + 88).
	if err := s.PutScanRecords(id, map[uint64][]byte{1: []byte("kept 1"), 599: []byte("kept 599")}); err != nil {
		t.Fatal(err)
	}
	importMessages(t, s, id, 300, true)
	got = kept(t, s, id)
	if got[1] != "kept 1" || got[599] != "kept 599" || len(got) != 810 {
		t.Fatalf("after a second import: %d records, 1 %q, 599 %q", len(got), got[1], got[599])
	}
	want(got, 601, 900)

	// A cancelled import keeps nothing of what it scanned.
	importMessages(t, s, id, 50, false)
	if n := len(kept(t, s, id)); n != 810 {
		t.Fatalf("%d records after a cancelled import, want 810", n)
	}

	// Without ScanOnImport, an import keeps none.
	plain := openTemp(t)
	if n := len(kept(t, plain, importMessages(t, plain, "", 20, true))); n != 0 {
		t.Fatalf("%d records kept without ScanOnImport", n)
	}
}

// TestGroupedImportsKeepScanRecords: small imports that commit together
// (Group) keep their records once the group commits, not before.
func TestGroupedImportsKeepScanRecords(t *testing.T) {
	s := openTemp(t)
	s.ScanOnImport(scanOf)
	g := s.NewGroup()
	var ids []string
	for range 3 {
		b, err := s.BeginBulk()
		if err != nil {
			t.Fatal(err)
		}
		id, err := b.NewSession(Header{Title: "small"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if err := b.Add(id, &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: fmt.Sprintf("%s says %d", id, i)}}}); err != nil {
				t.Fatal(err)
			}
		}
		if waiting, err := g.Add(b, nil); err != nil || !waiting {
			t.Fatalf("a small import waits for its group: %v %v", waiting, err)
		}
		ids = append(ids, id)
	}
	if n := len(kept(t, s, ids[0])); n != 0 {
		t.Fatalf("%d records kept before the group committed", n)
	}
	if errs := g.Commit(); errs != nil {
		t.Fatal(errs)
	}
	for _, id := range ids {
		got := kept(t, s, id)
		if len(got) != 5 || got[3] != "3|"+id+" says 2|" {
			t.Fatalf("session %s: records %v", id, got)
		}
	}
}
