package redact

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/internal/spool"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// keptRun redacts msgs (Seqs unique) twice with Streams, in batches of the
// sizes next gives, inFlight at once: first gathering, noting where it
// finds the fingerprints, and keeping both; then resuming the kept
// gathering and taking the places from the record instead of searching.
// It returns both results and reports, and the two records (nil when the
// tier gathers nothing).
func keptRun(t testing.TB, msgs []session.Message, model string, p *policy.Policy, next func() int, inFlight int) (first, second []session.Message, rep1, rep2 Report, kept, matched []byte) {
	t.Helper()
	run := func(s *Stream) []session.Message {
		all := []session.Message{}
		var started []func() []session.Message
		for rest := msgs; len(rest) > 0; {
			n := min(max(next(), 1), len(rest))
			started = append(started, s.Start(rest[:n:n], nil))
			rest = rest[n:]
			if len(started) == inFlight {
				all, started = append(all, started[0]()...), started[1:]
			}
		}
		for _, done := range started {
			all = append(all, done()...)
		}
		return all
	}
	s := NewStream(model, p)
	if !s.Gathers() {
		out := run(s)
		return out, out, s.Report(), s.Report(), nil, nil
	}
	s.Gather(msgs)
	if s.Stale() {
		s.Recheck(msgs, true)
	}
	kept = s.Gathered(nil, math.MaxInt)
	s.NoteMatches()
	first, rep1 = run(s), s.Report()
	matched = s.Matched(nil, math.MaxInt)
	if kept == nil || matched == nil {
		t.Fatalf("kept %d bytes, matched %d", len(kept), len(matched))
	}

	s = NewStream(model, p)
	if !s.Resume(kept) || !s.ResumeMatches(matched) {
		t.Fatal("the kept gathering or its matches were refused")
	}
	if s.NoteMatches(); s.rec != nil {
		t.Fatal("a stream with kept matches notes them again")
	}
	second, rep2 = run(s), s.Report()
	return first, second, rep1, rep2, kept, matched
}

// FuzzKeptMatches: a preview that takes where the fingerprints are from
// the record an earlier one kept gives exactly what searching gives, and
// what History gives, however the batches cut the session.
func FuzzKeptMatches(f *testing.F) {
	input := fuzzSession(f)
	f.Add([]byte("\x03\x01\x02\x05\x01\x01\x07\x02\x03\x01\x04\x06\x02\x01\x01\x03\x02\x05\x01\x02\x09\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pol, msgs, c := input(t, data)
		sizes := append([]byte{5}, c.data[max(0, len(c.data)-8):]...)
		k := 0
		next := func() int { k++; return int(sizes[k%len(sizes)]) % 9 }
		want, wantRep := History(msgs, "any/model", pol)
		first, second, rep1, rep2, _, _ := keptRun(t, msgs, "any/model", pol, next, 3)
		if !reflect.DeepEqual(first, want) || !reflect.DeepEqual(rep1, wantRep) {
			t.Fatal("the noting preview differs from History")
		}
		if !reflect.DeepEqual(second, want) || !reflect.DeepEqual(rep2, wantRep) {
			for i := range min(len(second), len(want)) {
				if !reflect.DeepEqual(second[i], want[i]) {
					t.Fatalf("with kept matches, message %d differs:\n got %+v\nwant %+v", i, second[i], want[i])
				}
			}
			t.Fatalf("with kept matches the report differs:\n got %+v\nwant %+v", rep2, wantRep)
		}
	})
}

// TestKeptMatchesAreWhatIsReplaced: the places a record holds are the ones
// replaced (a record that says otherwise is followed, so the search did
// not run), and a record that does not decode is refused.
func TestKeptMatchesAreWhatIsReplaced(t *testing.T) {
	const vault = "the launch code is ZX-99-ALPHA-7731 for the east silo"
	denied := "/home/me/secrets/vault.txt"
	msgs := []session.Message{
		{Seq: 1, Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{denied}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: vault + "\n", SourcePath: denied}}},
		{Seq: 2, Role: session.RoleAssistant, Parts: []session.Part{{Kind: session.PartText, Text: "It says: " + vault + "."}}},
		{Seq: 3, Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "thanks, nothing to see here"}}},
	}
	pol := policytest.Policy(t, withDerived)
	one := func() int { return 1 }
	first, second, _, _, kept, matched := keptRun(t, msgs, "limited/x", pol, one, 2)
	if !reflect.DeepEqual(first, second) || !strings.Contains(sentText(first), "[Content from "+denied) || strings.Contains(sentText(first), "ZX-99") {
		t.Fatalf("fixture: the quote must be replaced, with or without the record: %q", sentText(second))
	}

	// A record that puts the fingerprint in message 3 instead.
	k, err := decodeMatches(matched, "limited cloud")
	if err != nil || len(k.seqs) != 1 || k.seqs[0] != 2 {
		t.Fatalf("record: %v, messages %v", err, k.seqs)
	}
	r := newMatchRecorder()
	r.add(&matchNotes{spans: []keptSpan{{seq: 3, part: 0, key: -1, start: 0, n: 6, path: 0}}, paths: []string{denied}})
	moved := r.record(nil, math.MaxInt)
	s := NewStream("limited/x", pol)
	if !s.Resume(kept) || !s.ResumeMatches(moved) {
		t.Fatal("refused")
	}
	out := s.Next(msgs, nil)
	if got := out[1].Parts[0].Text; !strings.Contains(got, "ZX-99") {
		t.Fatalf("message 2 was searched, not taken from the record: %q", got)
	}
	if got := out[2].Parts[0].Text; !strings.HasPrefix(got, "[Content from "+denied) || !strings.HasSuffix(got, " nothing to see here") {
		t.Fatalf("message 3 lacks the record's place: %q", got)
	}

	for _, bad := range [][]byte{{}, {matchesVersion + 1}, matched[:len(matched)-1], append(append([]byte{}, matched...), 0x80),
		append(append([]byte{}, matched...), 0, 0, 0, 0, 1, 0),   // out of order: message 2 again, at 0
		append(append([]byte{}, matched...), 1, 0, 0, 0, 1, 9)} { // a path the record has not
		if s := NewStream("limited/x", pol); !s.Resume(kept) || s.ResumeMatches(bad) {
			t.Fatalf("a damaged record (%d bytes) was taken", len(bad))
		}
	}
	if s := NewStream("limited/x", pol); s.ResumeMatches(matched) {
		t.Fatal("matches taken without the gathering they were found with")
	}
}

// TestMatchRecorderSpills: a recorder's entries past a spool's memory go
// to its file and come back whole, in order, in the record; a record over
// the caller's room, or entries over the recorder's, are not made.
func TestMatchRecorderSpills(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	notes := func() *matchNotes {
		m := &matchNotes{paths: []string{"/a/secret", "/b/key"}}
		for seq := uint64(1); seq <= 60_000; seq++ {
			m.spans = append(m.spans, keptSpan{seq: seq, part: int32(seq % 3), key: int32(seq%5) - 1, start: int32(seq % 1000), n: 20, path: int32(seq % 2)})
		}
		return m
	}
	r := newMatchRecorder()
	r.add(notes())
	if r.size <= spool.Memory {
		t.Fatalf("fixture: %d bytes of entries must be past a spool's memory", r.size)
	}
	rec := r.record([]byte("head"), math.MaxInt)
	k, err := decodeMatches(rec[len("head"):], "cloud")
	if err != nil || len(k.seqs) != 60_000 {
		t.Fatalf("read back: %v, %d messages", err, len(k.seqs))
	}
	spans, ok := k.of(59_999, 2, 3, strings.Repeat("x", 2000), nil)
	if !ok || len(spans) != 1 || spans[0].start != 999 || spans[0].path != "/b/key" {
		t.Fatalf("message 59999: %+v %v", spans, ok)
	}

	r = newMatchRecorder()
	r.add(notes())
	if r.record(nil, len(rec)-len("head")-1) != nil {
		t.Fatal("a record made past the caller's room")
	}
	defer func(n int64) { maxMatches = n }(maxMatches)
	maxMatches = 1 << 10
	r = newMatchRecorder()
	if r.add(notes()); r.record(nil, math.MaxInt) != nil {
		t.Fatal("a record made of entries past the recorder's room")
	}
}
