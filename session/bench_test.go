package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/scrim-dev/scrim/internal/codetext"
)

// The benchmarks run on a session of 100,000 messages shaped like a long
// agent session: half tool results of 0.5–4 KB of source code as a read tool
// returns it, a quarter assistant turns with a tool call, a quarter user
// prompts; 20% of all messages carry 1–5 sourcePaths. Nothing is built
// unless -bench runs them.
const benchN = 100_000

// benchMessages returns n realistic messages, the same for a given n.
func benchMessages(n int) []*Message {
	r := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	msgs := make([]*Message, n)
	for i := range msgs {
		var m *Message
		switch i % 4 {
		case 0:
			m = &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: codetext.Text(r, 50+r.IntN(250))}}}
		case 1:
			m = &Message{Role: RoleAssistant, Model: "anthropic/claude-sonnet-4-5", Parts: []Part{
				{Kind: PartText, Text: codetext.Text(r, 100+r.IntN(500))},
				{Kind: PartToolCall, CallID: fmt.Sprintf("call_%d", i), Name: "read",
					Input: json.RawMessage(fmt.Sprintf(`{"path":"/home/dev/src/app/pkg%d/file%d.go"}`, i%50, i%7))}}}
		default:
			m = &Message{Role: RoleTool, Tool: "read", ToolCallID: fmt.Sprintf("call_%d", i-1), Model: "anthropic/claude-sonnet-4-5"}
			size := 512 + r.IntN(3585)
			if i%5 == 0 { // 40% of tool results = 20% of all messages
				files := 1 + r.IntN(5)
				for f := range files {
					m.Parts = append(m.Parts, Part{Kind: PartToolResult, Text: codetext.Text(r, size/files),
						SourcePath: fmt.Sprintf("/home/dev/src/app/pkg%d/file%d.go", (i+f)%50, f)})
				}
				m.SyncSourcePaths()
			} else {
				m.Parts = []Part{{Kind: PartToolResult, Text: codetext.Text(r, size)}}
			}
		}
		m.CreatedAt = at.Add(time.Duration(i) * time.Second)
		msgs[i] = m
	}
	return msgs
}

// benchStore writes msgs into a fresh store in batches of 1000 and reopens
// it, so reads come from tables on disk, not the memtable.
func benchStore(b *testing.B, msgs []*Message) (*Store, string) {
	b.Helper()
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	h, err := s.Create(Header{Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(msgs); i += 1000 {
		if err := s.AppendBulk(h.ID, msgs[i:min(i+1000, len(msgs))]); err != nil {
			b.Fatal(err)
		}
	}
	dir := s.Dir()
	s.Close()
	if s, err = Open(dir); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, h.ID
}

func jsonBytes(msgs []*Message) int64 {
	var n int64
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		n += int64(len(b))
	}
	return n
}

func BenchmarkAppendBulk100k(b *testing.B) {
	msgs := benchMessages(benchN)
	b.SetBytes(jsonBytes(msgs))
	var appending time.Duration
	c := cpuClock()
	for b.Loop() {
		b.StopTimer()
		s, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		h, _ := s.Create(Header{Title: "bench"})
		for _, m := range msgs {
			m.ID = ""
		}
		b.StartTimer()
		start := time.Now()
		for i := 0; i < len(msgs); i += 1000 {
			if err := s.AppendBulk(h.ID, msgs[i:i+1000]); err != nil {
				b.Fatal(err)
			}
		}
		appending += time.Since(start)
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*len(msgs))/appending.Seconds(), "msgs/s")
	reportCPU(b, c) // includes Open and Close: Badger's flush is part of the cost
}

// BenchmarkAppendOne is one durable Append (synced before it returns).
func BenchmarkAppendOne(b *testing.B) {
	msgs := benchMessages(1000)
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h, _ := s.Create(Header{Title: "bench"})
	b.ResetTimer()
	i := 0
	for b.Loop() {
		m := *msgs[i%len(msgs)]
		m.ID = ""
		if err := s.Append(h.ID, &m); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkLoad100k(b *testing.B) {
	msgs := benchMessages(benchN)
	s, id := benchStore(b, msgs)
	b.SetBytes(jsonBytes(msgs))
	b.ResetTimer()
	c := cpuClock()
	for b.Loop() {
		got, bad, err := s.Messages(id)
		if err != nil || len(bad) != 0 || len(got) != benchN {
			b.Fatalf("%d messages, %v, %v", len(got), bad, err)
		}
	}
	reportCPU(b, c)
}

// BenchmarkLoadJSONL100k is the baseline: the same messages decoded from a
// JSON Lines file held in memory, as other agents store transcripts, with
// encoding/json (what such a reader uses) and with the store's own decoder
// (the same decoding work as BenchmarkLoad100k, without Badger).
func BenchmarkLoadJSONL100k(b *testing.B) {
	msgs := benchMessages(benchN)
	var file bytes.Buffer
	for _, m := range msgs {
		line, _ := json.Marshal(m)
		file.Write(line)
		file.WriteByte('\n')
	}
	decoders := []struct {
		name string
		fn   func([]byte, *Message) error
	}{
		{"encoding-json", func(b []byte, m *Message) error { return json.Unmarshal(b, m) }},
		{"store-codec", unmarshalMessage},
	}
	for _, dec := range decoders {
		b.Run(dec.name, func(b *testing.B) {
			b.SetBytes(int64(file.Len()))
			c := cpuClock()
			for b.Loop() {
				out := make([]Message, 0, 64)
				sc := bufio.NewScanner(bytes.NewReader(file.Bytes()))
				sc.Buffer(make([]byte, 0, 1<<20), 1<<26)
				for sc.Scan() {
					var m Message
					if err := dec.fn(sc.Bytes(), &m); err != nil {
						b.Fatal(err)
					}
					out = append(out, m)
				}
				if len(out) != benchN {
					b.Fatalf("%d messages", len(out))
				}
			}
			reportCPU(b, c)
		})
	}
}

func BenchmarkLoadLast200(b *testing.B) {
	s, id := benchStore(b, benchMessages(benchN))
	b.ResetTimer()
	c := cpuClock()
	for b.Loop() {
		got, _, err := s.Range(id, benchN-199, benchN)
		if err != nil || len(got) != 200 || got[199].Seq != benchN {
			b.Fatalf("%d messages, %v", len(got), err)
		}
	}
	reportCPU(b, c)
}

// BenchmarkDelete100k removes a session of 100,000 messages and checks that
// none of its keys is left.
func BenchmarkDelete100k(b *testing.B) {
	msgs := benchMessages(benchN)
	for b.Loop() {
		b.StopTimer()
		s, id := benchStore(b, msgs)
		for _, m := range msgs {
			m.ID = ""
		}
		b.StartTimer()
		if err := s.Delete(id); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		err := s.db.View(func(txn *badger.Txn) error {
			opts := badger.DefaultIteratorOptions
			opts.PrefetchValues = false
			opts.Prefix = msgPrefix(id)
			it := txn.NewIterator(opts)
			defer it.Close()
			if it.Rewind(); it.Valid() {
				return fmt.Errorf("key %q survived the delete", it.Item().Key())
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
