package secrets

import (
	"reflect"
	"testing"

	"github.com/scrim-dev/scrim/session"
)

func storeWith(t *testing.T, texts ...string) (*session.Store, string, []session.Message) {
	t.Helper()
	st, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := st.Create(session.Header{Title: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	var in []*session.Message
	for _, s := range texts {
		in = append(in, &session.Message{Role: session.RoleTool, Tool: "bash", Parts: []session.Part{{Kind: session.PartToolResult, Text: s}}})
	}
	if err := st.Append(h.ID, in...); err != nil {
		t.Fatal(err)
	}
	msgs, _, err := st.Range(h.ID, 1, uint64(len(texts)))
	if err != nil {
		t.Fatal(err)
	}
	return st, h.ID, msgs
}

func records(t *testing.T, st *session.Store, id string) int {
	t.Helper()
	n := 0
	if err := st.ScanRecords(id, 1, 1<<40, func(uint64, []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLookupScansOnceAndKeeps: the first lookup scans and stores a record
// per message; the next one reads them; a changed message, a record of
// another rule set or a damaged one is scanned again; a deleted session's
// records go with it.
func TestLookupScansOnceAndKeeps(t *testing.T) {
	cs := credentials()
	st, id, msgs := storeWith(t, "nothing here", cs[2].before+cs[2].secret, "ls output", cs[5].before+cs[5].secret)

	found, stats, err := Lookup(st, id, msgs)
	if err != nil || stats != (Stats{Scanned: 4}) {
		t.Fatalf("first lookup: %+v %v", stats, err)
	}
	if len(found) != 2 || found[2][0].Rule != "github-pat" || found[4][0].Rule != "gitlab-pat" {
		t.Fatalf("findings %+v", found)
	}
	if n := records(t, st, id); n != 4 {
		t.Fatalf("%d records stored, want one per message (none found is a finding too)", n)
	}
	again, stats, err := Lookup(st, id, msgs)
	if err != nil || stats != (Stats{Stored: 4}) || !reflect.DeepEqual(again, found) {
		t.Fatalf("second lookup: %+v %v %+v", stats, err, again)
	}

	// A message whose content is not what was scanned (revised by an
	// import, say) is scanned again.
	b, err := st.BeginBulk()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Continue(id); err != nil {
		t.Fatal(err)
	}
	b.Revise(id, 2, func(m *session.Message) { m.Parts[0].Text = "token rotated" })
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	msgs, _, _ = st.Range(id, 1, 4)
	found, stats, _ = Lookup(st, id, msgs)
	if stats != (Stats{Stored: 3, Scanned: 1}) || len(found) != 1 {
		t.Fatalf("after a revision: %+v %+v", stats, found)
	}

	// A record made by other rules, or one that does not decode.
	if err := st.PutScanRecords(id, map[uint64][]byte{1: {recordVersion, 0, 0, 0, 0}, 3: []byte("garbage")}); err != nil {
		t.Fatal(err)
	}
	if _, stats, _ = Lookup(st, id, msgs); stats != (Stats{Stored: 2, Scanned: 2}) {
		t.Fatalf("stale records: %+v", stats)
	}

	if err := st.Delete(id); err != nil {
		t.Fatal(err)
	}
	if n := records(t, st, id); n != 0 {
		t.Fatalf("%d records outlive their session", n)
	}
}

// TestEventsAreNotScanned: events are never sent, so never scanned.
func TestEventsAreNotScanned(t *testing.T) {
	cs := credentials()
	msgs := []session.Message{{Seq: 1, Role: session.RoleEvent, Parts: []session.Part{{Kind: session.PartText, Text: cs[2].before + cs[2].secret}}}}
	if found := ScanAll(msgs); len(found) != 0 {
		t.Fatalf("an event was scanned: %+v", found)
	}
}

// TestLazyScansWhatIsAsked: a lazy lookup scans a message only when its
// findings are asked for, finds what Lookup finds, keeps what it scanned
// when saved, and reads that back the next time instead of scanning.
func TestLazyScansWhatIsAsked(t *testing.T) {
	cs := credentials()
	st, id, msgs := storeWith(t, "nothing here", cs[2].before+cs[2].secret, "ls output", cs[5].before+cs[5].secret)
	l, err := LookupLazy(st, id, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if fs := l.Of(&msgs[1]); len(fs) != 1 || fs[0].Rule != "github-pat" {
		t.Fatalf("findings of message 2: %+v", fs)
	}
	if n := l.Save(); n != 1 {
		t.Fatalf("saved %d scans, want the one asked for", n)
	}
	if n := records(t, st, id); n != 1 {
		t.Fatalf("%d records stored after one message was asked for", n)
	}
	if _, stats, err := Lookup(st, id, msgs[:1]); err != nil || stats != (Stats{Scanned: 1}) { // 2 is kept, 3 and 4 not yet
		t.Fatalf("lookup of message 1: %+v %v", stats, err)
	}
	again, err := LookupLazy(st, id, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range msgs {
		if got := again.Of(&msgs[i]); !reflect.DeepEqual(got, ScanAll(msgs[i:i+1]).Of(&msgs[i])) {
			t.Fatalf("message %d: %+v", i+1, got)
		}
	}
	if n := again.Save(); n != 2 { // 3 and 4: 1 was kept by Lookup, 2 by the first Save
		t.Fatalf("the second lazy lookup scanned %d messages, want 2", n)
	}
	if _, stats, _ := Lookup(st, id, msgs); stats != (Stats{Stored: 4}) {
		t.Fatalf("after both: %+v", stats)
	}
}

// TestLazyReadsRecordsTogether: the records a lazy lookup reads are
// copied side by side, not each into an allocation of its own (a count
// reads one for every message of the session), and each still reads back
// as its message's.
func TestLazyReadsRecordsTogether(t *testing.T) {
	cs := credentials()
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = "plain output"
		if i%7 == 0 {
			texts[i] = cs[2].before + cs[2].secret // a longer record, with its finding
		}
	}
	st, id, msgs := storeWith(t, texts...)
	if _, _, err := Lookup(st, id, msgs); err != nil {
		t.Fatal(err)
	}
	var l *Lazy
	allocs := testing.AllocsPerRun(3, func() {
		var err error
		if l, err = LookupLazy(st, id, msgs); err != nil {
			t.Fatal(err)
		}
	})
	if per := allocs / float64(len(msgs)); per > 0.5 {
		t.Errorf("%.0f allocations to read %d records", allocs, len(msgs))
	}
	for i := range msgs {
		if got := l.Of(&msgs[i]); (i%7 == 0) != (len(got) == 1) {
			t.Fatalf("message %d: %+v", i+1, got)
		}
	}
	if n := l.Save(); n != 0 {
		t.Fatalf("%d messages scanned again: their records did not read back", n)
	}
}
