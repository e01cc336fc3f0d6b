package search

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

// modelPolicy: cloud may not read /proj/secrets and redacts what repeats
// it and credentials; paths only filters the paths.
const modelPolicy = `
default_tier = "cloud"

[tiers.cloud]
label   = "cloud"
read    = ["/**"]
deny    = ["/proj/secrets/**"]
derived = "redact"
secrets = "redact"

[tiers.paths]
label = "paths only"
read  = ["/**"]
deny  = ["/proj/secrets/**"]

[[models]]
match = "paths/*"
tier  = "paths"
`

// modelSession appends n messages in which "needle" is read from a denied
// file and an allowed one, quoted by the assistant from both (so some
// quotes repeat withheld content, some withheld later than they are
// quoted), printed by a command of unknown source, and set beside a
// credential.
func modelSession(t *testing.T, st *session.Store, n int) string {
	t.Helper()
	h, err := st.Create(session.Header{Title: "needles"})
	if err != nil {
		t.Fatal(err)
	}
	secretLine := func(i int) string { return fmt.Sprintf("needle_%d = unseal-kappa-%05d-omega-quartz", i%97, i%97) }
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	var msgs []*session.Message
	for i := range n {
		var m *session.Message
		switch i % 6 {
		case 0:
			m = &session.Message{Role: session.RoleTool, Tool: "read", Parts: []session.Part{{Kind: session.PartToolResult,
				Text: secretLine(i) + "\n" + secretLine(i+1) + "\n"}}, Meta: session.Meta{SourcePaths: []string{fmt.Sprintf("/proj/secrets/key%d.env", i%5)}}}
		case 1:
			m = &session.Message{Role: session.RoleTool, Tool: "read", Parts: []session.Part{{Kind: session.PartToolResult,
				Text: fmt.Sprintf("func needle%d() {}\nvar plain = %d\n", i, i)}}, Meta: session.Meta{SourcePaths: []string{fmt.Sprintf("/proj/src/f%d.go", i%7)}}}
		case 2:
			m = &session.Message{Role: session.RoleAssistant, Parts: []session.Part{{Kind: session.PartText,
				Text: fmt.Sprintf("The needle: %s, and func needle%d() {} too.", secretLine(i+4), i-1)}}}
		case 3:
			m = &session.Message{Role: session.RoleTool, Tool: "bash", Parts: []session.Part{{Kind: session.PartToolResult,
				Text: fmt.Sprintf("needle %d from a script\n", i)}}, Meta: session.Meta{UnknownSource: "a shell command"}}
		case 4:
			m = &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText,
				Text: fmt.Sprintf("the token is ghp_needleR8x2Lq9ZtK4mWv7Yb3Nc6Hd1Jf%04d, keep it", i)}}}
		default:
			m = &session.Message{Role: session.RoleAssistant, Parts: []session.Part{{Kind: session.PartText, Text: "no match here"},
				{Kind: session.PartToolCall, CallID: fmt.Sprint(i), Name: "grep", Input: []byte(`{"pattern":"needle"}`)}}}
		}
		m.CreatedAt = at.Add(time.Duration(i) * time.Second)
		msgs = append(msgs, m)
	}
	if err := st.Append(h.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	return h.ID
}

// modelStore is a store in a temporary folder of t holding modelSession's n
// messages, and modelPolicy.
func modelStore(t *testing.T, n int) (*session.Store, string, *policy.Policy) {
	t.Helper()
	st, err := session.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, modelSession(t, st, n), policytest.Policy(t, modelPolicy)
}

// wholeHits are the hits of session sid for model as search found them
// when it built what is sent of the whole session at once: the reference
// its batches must equal.
func wholeHits(t *testing.T, st *session.Store, sid string, q Query) []Hit {
	t.Helper()
	model := q.Model
	m, err := newMatcher(q.Text, q.Regex)
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.Get(sid)
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := st.Messages(sid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := runner.Context(st, sid, all, model, q.Policy)
	if err != nil {
		t.Fatal(err)
	}
	req := runner.BuildWith(all, sid, model, q.Policy, ctx)
	sent := map[uint64]*session.Message{}
	for i := range req.History {
		sent[req.History[i].Seq] = &req.History[i]
	}
	var hits []Hit
	for i := range all {
		st := &all[i]
		if st.Role == session.RoleEvent || len(messageHits(h, st, m)) == 0 {
			continue
		}
		s := sent[st.Seq]
		if s != nil {
			for j := range s.Parts {
				if !s.Parts[j].Redacted {
					hits = append(hits, partHits(h, s, j, m, s.Parts[j].Filtered)...)
				}
			}
		}
		hits = append(hits, withheld(h, st, s, m, req.Report.Tier.Label)...)
	}
	return hits
}

// A search for a model builds what is sent a batch of matching messages at
// a time, with the fingerprints of the whole session: its hits are those
// of one build of the whole session, for a tier that redacts derived
// content and credentials and for one that filters paths only.
func TestSearchForAModelInBatches(t *testing.T) {
	st, sid, pol := modelStore(t, 600)
	saved := foundBatch
	defer func() { foundBatch = saved }()
	for _, model := range []string{"anthropic/claude-sonnet-4-5", "paths/x"} {
		q := Query{Text: "needle", Model: model, Policy: pol}
		want := wholeHits(t, st, sid, q)
		kinds := map[string]int{}
		for _, h := range want {
			kinds[h.WithheldIn]++
		}
		if model != "paths/x" && (kinds[""] == 0 || kinds["/proj/secrets/key0.env"] == 0 || kinds["content derived from /proj/secrets/key1.env"] == 0 ||
			kinds["a credential (github-pat)"] == 0) {
			t.Fatalf("%s: the session does not hold every kind of hit: %v", model, kinds)
		}
		for _, batch := range []int{1, 7, 1024} {
			foundBatch = batch
			var got []Hit
			if _, err := Run(context.Background(), st, q, func(h Hit) error {
				got = append(got, h)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, batches of %d: %d hits, the whole build's %d", model, batch, len(got), len(want))
			}
		}
	}
}

// A search gathers a session's fingerprints for itself and lets them go
// once the session is searched; the caller's, for a session it has begun
// on (the TUI's open session), it uses and keeps.
func TestSearchLetsGoOfWhatItGathered(t *testing.T) {
	st, sid, pol := modelStore(t, 60)
	const model = "anthropic/claude-sonnet-4-5"
	m, err := newMatcher("needle", false)
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.Get(sid)
	if err != nil {
		t.Fatal(err)
	}
	search := func(r *redactor) {
		var buf []byte
		if res := scanSession(context.Background(), st, h, m, r, &buf, func([]Hit) bool { return true }); res.err != nil || len(res.hits) == 0 {
			t.Fatalf("%d hits, %v", len(res.hits), res.err)
		}
	}
	r := newRedactor(st, model, pol, nil)
	search(r)
	if r.own.Ready(st, pol, sid, model) {
		t.Fatal("the search kept the fingerprints it gathered")
	}
	shared := tally.NewContexts()
	if _, err := shared.Build(st, pol, sid, model, nil); err != nil {
		t.Fatal(err)
	}
	r = newRedactor(st, model, pol, shared)
	empty := tally.NewContexts()
	if r.contextsFor(sid) != shared || newRedactor(st, model, pol, empty).contextsFor(sid) == empty {
		t.Fatal("the caller's fingerprints not used for the session it holds, or used for one it does not")
	}
	search(r)
	if !shared.Ready(st, pol, sid, model) {
		t.Fatal("the caller's fingerprints let go")
	}
}
