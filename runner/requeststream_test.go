package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
)

// TestRequestWriterIsRequestBody: the body written a piece of the history
// at a time is, byte for byte, the one the provider's client writes for
// the whole history (what send sends), on random histories full of what
// the pairing of calls and results has to mend — calls never answered,
// answered late or twice, results without a call or before it, events,
// errors, system messages — with content a tier withholds and text the
// encoder escapes, cut into pieces at random places, one message a piece
// included.
func TestRequestWriterIsRequestBody(t *testing.T) {
	e := newEnv(t, nil)
	lookedAhead := 0
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		id := e.newSession(t)
		var msgs []*session.Message
		switch seed {
		case 0: // empty: the system prompt and the tools
		case 1: // nothing but what is never sent
			msgs = []*session.Message{{Role: session.RoleEvent, Parts: []session.Part{{Kind: session.PartText, Text: "switched"}}}}
		default:
			msgs = randomHistory(rng, e, 1+rng.IntN(60))
		}
		if len(msgs) > 0 {
			if err := e.store.Append(id, msgs...); err != nil {
				t.Fatal(err)
			}
		}
		for _, model := range []string{"fake/limited", "fake/trusted", "fake/other"} {
			want, err := e.r.RequestBody(context.Background(), id, model)
			if err != nil {
				t.Fatal(err)
			}
			req, err := e.r.Request(id, model)
			if err != nil {
				t.Fatal(err)
			}
			hist := req.History
			var got bytes.Buffer
			rw, err := e.r.NewRequestWriter(context.Background(), &got, id, model)
			if err != nil {
				t.Fatal(err)
			}
			piece := 1 + rng.IntN(8)
			for len(hist) > 0 {
				n := min(len(hist), rng.IntN(piece+1)) // empty pieces too
				if err := rw.Add(hist[:n]); err != nil {
					t.Fatal(err)
				}
				hist = hist[n:]
			}
			if err := rw.Close(); err != nil {
				t.Fatal(err)
			}
			if rw.results.ahead != nil {
				lookedAhead++
			}
			if !bytes.Equal(got.Bytes(), want) {
				at := 0
				for at < min(got.Len(), len(want)) && got.Bytes()[at] == want[at] {
					at++
				}
				t.Fatalf("seed %d, %s: the body written in pieces differs from the whole one at byte %d:\npieces %.300s\nwhole  %.300s",
					seed, model, at, got.Bytes()[max(0, at-100):], want[max(0, at-100):])
			}
			if !json.Valid(got.Bytes()) {
				t.Fatalf("seed %d, %s: not JSON", seed, model)
			}
		}
	}
	if lookedAhead == 0 {
		t.Fatal("no history had a call the pieces before it did not answer: the read ahead went untested")
	}
}

// randomHistory is n messages of a session in e's workspace.
func randomHistory(rng *rand.Rand, e *env, n int) []*session.Message {
	texts := []string{"plain", "<b>&amp;</b> \"quoted\" back\\slash", "tab\there\nnewline", "é ü 🙂 \u2028 line sep", "", "  "}
	text := func() string { return texts[rng.IntN(len(texts))] + fmt.Sprint(rng.IntN(100)) }
	callID := func() string { return fmt.Sprintf("call_%d", rng.IntN(12)) }
	var out []*session.Message
	for range n {
		var m *session.Message
		switch r := rng.IntN(10); {
		case r < 2:
			m = &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: text()}}}
		case r < 5:
			m = &session.Message{Role: session.RoleAssistant, Model: "fake/trusted"}
			if rng.IntN(2) == 0 {
				m.Parts = append(m.Parts, session.Part{Kind: session.PartText, Text: text()})
			}
			for range rng.IntN(3) {
				input := json.RawMessage(fmt.Sprintf(`{"path":%q}`, e.public))
				if rng.IntN(4) == 0 {
					input = nil
				}
				m.Parts = append(m.Parts, session.Part{Kind: session.PartToolCall, CallID: callID(), Name: "read", Input: input})
			}
		case r < 8:
			m = &session.Message{Role: session.RoleTool, Tool: "read", ToolCallID: callID(), IsError: rng.IntN(6) == 0}
			if rng.IntN(8) == 0 {
				m.ToolCallID = ""
			}
			path := e.public
			body := "# Demo workspace\n" + text()
			if rng.IntN(2) == 0 {
				path, body = e.secret, strings.Join(e.secretLines, "\n")
			}
			m.Parts = []session.Part{{Kind: session.PartToolResult, Text: body}}
			if rng.IntN(3) > 0 {
				m.Meta.SourcePaths = []string{path}
			}
			if rng.IntN(5) == 0 {
				m.Parts = append(m.Parts, session.Part{Kind: session.PartText, Text: text()})
			}
		case r < 9:
			m = &session.Message{Role: session.RoleEvent, Parts: []session.Part{{Kind: session.PartText, Text: "switched"}}}
		default:
			m = &session.Message{Role: session.RoleSystem, Parts: []session.Part{{Kind: session.PartText, Text: text()}}}
		}
		out = append(out, m)
	}
	return out
}

// TestRequestPreviewOfAnUnknownProvider: the preview fails as a send does,
// with the one line that names the provider and what to add, not wrapped
// in a provider of no name.
func TestRequestPreviewOfAnUnknownProvider(t *testing.T) {
	e := newEnv(t, nil)
	id := e.newSession(t)
	if err := e.store.Append(id, &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	sendErr := e.send(t, id, "nosuch/m", "")
	_, bodyErr := e.r.RequestBody(context.Background(), id, "nosuch/m")
	_, writerErr := e.r.NewRequestWriter(context.Background(), &bytes.Buffer{}, id, "nosuch/m")
	for _, err := range []error{bodyErr, writerErr} {
		if err == nil || sendErr == nil || err.Error() != sendErr.Error() || !strings.Contains(err.Error(), `"nosuch"`) {
			t.Errorf("preview: %v; send: %v", err, sendErr)
		}
	}
}

// TestHashedIDsAreASet: hashedIDs answers as a set of the IDs added does,
// across the merges of its recent ones into its sorted ones, repeated IDs
// included.
func TestHashedIDsAreASet(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	s, want := newHashedIDs(), map[string]bool{}
	for i := range 100_000 {
		id := fmt.Sprintf("toolu_%d", rng.IntN(60_000))
		if i%3 != 0 {
			s.add(id)
			want[id] = true
		}
		probe := fmt.Sprintf("toolu_%d", rng.IntN(70_000))
		if s.has(probe) != want[probe] {
			t.Fatalf("after %d steps, %s: %v, want %v", i, probe, s.has(probe), want[probe])
		}
	}
	if len(s.sorted) == 0 || !slices.IsSorted(s.sorted) || len(s.sorted)+len(s.recent) < len(want) {
		t.Fatalf("sorted %d (in order %v), recent %d, for %d IDs", len(s.sorted), slices.IsSorted(s.sorted), len(s.recent), len(want))
	}
	for id := range want {
		if !s.has(id) {
			t.Fatalf("%s lost", id)
		}
	}
}
