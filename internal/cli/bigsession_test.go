package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"

	"github.com/scrim-dev/scrim/internal/codetext"
)

// benchMessages is how many messages the big-session benchmarks write:
// SCRIM_BENCH_MESSAGES, or a million.
func benchMessages(tb testing.TB) int {
	if v := os.Getenv("SCRIM_BENCH_MESSAGES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			tb.Fatalf("SCRIM_BENCH_MESSAGES=%q is not a count", v)
		}
		return n
	}
	return 1_000_000
}

// bigMessage is message i (0-based) of a generated agent session, the same
// for a given i: per 8 messages a user prompt, two assistant turns (text
// and a tool call), tool results of a read (0.3–2.5 KB of code, with its
// sourcePath; every 4th read returns several files), a grep (file names
// only, noFiles), a bash command (unknown source, sometimes an error), and
// an assistant answer in plain text. About 0.7 KB of JSON per message.
func bigMessage(r *rand.Rand, i int) *session.Message {
	const model = "anthropic/claude-sonnet-4-5"
	at := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	call := func(k int) string { return fmt.Sprintf("toolu_%08d", i-i%8+k) }
	file := func(f int) string { return fmt.Sprintf("/home/dev/src/app/pkg%d/file%d.go", (i/8+f)%50, f%7) }
	var m *session.Message
	switch i % 8 {
	case 0:
		m = &session.Message{Role: session.RoleUser,
			Parts: []session.Part{{Kind: session.PartText, Text: "please " + codetext.Text(r, 40+r.IntN(200))}}}
	case 1:
		m = &session.Message{Role: session.RoleAssistant, Model: model, Parts: []session.Part{
			{Kind: session.PartText, Text: codetext.Text(r, 60+r.IntN(300))},
			{Kind: session.PartToolCall, CallID: call(1), Name: "read", Input: json.RawMessage(`{"path":"` + file(0) + `"}`)}}}
	case 2:
		m = &session.Message{Role: session.RoleTool, Tool: "read", ToolCallID: call(1), Model: model}
		size := 300 + r.IntN(2200)
		if i%32 == 2 {
			files := 2 + r.IntN(3)
			for f := range files {
				m.Parts = append(m.Parts, session.Part{Kind: session.PartToolResult, Text: codetext.Text(r, size/files), SourcePath: file(f)})
			}
			m.SyncSourcePaths()
		} else {
			m.Parts = []session.Part{{Kind: session.PartToolResult, Text: codetext.Text(r, size)}}
			m.Meta.SourcePaths = []string{file(0)}
		}
	case 3:
		m = &session.Message{Role: session.RoleAssistant, Model: model, Parts: []session.Part{
			{Kind: session.PartToolCall, CallID: call(3), Name: "grep", Input: json.RawMessage(`{"pattern":"deadline","path":"/home/dev/src/app"}`)},
			{Kind: session.PartToolCall, CallID: call(4), Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)}}}
	case 4:
		m = &session.Message{Role: session.RoleTool, Tool: "grep", ToolCallID: call(3), Model: model, Meta: session.Meta{NoFiles: true},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: file(0) + "\n" + file(1) + "\n" + file(2) + "\n"}}}
	case 5:
		m = &session.Message{Role: session.RoleTool, Tool: "bash", ToolCallID: call(4), Model: model, IsError: i%40 == 5,
			Meta:  session.Meta{UnknownSource: "a shell command"},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: "--- FAIL: TestRetry (0.01s)\n" + codetext.Text(r, 100+r.IntN(400))}}}
	case 6:
		m = &session.Message{Role: session.RoleAssistant, Model: model,
			Parts: []session.Part{{Kind: session.PartText, Text: codetext.Text(r, 100+r.IntN(600))}}}
	default:
		m = &session.Message{Role: session.RoleUser,
			Parts: []session.Part{{Kind: session.PartText, Text: "thanks, now " + codetext.Text(r, 20+r.IntN(100))}}}
	}
	m.CreatedAt = at
	return m
}

// writeBigSession writes a session of n generated messages into the store
// in dir with one bulk import, as `scrim import` does, and returns its ID.
func writeBigSession(tb testing.TB, dir string, n int) string {
	tb.Helper()
	st, err := session.OpenToImport(dir) // as scrim import does
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	if err := st.CleanImports(); err != nil {
		tb.Fatal(err)
	}
	st.ScanOnImport(secrets.Record) // as scrim import does with the built-in policy
	b, err := st.BeginBulk()
	if err != nil {
		tb.Fatal(err)
	}
	id, err := b.NewSession(session.Header{Title: fmt.Sprintf("a long session: %d messages", n), WorkDir: "/home/dev/src/app"})
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range n {
		if err := b.Add(id, bigMessage(r, i)); err != nil {
			b.Cancel()
			tb.Fatal(err)
		}
	}
	if n == 0 {
		// A bulk import does not create a session that received nothing.
		b.Cancel()
		h, err := st.Create(session.Header{Title: "an empty session", WorkDir: "/home/dev/src/app"})
		if err != nil {
			tb.Fatal(err)
		}
		return h.ID
	}
	if err := b.Commit(nil); err != nil {
		tb.Fatal(err)
	}
	if _, err := st.Settle(time.Minute); err != nil { // as scrim import leaves a store
		tb.Fatal(err)
	}
	return id
}
