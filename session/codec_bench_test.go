package session

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkMarshalMessage is the encoding half of a bulk append: realistic
// messages (mostly code, so tabs and newlines to escape) to JSON.
func BenchmarkMarshalMessage(b *testing.B) {
	msgs := benchMessages(2000)
	var n int64
	for _, m := range msgs {
		v, err := marshalMessage(m)
		if err != nil {
			b.Fatal(err)
		}
		n += int64(len(v))
	}
	b.SetBytes(n / int64(len(msgs)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := marshalMessage(msgs[i%len(msgs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalMessage is what every read pays per message: realistic
// records (mostly code, so tabs and newlines escaped) decoded.
func BenchmarkUnmarshalMessage(b *testing.B) {
	msgs := benchMessages(2000)
	recs := make([][]byte, len(msgs))
	var n int64
	for i, m := range msgs {
		v, err := marshalMessage(m)
		if err != nil {
			b.Fatal(err)
		}
		recs[i], n = v, n+int64(len(v))
	}
	b.SetBytes(n / int64(len(msgs)))
	for i := 0; b.Loop(); i++ {
		var m Message
		if err := unmarshalMessage(recs[i%len(recs)], &m); err != nil {
			b.Fatal(err)
		}
	}
}

// smallRecords are n records shaped as the UI benchmarks' million-message
// session's (ui/big_test.go): short texts, a twelve-line file read, a
// search's three hits, each message with its IDs as an import writes them.
func smallRecords(n int) [][]byte {
	code := func(i int) string {
		var b strings.Builder
		for l := 1; l <= 12; l++ {
			fmt.Fprintf(&b, "%6d\tfunc step%d_%d(x int) int { return x*%d + %d }\n", l, i, l, l, i%97)
		}
		return b.String()
	}
	path := func(i int) string { return fmt.Sprintf("/demo/src/pkg%d/file%d.go", i%40, i%125) }
	var out [][]byte
	for i := 0; i < n; i++ {
		m := &Message{ID: fmt.Sprintf("0192f5c4-7e3a-7b1d-9c2e-%012d", i), SessionID: "0192f5c4-7e3a-7b1d-9c2e-5a4b3c2d1e0f", Seq: uint64(i + 1), CreatedAt: time.Date(2025, 6, 1, 9, 0, i, 0, time.UTC)}
		switch i % 5 {
		case 0:
			m.Role, m.Parts = RoleUser, []Part{{Kind: PartText, Text: fmt.Sprintf("Step %d: look at the next file and tell me what it does.", i)}}
		case 1:
			m.Role, m.Parts = RoleAssistant, []Part{{Kind: PartText, Text: "Reading it."}, {Kind: PartToolCall, CallID: fmt.Sprintf("c%d", i), Name: "read", Input: json.RawMessage(`{"path":"` + path(i+1) + `"}`)}}
		case 2:
			m.Role, m.Tool, m.ToolCallID, m.Parts = RoleTool, "read", fmt.Sprintf("c%d", i-1), []Part{{Kind: PartToolResult, Text: code(i), SourcePath: path(i)}}
			m.SyncSourcePaths()
		case 3:
			m.Role, m.Parts = RoleAssistant, []Part{{Kind: PartText, Text: fmt.Sprintf("Step %d: the file defines small arithmetic helpers.\nNothing in it touches the network or the disk.\nNext I will search for callers.", i)}}
		case 4:
			m.Role, m.Tool, m.Parts = RoleTool, "grep", []Part{{Kind: PartToolResult, Text: path(i) + ":3:\tstep(3)", SourcePath: path(i)}, {Kind: PartToolResult, Text: path(i+7) + ":9:\treturn step(x)", SourcePath: path(i + 7)}, {Kind: PartToolResult, Text: path(i+13) + ":1:package pkg", SourcePath: path(i + 13)}}
			m.SyncSourcePaths()
		}
		b, _ := marshalMessage(m)
		out = append(out, b)
	}
	return out
}

// BenchmarkUnmarshalSmallMessage is what a first count pays per message
// at a million messages: records of few bytes, where the decoder's own
// steps (keys, short strings, allocations) weigh more than the text.
func BenchmarkUnmarshalSmallMessage(b *testing.B) {
	recs := smallRecords(1000)
	var n int64
	for _, r := range recs {
		n += int64(len(r))
	}
	b.SetBytes(n / int64(len(recs)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var m Message
		if err := unmarshalMessageOf("0192f5c4-7e3a-7b1d-9c2e-5a4b3c2d1e0f", recs[i%len(recs)], &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRoom: the records of BenchmarkUnmarshalSmallMessage
// decoded as a count's step holds them (1,024 at a time, let go together),
// each into allocations of its own, or cut from a room the step's records
// share (ScanShared).
func BenchmarkDecodeRoom(b *testing.B) {
	recs := smallRecords(1000)
	for _, shared := range []bool{false, true} {
		b.Run(map[bool]string{false: "own", true: "shared"}[shared], func(b *testing.B) {
			b.ReportAllocs()
			var room *sharedRoom
			msgs := make([]Message, 1024)
			for i := 0; b.Loop(); i++ {
				if shared && i%len(msgs) == 0 {
					room = new(sharedRoom)
				}
				m := &msgs[i%len(msgs)]
				*m = Message{}
				if err := unmarshalMessageIn(room, "0192f5c4-7e3a-7b1d-9c2e-5a4b3c2d1e0f", recs[i%len(recs)], m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
