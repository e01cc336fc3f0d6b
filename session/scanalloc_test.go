package session

import (
	"fmt"
	"reflect"
	"testing"
)

// TestScanAllocations holds a scan's allocations for each record to the
// decoder's own: a read of a million records pays for any more a
// million times (the TUI's first count reads every message once and
// those with a source path twice).
func TestScanAllocations(t *testing.T) {
	const n = 2000
	msgs := make([]*Message, n)
	for i := range msgs {
		msgs[i] = text(fmt.Sprintf("message %d, long enough to be one of its own", i))
	}
	s, h := storeOf(t, msgs)
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

// TestScanShared: a shared scan hands on the messages a scan does, texts
// with escapes, parts, paths and all, while its records' strings and
// parts come from chunks it shares among them, not one allocation each
// (what is left: source paths, which never share, and tool inputs).
func TestScanShared(t *testing.T) {
	const n = 2000
	msgs := make([]*Message, n)
	for i := range msgs {
		switch i % 3 {
		case 0:
			msgs[i] = text(fmt.Sprintf("message %d, long enough to be one of its own", i))
		case 1:
			msgs[i] = &Message{Role: RoleAssistant, Model: "anthropic/claude-sonnet-4-5", Parts: []Part{
				{Kind: PartText, Text: "Reading it."},
				{Kind: PartToolCall, CallID: fmt.Sprintf("toolu_%d", i), Name: "Read", Input: []byte(`{"file_path":"/src/x.go"}`)}}}
		default:
			msgs[i] = &Message{Role: RoleTool, Tool: "Read", ToolCallID: fmt.Sprintf("toolu_%d", i-1), Parts: []Part{
				{Kind: PartToolResult, Text: fmt.Sprintf("     1\tpackage x\n     2\t// \"quoted\" line %d\n", i), SourcePath: "/src/x.go"}}}
			msgs[i].SyncSourcePaths()
		}
	}
	s, h := storeOf(t, msgs)
	var plain, shared []Message
	if _, err := s.Scan(h.ID, 1, n, func(m *Message) error { plain = append(plain, *m); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ScanShared(h.ID, 1, n, func(m *Message) error { shared = append(shared, *m); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(plain) != n || !reflect.DeepEqual(plain, shared) {
		t.Fatalf("a shared scan read %d messages unlike a scan's %d", len(shared), len(plain))
	}
	count := func(scan func(string, uint64, uint64, func(*Message) error) ([]DecodeError, error)) float64 {
		return testing.AllocsPerRun(3, func() {
			if _, err := scan(h.ID, 1, n, func(*Message) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}) / n
	}
	if a, b := count(s.Scan), count(s.ScanShared); b > a/2 {
		t.Errorf("%.2f allocations a record in a shared scan, %.2f in a scan", b, a)
	}
}

// storeOf is a store in t's folder holding one session of msgs.
func storeOf(t *testing.T, msgs []*Message) (*Store, Header) {
	t.Helper()
	s := openTest(t)
	h := create(t, s, Header{Title: "scan"})
	if err := s.Append(h.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	return s, h
}
