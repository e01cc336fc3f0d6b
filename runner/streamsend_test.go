package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/internal/spool"
	"github.com/scrim-dev/scrim/session"
)

// A streamed send (Runner.History set: each request's history handed over a
// piece at a time, its body spliced in by the transport) puts on the wire,
// at every step of every turn, the bytes a whole send puts there for the
// same session: tool calls and their results, a model switch, a history
// long enough that the body's spool goes to a file. A request the provider
// redirects is sent again whole, read from the spool's start.
func TestStreamedSendIsTheWholeSend(t *testing.T) {
	var redirect atomic.Bool
	script := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if redirect.CompareAndSwap(true, false) {
			http.Redirect(w, r, "/v2/chat/completions", http.StatusTemporaryRedirect)
			return
		}
		var req ChatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// A tool call after the prompt, an answer after its result.
		if last := req.Messages[len(req.Messages)-1]; last.Role == "user" {
			sse(w, "", [2]string{"read", `{"path":"README.md"}`})
			return
		}
		sse(w, "read it")
	})
	e := newEnv(t, script)
	long := strings.Repeat("a readable line of the workspace, sent to every tier\n", 6000) // 318 KB: past a spool's memory
	seed := func() string {
		id := e.newSession(t)
		e.seedTrustedRead(t, id)
		if err := e.store.Append(id, &session.Message{Role: session.RoleUser, Model: "fake/trusted", Parts: []session.Part{{Kind: session.PartText, Text: long}}}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	turns := []struct{ model, prompt string }{{"fake/limited", "what is in the keys file?"}, {"fake/trusted", "and now?"}, {"fake/limited", ""}}
	run := func(r *Runner, id string) (bodies [][]byte) {
		for _, turn := range turns {
			from := e.wire.count()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := r.Send(ctx, id, turn.model, turn.prompt, nil)
			cancel()
			if err != nil {
				t.Fatalf("send %+v: %v", turn, err)
			}
			for i := from; i < e.wire.count(); i++ {
				bodies = append(bodies, e.wire.body(i))
			}
		}
		return bodies
	}

	whole := seed()
	want := run(e.r, whole)

	streamed := seed()
	s := New(e.store, e.pol, e.provs)
	s.Now = e.r.Now
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := 0
	s.History = func(ctx context.Context, h session.Header, model string, fn func([]session.Message) error) error {
		if stored := len(e.messages(t, h.ID)); uint64(stored) != h.Count {
			return fmt.Errorf("handed %d messages of %d", h.Count, stored)
		}
		req, err := e.r.Request(h.ID, model)
		if err != nil {
			return err
		}
		for hist := req.History; len(hist) > 0; {
			n := min(len(hist), 1+rng.IntN(3))
			if err := fn(hist[:n]); err != nil {
				return err
			}
			hist, pieces = hist[n:], pieces+1
		}
		return nil
	}
	redirect.Store(true)
	got := run(s, streamed)

	if len(got) != len(want)+1 || pieces == 0 {
		t.Fatalf("%d requests streamed (%d pieces), %d whole: want one more, the redirected one", len(got), pieces, len(want))
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Fatalf("the redirected request was sent again as %d bytes, not its %d", len(got[1]), len(got[0]))
	}
	for i, w := range want {
		if g := got[i+1]; !bytes.Equal(g, w) {
			t.Fatalf("request %d: streamed %d bytes, whole %d\nstreamed %.600s\nwhole    %.600s", i, len(g), len(w), g, w)
		}
	}
	if len(want[0]) <= spool.Memory || !strings.Contains(string(want[0]), "[Content from "+e.secret) {
		t.Fatalf("the first request (%d bytes) should be past a spool's memory and hold the placeholder", len(want[0]))
	}
	if a, b := events(e.messages(t, whole)), events(e.messages(t, streamed)); strings.Join(a, "\n") != strings.Join(b, "\n") || len(a) != 3 {
		t.Fatalf("switch events: whole %q, streamed %q", a, b)
	}
	if a, b := roles(e.messages(t, whole)), roles(e.messages(t, streamed)); a != b {
		t.Fatalf("stored: whole %s, streamed %s", a, b)
	}
}

// A streamed send of an empty session without a prompt is refused, as a
// whole one is, and sends nothing; a stream that fails ends the send with
// its error, nothing sent.
func TestStreamedSendRefusals(t *testing.T) {
	e := newEnv(t, nil)
	s := New(e.store, e.pol, e.provs)
	failing := fmt.Errorf("the store went away")
	s.History = func(context.Context, session.Header, string, func([]session.Message) error) error { return failing }
	id := e.newSession(t)
	if err := s.Send(context.Background(), id, "fake/limited", "", nil); err == nil || !strings.Contains(err.Error(), "nothing to send") {
		t.Fatalf("empty session, no prompt: %v", err)
	}
	if err := s.Send(context.Background(), id, "fake/limited", "hello", nil); err == nil || !strings.Contains(err.Error(), failing.Error()) {
		t.Fatalf("failing stream: %v", err)
	}
	if e.wire.count() != 0 {
		t.Fatalf("%d requests reached the provider", e.wire.count())
	}
}
