package session

import (
	"fmt"
	"testing"
)

// TestScanAllocations holds a scan's allocations for each record to the
// decoder's own: a read of a million records pays for any more a
// million times (the TUI's first count reads every message once and
// those with a source path twice).
func TestScanAllocations(t *testing.T) {
	s := openTest(t)
	h, err := s.Create(Header{Title: "scan"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	msgs := make([]*Message, n)
	for i := range msgs {
		msgs[i] = text(fmt.Sprintf("message %d, long enough to be one of its own", i))
	}
	if err := s.Append(h.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	// What decoding alone takes for one of these records.
	rec, err := marshalMessage(msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	decode := testing.AllocsPerRun(100, func() { m = Message{}; _ = unmarshalMessageOf(h.ID, rec, &m) })
	read := 0
	scan := testing.AllocsPerRun(5, func() {
		read = 0
		if _, err := s.Scan(h.ID, 1, n, func(*Message) error { read++; return nil }); err != nil {
			t.Fatal(err)
		}
	})
	if read != n {
		t.Fatalf("read %d messages, want %d", read, n)
	}
	// Badger's iterator allocates as it reads blocks: a few hundred for
	// the whole scan, well under one a record.
	if per := scan / n; per > decode+0.5 {
		t.Errorf("%.2f allocations a record scanned, %.0f of them decoding's", per, decode)
	}
}
