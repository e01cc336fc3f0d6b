package redact

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/internal/spool"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// streamAll redacts msgs with a Stream, cut into batches of the sizes that
// next gives (a size per pass, so that the passes cut the session
// differently), up to inFlight batches at once (Stream.Start), and returns
// the batches' results one after another and the report. With spill set,
// the gathering's texts wait in a file there (Stream.Spill).
func streamAll(msgs []session.Message, model string, p *policy.Policy, next func() int, inFlight int, spill string) ([]session.Message, Report) {
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
		if spill != "" {
			s.Spill(spill)
		}
		for _, b := range batches() {
			s.Gather(b)
		}
		if err := s.Settle(readSeqs(msgs)); err != nil {
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
			got, rep := streamAll(msgs, "limited/x", pol, func() int { return tc.batch }, 1, "") // one at a time: two at once may decide a path twice
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
// policies with and without derived, secret and unknown-source redaction,
// its gathering's texts in memory or in a file.
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
		// Half the inputs gather with their texts in a file, as scrim
		// redact does.
		spill := ""
		if len(data)%2 == 1 {
			spill = t.TempDir()
		}
		got, rep := streamAll(msgs, "any/model", pol, next, 3, spill) // as scrim redact starts the next while the last is written
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

// readSeqs reads the messages of msgs whose Seqs Settle asks for (Seqs are
// 1..len(msgs) here), in one piece.
func readSeqs(msgs []session.Message) func(seqs []uint64, fn func([]session.Message)) error {
	return func(seqs []uint64, fn func([]session.Message)) error {
		var again []session.Message
		for _, seq := range seqs {
			again = append(again, msgs[seq-1])
		}
		fn(again)
		return nil
	}
}

// gatherWhole runs s's gathering passes over msgs, one batch.
func gatherWhole(t *testing.T, s *Stream, msgs []session.Message) {
	t.Helper()
	s.Gather(msgs)
	if err := s.Settle(readSeqs(msgs)); err != nil {
		t.Fatal(err)
	}
	if s.Stale() {
		s.Recheck(msgs, true)
	}
}

// spilledSession is a session whose denied files hold 2,400 distinct lines
// (about 150 KB: past what a spool keeps in memory), some of them quoted by
// the assistant, and a readable file that has some of them too.
func spilledSession() []session.Message {
	var msgs []session.Message
	add := func(m session.Message) {
		m.Seq = uint64(len(msgs) + 1)
		msgs = append(msgs, m)
	}
	line := func(f, i int) string {
		return fmt.Sprintf("secret line %d of file %d: %x %x", i, f, f*1000003+i*7919, i*104729+f)
	}
	for f := range 24 {
		var b strings.Builder
		for i := range 100 {
			b.WriteString(line(f, i) + "\n")
		}
		path := fmt.Sprintf("/work/secrets/file%d.txt", f)
		add(session.Message{Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{path}},
			Parts: []session.Part{{Kind: session.PartText, Text: b.String(), SourcePath: path}}})
		add(session.Message{Role: session.RoleAssistant, Parts: []session.Part{{Kind: session.PartText, Text: "It says " + line(f, f) + ", and more."}}})
		add(session.Message{Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{"/work/src/copy.txt"}},
			Parts: []session.Part{{Kind: session.PartText, Text: line(f, 99) + "\nreadable\n", SourcePath: "/work/src/copy.txt"}}})
	}
	return msgs
}

// TestStreamSpillsItsTexts: a Stream told to Spill keeps its candidates'
// texts in an unlinked file, not in memory, while it gathers, and reads back
// those it keeps when it finishes: what it sends is History's, the quotes
// of denied lines withheld and the lines readable content has too sent.
func TestStreamSpillsItsTexts(t *testing.T) {
	pol := policytest.Policy(t, withDerived)
	msgs := spilledSession()
	want, wantRep := History(msgs, "limited/x", pol)
	if wantRep.Derived < 24 || strings.Contains(want[1].Parts[0].Text, "secret line 0 of file 0") ||
		!strings.Contains(want[2].Parts[0].Text, "secret line 99 of file 0") {
		t.Fatalf("fixture: the quotes are not withheld, or the readable lines not sent: %+v", wantRep)
	}
	dir := t.TempDir()
	s := NewStream("limited/x", pol)
	s.Spill(dir)
	gatherWhole(t, s, msgs)
	c := &s.gather.cands
	if len(c.text.chunks) != 0 || c.spill == nil {
		t.Fatal("the candidates' texts are in memory")
	}
	if n, err := c.spill.texts.Len(); err != nil || n <= spool.Memory {
		t.Fatalf("the spill holds %d bytes (%v)", n, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("the spill's file is in its folder: %v", left)
	}
	// A stream given up before it finishes closes its file (on a system
	// that could not unlink it, removing it).
	given := NewStream("limited/x", pol)
	given.Spill(dir)
	gatherWhole(t, given, msgs)
	if err := given.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _ := given.gather.cands.spill.texts.Len(); n > spool.Memory {
		t.Fatalf("a closed stream's spill still has its file (%d bytes)", n)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	got, rep := s.Next(msgs, nil), s.Report()
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(rep, wantRep) {
		t.Fatalf("spilled, the result differs from History's:\n%+v\nwant\n%+v", rep, wantRep)
	}
}

// TestSpillThatCannotBeReadBack: a spilled text that cannot be read back
// fails Finish, every time, and nothing is redacted with part of the
// fingerprints: Ready panics rather than send.
func TestSpillThatCannotBeReadBack(t *testing.T) {
	pol := policytest.Policy(t, withDerived)
	s := NewStream("limited/x", pol)
	s.Spill(t.TempDir())
	gatherWhole(t, s, spilledSession())
	s.gather.cands.spill.texts.Close() // the file's part is gone
	for range 2 {
		if err := s.Finish(); err == nil || !strings.Contains(err.Error(), "reading back the gathering's texts") {
			t.Fatalf("Finish = %v", err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a stream whose gathering failed was ready to redact")
		}
	}()
	s.Ready()
}

// TestMemoCompacts: once a Stream is ready, its memo keeps the denied
// paths' decisions and only a hash of each allowed path: every path decides
// as before, none is decided again, the batches after give History's
// result, and no kept gathering is encoded from the compacted memo (it
// must name every path it rests on), even when nothing was withheld.
func TestMemoCompacts(t *testing.T) {
	pol := policytest.Policy(t, withDerived)
	var msgs []session.Message
	for i := range 40 {
		path := fmt.Sprintf("/work/%s/file%d.txt", []string{"src", "secrets"}[i%2], i%10)
		msgs = append(msgs, session.Message{Seq: uint64(i + 1), Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{path}},
			Parts: []session.Part{{Kind: session.PartText, Text: fmt.Sprintf("line %d of a file read", i), SourcePath: path}}})
	}
	want, wantRep := History(msgs, "limited/x", pol)
	s := NewStream("limited/x", pol)
	gatherWhole(t, s, msgs[:20])
	if s.Gathered(nil, math.MaxInt) == nil {
		t.Fatal("no gathering encoded before the stream is ready")
	}
	s.Ready()
	m := s.memo
	if len(m.verdicts) != 5 || len(m.allowed) != 5 {
		t.Fatalf("compacted: %d paths by name, %d allowed by hash; want the 5 denied and the 5 allowed", len(m.verdicts), len(m.allowed))
	}
	for p, v := range m.verdicts {
		if v.allowed || !strings.Contains(p, "/secrets/") {
			t.Fatalf("kept by name: %s (allowed %v)", p, v.allowed)
		}
	}
	for _, p := range []string{"/work/src/file0.txt", "/work/secrets/file1.txt"} {
		if v, ok := m.lookup(p); !ok || v.allowed != strings.Contains(p, "/src/") {
			t.Fatalf("%s: %+v %v after compacting", p, v, ok)
		}
	}
	if _, ok := m.lookup("/work/src/never-seen.txt"); ok {
		t.Fatal("a path never decided is found")
	}
	if s.Gathered(nil, math.MaxInt) != nil {
		t.Fatal("a gathering was encoded from the compacted memo")
	}
	start := pol.DecisionCount()
	got := append(s.Next(msgs[:20], nil), s.Next(msgs[20:], nil)...)
	if n := pol.DecisionCount() - start; n != 0 {
		t.Fatalf("%d paths decided again after compacting", n)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(s.Report(), wantRep) {
		t.Fatalf("after compacting, the result differs from History's")
	}

	// A tier that gathered nothing encodes nothing once ready either.
	quiet := NewStream("limited/x", pol)
	gatherWhole(t, quiet, msgs[:1]) // an allowed file only
	quiet.Ready()
	if quiet.Gathered(nil, math.MaxInt) != nil {
		t.Fatal("a gathering without fingerprints was encoded from the compacted memo")
	}
}
