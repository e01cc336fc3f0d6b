package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/scrim-dev/scrim/internal/cores"
)

// FuzzMaySource: a record that maySource rules out never decodes to a
// message that carries a source path, whatever its shape: the store's own,
// or the keys spelled in other cases, escaped, or with a fold of s.
func FuzzMaySource(f *testing.F) {
	for _, m := range codecSamples() {
		b, _ := json.Marshal(m)
		f.Add(b)
	}
	for _, key := range []string{"sourcePath", "SOURCEPATH", "SourcePath", `\u0073ourcePath`, `sourc\u0065Path`, `s\u006FurcePath`, "ſourcePath", `sourcePat\u0048`} {
		f.Add(fmt.Appendf(nil, `{"id":"a","sessionId":"s","seq":1,"role":"tool","parts":[{"kind":"tool_result","text":"x","%s":"/a"}],"meta":{}}`, key))
		f.Add(fmt.Appendf(nil, `{"id":"a","sessionId":"s","seq":1,"role":"tool","parts":[],"meta":{"%s":["/a"]}}`, key+"s"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if unmarshalMessage(data, &m) == nil && m.sourced() && !maySource(data, new([]byte)) {
			t.Fatalf("ruled out, yet it decodes with source paths %q and parts %+v:\n%s", m.Meta.SourcePaths, m.Parts, data)
		}
	})
}

// TestMaySourceRulesOutWhatCarriesNone: the records of messages without a
// source path, as the store writes them, are not decoded by a sourced read
// (else it would save nothing), even with escapes the store writes.
func TestMaySourceRulesOutWhatCarriesNone(t *testing.T) {
	for _, m := range []*Message{
		{ID: "a", SessionID: "s", Seq: 1, Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "if a < b && c > d {\n\treturn \"source path\"\n}"}}},
		{ID: "b", SessionID: "s", Seq: 2, Role: RoleTool, Tool: "bash", Meta: Meta{UnknownSource: "a shell command"}, Parts: []Part{{Kind: PartToolResult, Text: "ok\u2028\x01"}}},
		{ID: "c", SessionID: "s", Seq: 3, Role: RoleAssistant, Parts: []Part{{Kind: PartToolCall, CallID: "x", Name: "read", Input: json.RawMessage(`{"path":"/a/b.go"}`)}}},
	} {
		v, err := marshalMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if maySource(v, new([]byte)) {
			t.Errorf("%s may carry a source path", v)
		}
	}
}

// TestSourcedReads: a sourced scan, whole or in pieces, returns, in order,
// exactly the messages of a whole read that carry a source path.
func TestSourcedReads(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	var msgs []*Message
	for i := range 5000 {
		m := &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: fmt.Sprintf("message %d mentions sourcePath", i)}}}
		switch i % 5 {
		case 1:
			m = &Message{Role: RoleTool, Tool: "read", Meta: Meta{SourcePaths: []string{fmt.Sprintf("/src/%d.go", i)}}, Parts: []Part{{Kind: PartToolResult, Text: "package a"}}}
		case 2:
			m = &Message{Role: RoleTool, Tool: "grep", Parts: []Part{{Kind: PartToolResult, Text: "a", SourcePath: "/src/a.go"}, {Kind: PartToolResult, Text: "b", SourcePath: "/src/b.go"}}}
			m.SyncSourcePaths()
		case 3:
			m = &Message{Role: RoleTool, Tool: "bash", Meta: Meta{UnknownSource: "a shell command"}, Parts: []Part{{Kind: PartToolResult, Text: "ok"}}}
		}
		msgs = append(msgs, m)
	}
	if err := s.AppendBulk(h.ID, msgs); err != nil {
		t.Fatal(err)
	}
	all, _, err := s.Range(h.ID, 1, 5000)
	if err != nil {
		t.Fatal(err)
	}
	var want []Message
	for _, m := range all {
		if m.sourced() {
			want = append(want, m)
		}
	}
	if len(want) != 2000 {
		t.Fatalf("%d messages carry a source path, want 2000", len(want))
	}
	var scanned []Message
	scanned = sourced(t, s, h.ID, 1, 5000)
	if !reflect.DeepEqual(scanned, want) {
		t.Fatalf("ScanSourced: %d messages, want %d", len(scanned), len(want))
	}
	// In pieces read on every core: the same, in order, none spanning
	// more than piece messages, the last said to be last; fn's error
	// stops it.
	pieced, pieces, lasts, widest := readPieces(t, s, h.ID, 3, 5000, 333)
	if widest > 333 {
		t.Fatalf("a piece of at most 333 messages spans %d", widest)
	}
	if !reflect.DeepEqual(pieced, want[1:]) || pieces < 16 || lasts != 1 {
		t.Fatalf("SourcedPieces: %d messages in %d pieces (%d last), want %d in 16 or more", len(pieced), pieces, lasts, len(want)-1)
	}
	// Pieces span what pieceBytes of records hold, once the first tells
	// how long a record is: the same messages, in order, in more pieces.
	defer func(b uint64) { pieceBytes = b }(pieceBytes)
	pieceBytes = 4 << 10
	pieced, pieces, lasts, widest = readPieces(t, s, h.ID, 1, 5000, 1000)
	if !reflect.DeepEqual(pieced, want) || lasts != 1 || pieces < 40 || widest > 200 {
		t.Fatalf("SourcedPieces of 4 KiB: %d messages in %d pieces (%d last; the widest spans %d), want %d in 40 or more of at most 200",
			len(pieced), pieces, lasts, widest, len(want))
	}
	// What prepare makes of a piece, on its reader's core, comes with
	// that piece: here, its Seqs.
	prepared := 0
	if err := s.SourcedPiecesPrepared(h.ID, 1, 5000, 100, func(msgs []Message) any {
		seqs := make([]uint64, len(msgs))
		for i := range msgs {
			seqs[i] = msgs[i].Seq
		}
		return seqs
	}, func(msgs []Message, p any, _ bool) error {
		seqs := p.([]uint64)
		for i := range msgs {
			if msgs[i].Seq != seqs[i] {
				return fmt.Errorf("a piece from %d came with what was prepared of a piece from %d", msgs[0].Seq, seqs[0])
			}
		}
		prepared += len(seqs)
		return nil
	}); err != nil || prepared != len(want) {
		t.Fatalf("SourcedPiecesPrepared: %v, %d messages prepared, want %d", err, prepared, len(want))
	}
	// Pieces read and not yet handed on are at most one a reader, however
	// slow fn is: each is a piece of decoded text held. A piece is held
	// from the moment prepare starts on it until fn returns.
	var held, most atomic.Int32
	if err := s.SourcedPiecesPrepared(h.ID, 1, 5000, 50, func([]Message) any {
		n := held.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return nil
	}, func([]Message, any, bool) error {
		time.Sleep(time.Millisecond) // the readers get ahead
		held.Add(-1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if readers := int32(runtime.GOMAXPROCS(0)); most.Load() > readers+1 {
		t.Fatalf("%d pieces held at once with %d readers, want at most %d (one a reader, and fn's)", most.Load(), readers, readers+1)
	}
	// While the user is at the TUI's keys (cores.Spare) the last reader
	// waits: the pieces are all read, in order, by the others, which
	// prepare one at a time each.
	if readers := int32(runtime.GOMAXPROCS(0)); readers > 1 {
		cores.Spare(true)
		cores.Settle()
		var preparing, most atomic.Int32
		var got []Message
		err := s.SourcedPiecesPrepared(h.ID, 1, 5000, 50, func([]Message) any {
			n := preparing.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Millisecond) // long enough for the readers to meet
			preparing.Add(-1)
			return nil
		}, func(msgs []Message, _ any, _ bool) error {
			got = append(got, msgs...)
			return nil
		})
		cores.Spare(false)
		cores.Settle()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("at the keys: %v, %d messages, want %d", err, len(got), len(want))
		}
		if most.Load() > readers-1 {
			t.Fatalf("at the keys: %d pieces prepared at once, want at most %d (a reader fewer)", most.Load(), readers-1)
		}
	}
	stopped := errors.New("stop")
	calls := 0
	if err := s.SourcedPieces(h.ID, 1, 5000, 100, func([]Message, bool) error {
		calls++
		return stopped
	}); err != stopped || calls != 1 {
		t.Fatalf("SourcedPieces after fn failed: %v, %d calls", err, calls)
	}
	// The store marks the records of the messages without one, so a
	// sourced read need not read them.
	marked := 0
	eachItem(t, s, msgPrefix(h.ID), func(item *badger.Item) {
		if noSource(item.UserMeta()) {
			marked++
		}
	})
	if marked != 3000 {
		t.Fatalf("%d records marked as carrying no source path, want 3000", marked)
	}
}

// readPieces is what SourcedPieces hands over of messages from..to in
// pieces of at most piece messages: the messages, how many pieces, how
// many said to be last, and how many messages the widest spans.
func readPieces(t *testing.T, s *Store, id string, from, to, piece uint64) (msgs []Message, pieces, lasts int, widest uint64) {
	t.Helper()
	if err := s.SourcedPieces(id, from, to, piece, func(ms []Message, last bool) error {
		if len(ms) > 0 {
			widest = max(widest, ms[len(ms)-1].Seq-ms[0].Seq+1)
		}
		msgs = append(msgs, ms...)
		pieces++
		if last {
			lasts++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return msgs, pieces, lasts, widest
}

// sourced is what ScanSourced hands over of messages from..to.
func sourced(t *testing.T, s *Store, id string, from, to uint64) []Message {
	t.Helper()
	var out []Message
	bad, err := s.ScanSourced(id, from, to, func(m *Message) error {
		out = append(out, *m)
		return nil
	})
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	return out
}

// BenchmarkMaySource: ruling out the record of a message of code without a
// source path, as most of a long session's are.
func BenchmarkMaySource(b *testing.B) {
	var text strings.Builder
	for i := range 40 {
		fmt.Fprintf(&text, "%6d\t\tif err := ctx.Err(); err != nil && a < b {\n", i)
	}
	v, err := marshalMessage(&Message{ID: "a", SessionID: "s", Seq: 1, Role: RoleAssistant, Parts: []Part{{Kind: PartText, Text: text.String()}}})
	if err != nil {
		b.Fatal(err)
	}
	var fold []byte
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if maySource(v, &fold) {
			b.Fatal("may carry a source path")
		}
	}
}

// TestSourcedReadsUnmarkedRecords: records without the store's mark
// (written before it marked them) are read and looked at, and a message
// that carries a source path is returned from one all the same.
func TestSourcedReadsUnmarkedRecords(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	msgs := []*Message{
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hello"}}},
		{Role: RoleTool, Tool: "read", Meta: Meta{SourcePaths: []string{"/src/a.go"}}, Parts: []Part{{Kind: PartToolResult, Text: "package a"}}},
	}
	if err := s.Append(h.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	// Rewrite both records as a store that did not mark them wrote them.
	if err := s.db.Update(func(txn *badger.Txn) error {
		for _, m := range msgs {
			v, err := marshalMessage(m)
			if err != nil {
				return err
			}
			if err := txn.Set(msgKey(h.ID, m.Seq), v); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := sourced(t, s, h.ID, 1, 2); len(got) != 1 || got[0].Seq != 2 {
		t.Fatalf("a sourced scan of unmarked records: %+v, want message 2", got)
	}
}
