package redact

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// streamAll redacts msgs with a Stream, cut into batches of the sizes that
// next gives (a size per pass, so that the passes cut the session
// differently), up to inFlight batches at once (Stream.Start), and returns
// the batches' results one after another and the report.
func streamAll(msgs []session.Message, model string, p *policy.Policy, next func() int, inFlight int) ([]session.Message, Report) {
	batches := func() [][]session.Message {
		var out [][]session.Message
		for rest := msgs; ; {
			n := next()
			if n == 0 {
				out = append(out, nil) // an empty batch, then at least one message
				n = 1
			}
			n = min(n, len(rest))
			out = append(out, rest[:n:n])
			rest = rest[n:]
			if len(rest) == 0 {
				return out
			}
		}
	}
	s := NewStream(model, p)
	if s.Gathers() {
		for _, b := range batches() {
			s.Gather(b)
		}
		if err := s.Settle(func(seqs []uint64, fn func([]session.Message)) error {
			var again []session.Message // Seqs are 1..len(msgs) here
			for _, seq := range seqs {
				again = append(again, msgs[seq-1])
			}
			fn(again)
			return nil
		}); err != nil {
			panic(err)
		}
		if s.Stale() {
			bs := batches()
			for i, b := range bs {
				s.Recheck(b, i == len(bs)-1)
			}
		}
	}
	all := []session.Message{}
	var started []func() []session.Message
	for _, b := range batches() {
		started = append(started, s.Start(b, nil))
		if len(started) == inFlight {
			all, started = append(all, started[0]()...), started[1:]
		}
	}
	for _, done := range started {
		all = append(all, done()...)
	}
	return all, s.Report()
}

// withDerived is testPolicy with derived = "redact" on its limited tier.
var withDerived = strings.Replace(testPolicy, `label = "limited cloud"`, "label = \"limited cloud\"\nderived = \"redact\"", 1)

// TestStreamDecidesEachPathOnce: a session redacted in batches is decided
// once per distinct path, as a whole one is, however the batches cut it and
// whether or not a gathering pass reads it first; denied paths stay in order
// of first appearance across batches, and the result is History's.
func TestStreamDecidesEachPathOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy string
		batch  int
	}{{"paths, batches of 100", testPolicy, 100}, {"paths, batches of 4,096", testPolicy, 4096}, {"derived, batches of 7", withDerived, 7}} {
		t.Run(tc.name, func(t *testing.T) {
			pol := policytest.Policy(t, tc.policy)
			if tier, _ := pol.TierFor("limited/x"); tier.RedactsDerived() != (tc.policy == withDerived) {
				t.Fatalf("fixture: tier %+v", tier)
			}
			const distinct = 50
			msgs := make([]session.Message, 10000)
			for i := range msgs {
				k := (i * 7) % distinct
				path := fmt.Sprintf("/work/%s/file%d.txt", []string{"src", "secrets"}[k%2], k)
				msgs[i] = session.Message{Seq: uint64(i + 1), Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{path}},
					Parts: []session.Part{{Kind: session.PartText, Text: fmt.Sprintf("line %d of a file read\nrepeated line %d", i, k), SourcePath: path}}}
			}
			want, wantRep := History(msgs, "limited/x", pol)
			start := pol.DecisionCount()
			got, rep := streamAll(msgs, "limited/x", pol, func() int { return tc.batch }, 1) // one at a time: two at once may decide a path twice
			if n := pol.DecisionCount() - start; n != distinct {
				t.Fatalf("%d decisions for %d distinct paths", n, distinct)
			}
			// 7i mod 50 meets the odd (denied) files as 7, 21, 35, 49, 13, …
			if len(rep.DeniedPaths) != distinct/2 || !strings.HasSuffix(rep.DeniedPaths[0].Path, "/file7.txt") || !strings.HasSuffix(rep.DeniedPaths[4].Path, "/file13.txt") {
				t.Fatalf("denied paths not in order of first appearance: %+v", rep.DeniedPaths)
			}
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(rep, wantRep) {
				t.Fatalf("streamed in batches of %d, the result differs from History's:\n%+v\nwant\n%+v", tc.batch, rep, wantRep)
			}
		})
	}
}

// TestStreamGathersBeforeNext: gathering after Next has started would come
// too late for the batches already sent, so it is refused.
func TestStreamGathersBeforeNext(t *testing.T) {
	pol := policytest.Policy(t, withDerived)
	s := NewStream("limited/x", pol)
	if !s.Gathers() {
		t.Fatal("a tier with derived = \"redact\" must gather")
	}
	s.Next(nil, nil)
	defer func() {
		if recover() == nil {
			t.Fatal("Gather after Next did not panic")
		}
	}()
	s.Gather([]session.Message{{Role: session.RoleUser}})
}

// FuzzStream: a random history redacted by a Stream, cut into batches of
// random sizes (empty ones too; each pass cut its own way), gives exactly
// what History gives for the whole of it, report included, for random
// policies with and without derived, secret and unknown-source redaction.
// fuzzSession adds the streaming fuzz targets' seeds to f, and returns
// what makes an input's policy and history: messages numbered from 1, as a
// store numbers them.
func fuzzSession(f *testing.F) func(t *testing.T, data []byte) (*policy.Policy, []session.Message, *choices) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 20, 2, 1, 4, 2, 1, 1, 1, 2, 2, 3, 2, 1, 3, 7})
	f.Add([]byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox"))
	paths := fuzzTree(f)
	root := filepath.Dir(filepath.Dir(paths[0]))
	return func(t *testing.T, data []byte) (*policy.Policy, []session.Message, *choices) {
		c := &choices{data}
		pol, _ := fuzzPolicy(t, c, root)
		msgs := fuzzHistory(c, paths)
		for i := range msgs {
			msgs[i].Seq = uint64(i + 1)
		}
		return pol, msgs, c
	}
}

func FuzzStream(f *testing.F) {
	input := fuzzSession(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		pol, msgs, c := input(t, data)
		// The sizes come from the end of the input, so that the history
		// does not change with them; past it, batches of one.
		sizes := c.data
		if len(sizes) > 8 {
			sizes = sizes[len(sizes)-8:]
		}
		k := 0
		next := func() int {
			if len(sizes) == 0 {
				return 1
			}
			k++
			return int(sizes[k%len(sizes)]) % 12
		}
		want, wantRep := History(msgs, "any/model", pol)
		got, rep := streamAll(msgs, "any/model", pol, next, 3) // as scrim redact starts the next while the last is written
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("streamed message %d differs:\n got %+v\nwant %+v", i, got[i], want[i])
				}
			}
			t.Fatalf("streamed %d messages, History %d", len(got), len(want))
		}
		if !reflect.DeepEqual(rep, wantRep) {
			t.Fatalf("streamed report differs:\n got %+v\nwant %+v", rep, wantRep)
		}
	})
}
