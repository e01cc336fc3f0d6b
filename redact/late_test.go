package redact

import (
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/session"
)

// TestSettleChecksLateFingerprints: a whole session gathered in pieces,
// whose withheld file shares a line with a readable file read pieces
// before it, settles by reading again only the message that line was met
// in, and gathers what a Recheck of everything gathers: the shared line is
// not a fingerprint, the withheld file's own line is. Where every piece's
// bits are every candidate's, it reads the other messages too, and gathers
// the same. Where the log grew past its room, or reading fails, the
// builder stays stale, and a Recheck gives the same again.
func TestSettleChecksLateFingerprints(t *testing.T) {
	pol := policytest.Policy(t, spanPolicy)
	const (
		shared = "func sharedHelper(input string) error { return validate(input) }"
		own    = "const vaultMasterKey = \"zq81-kf02-a7c3-99xw\""
	)
	file := func(seq uint64, path, text string) session.Message {
		return session.Message{Seq: seq, Role: session.RoleTool, Tool: "read", Meta: session.Meta{SourcePaths: []string{path}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: text, SourcePath: path}}}
	}
	msgs := []session.Message{
		{Seq: 1, Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "look at both files"}}},
		file(2, "/work/src/helper.go", "package helper\n\n"+shared+"\n"),
		file(3, "/work/src/other.go", "package other // nothing shared here at all\n"),
		file(4, "/work/secrets/vault.go", "package vault\n\n"+shared+"\n"+own+"\n"),
	}
	bySeq := func(changed map[uint64]session.Message) func([]uint64, func([]session.Message)) error {
		return func(seqs []uint64, fn func([]session.Message)) error {
			var out []session.Message
			for _, s := range seqs {
				m := msgs[s-1]
				if c, ok := changed[s]; ok {
					m = c
				}
				out = append(out, m)
			}
			fn(out)
			return nil
		}
	}
	gather := func(read func([]uint64, func([]session.Message)) error) (*DerivedBuilder, error) {
		b := NewDerivedBuilder("x/y", pol)
		b.CheckLate(true)
		for i := range msgs {
			b.Add(msgs[i : i+1]) // a piece a message: the shared line is met in readable content first
		}
		return b, b.Settle(read)
	}
	fingerprints := func(t *testing.T, b *DerivedBuilder) []string {
		t.Helper()
		texts, _ := b.Done().Fingerprints()
		if !slices.Contains(texts, own) {
			t.Fatalf("the withheld file's own line is no fingerprint: %q", texts)
		}
		return texts
	}
	recheck := func(b *DerivedBuilder) {
		for i := range msgs {
			b.Recheck(msgs[i:i+1], i == len(msgs)-1)
		}
	}

	var asked []uint64
	b, err := gather(func(seqs []uint64, fn func([]session.Message)) error {
		asked = append(asked, seqs...)
		return bySeq(nil)(seqs, fn)
	})
	if err != nil {
		t.Fatal(err)
	}
	if b.Stale() {
		t.Fatal("stale after settling: every late fingerprint could be checked")
	}
	if !slices.Equal(asked, []uint64{2}) {
		t.Fatalf("read again %v, want only the message the shared line was met in, 2", asked)
	}
	settled := fingerprints(t, b)
	if slices.Contains(settled, shared) {
		t.Fatalf("the line a readable file has too is a fingerprint: %q", settled)
	}

	t.Run("bits shared", func(t *testing.T) {
		defer func(bits uint64) { logKeyBits = bits }(logKeyBits)
		logKeyBits = 0 // every piece noted under the bits of every candidate
		var asked [][]uint64
		b, err := gather(func(seqs []uint64, fn func([]session.Message)) error {
			asked = append(asked, slices.Clone(seqs))
			return bySeq(nil)(seqs, fn)
		})
		if err != nil {
			t.Fatal(err)
		}
		if b.Stale() {
			t.Fatal("stale: a candidate not in the first message its bits were noted in is looked for in the others")
		}
		if want := [][]uint64{{2}, {2, 3}}; !slices.EqualFunc(asked, want, slices.Equal) {
			t.Fatalf("read again %v, want %v: the first message each suspect was noted in, then every message for those not found", asked, want)
		}
		if got := fingerprints(t, b); !slices.Equal(got, settled) {
			t.Fatalf("settled with shared bits %q, want %q", got, settled)
		}
	})

	// What Recheck gathers from the same pieces.
	b = NewDerivedBuilder("x/y", pol)
	for i := range msgs {
		b.Add(msgs[i : i+1])
	}
	if !b.Stale() {
		t.Fatal("a fingerprint met after readable content does not make a growing gathering stale")
	}
	recheck(b)
	if want := fingerprints(t, b); !slices.Equal(settled, want) {
		t.Fatalf("settled %q, Recheck %q", settled, want)
	}

	for _, tc := range []struct {
		name string
		read func([]uint64, func([]session.Message)) error
		log  int
		err  bool
	}{
		{"log past its bound", bySeq(nil), 1, false},
		{"read fails", func([]uint64, func([]session.Message)) error { return errors.New("disk gone") }, maxLog, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(saved int) { maxLog = saved }(maxLog)
			maxLog = tc.log
			b, err := gather(tc.read)
			if (err != nil) != tc.err {
				t.Fatalf("Settle: %v", err)
			}
			if !b.Stale() {
				t.Fatal("not stale where Settle could not tell")
			}
			recheck(b)
			if b.Stale() {
				t.Fatal("stale after a Recheck")
			}
			if got := fingerprints(t, b); !slices.Equal(got, settled) {
				t.Fatalf("after Recheck %q, want %q", got, settled)
			}
		})
	}
}

// TestLogInChunks: a log read a range of its chunks at a time, as Settle's
// cores read it, gives each piece with its message's Seq, as reading it
// whole does.
func TestLogInChunks(t *testing.T) {
	var l allowedLog
	for i := range 3*logChunk + 77 {
		l.add(uint64(i)<<32|uint64(i), uint64(1000+i/5000)) // runs of 5,000 pieces across chunks
	}
	type piece struct {
		key uint32
		seq uint64
	}
	var whole, ranged []piece
	l.each(func(key uint32, seq uint64) { whole = append(whole, piece{key, seq}) })
	for lo := range len(l.keys) {
		l.eachIn(lo, lo+1, func(key uint32, seq uint64) { ranged = append(ranged, piece{key, seq}) })
	}
	if len(l.keys) < 3 || len(whole) != l.n || !slices.Equal(whole, ranged) {
		t.Fatalf("%d chunks: whole %d pieces, by chunk %d, equal %v", len(l.keys), len(whole), len(ranged), slices.Equal(whole, ranged))
	}
	for i, p := range whole {
		if p.key != uint32(i) || p.seq != uint64(1000+i/5000) {
			t.Fatalf("piece %d: %+v", i, p)
		}
	}
}

// TestLogRoom: a whole gathering with few candidates and much readable
// content before them notes it all for Settle when its caller gives the
// log room (LogRoom), and is read again whole when it does not: the room
// is the log's bytes, whatever the candidates take.
func TestLogRoom(t *testing.T) {
	pol := policytest.Policy(t, spanPolicy)
	file := func(seq uint64, path, text string) session.Message {
		return session.Message{Seq: seq, Role: session.RoleTool, Tool: "read", Meta: session.Meta{SourcePaths: []string{path}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: text, SourcePath: path}}}
	}
	var readable strings.Builder
	for i := range 20000 { // 20,000 lines: 80 KB of keys, and runs
		fmt.Fprintf(&readable, "func readableHelper%d(input string) error { return check%d(input) }\n", i, i)
	}
	msgs := []session.Message{
		file(1, "/work/src/helper.go", readable.String()),
		file(2, "/work/secrets/vault.go", "const vaultMasterKey = \"zq81-kf02-a7c3-99xw\"\n"),
	}
	for _, tc := range []struct {
		room  int
		stale bool
	}{{0, true}, {1 << 20, false}} {
		b := NewDerivedBuilder("x/y", pol)
		b.CheckLate(true)
		if tc.room > 0 {
			b.LogRoom(tc.room)
		} else {
			b.logFloor = 16 << 10 // less than the readable file's keys
		}
		for i := range msgs {
			b.Add(msgs[i : i+1])
		}
		if err := b.Settle(func([]uint64, func([]session.Message)) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if b.Stale() != tc.stale {
			t.Errorf("room %d: stale %v, want %v", tc.room, b.Stale(), tc.stale)
		}
	}
}

// TestSuspectsAreTheLogsMatches: the suspects of a gathering's log are, for
// each candidate not yet marked, the first message (or, asked for some
// candidates, every message) whose noted bits are the candidate's, as a
// plain pass over the log and the candidates finds them; with 32 bits, and
// with 10, where pieces share them with many candidates.
func TestSuspectsAreTheLogsMatches(t *testing.T) {
	pol := policytest.Policy(t, spanPolicy)
	rng := rand.New(rand.NewPCG(1, 2))
	line := func() string {
		return fmt.Sprintf("func helper%d(input string) error { return check%d(input) }", rng.IntN(40), rng.IntN(40))
	}
	var msgs []session.Message
	for seq := uint64(1); seq <= 400; seq++ {
		path := "/work/src/helper.go"
		if rng.IntN(3) == 0 {
			path = "/work/secrets/vault.go"
		}
		var text strings.Builder
		for range 1 + rng.IntN(20) {
			text.WriteString(line() + "\n")
		}
		msgs = append(msgs, session.Message{Seq: seq, Role: session.RoleTool, Tool: "read", Meta: session.Meta{SourcePaths: []string{path}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: text.String(), SourcePath: path}}})
	}
	defer func(saved uint64, piece int) { logKeyBits, hitPiece = saved, piece }(logKeyBits, hitPiece)
	for i, bits := range []uint64{1<<32 - 1, 1<<10 - 1, 1<<10 - 1} {
		logKeyBits = bits
		if i == 2 {
			hitPiece = 3 // the hits in many pieces
		}
		b := NewDerivedBuilder("x/y", pol)
		b.CheckLate(true)
		for i := 0; i < len(msgs); i += 7 {
			b.Add(msgs[i:min(i+7, len(msgs))])
		}
		c, log := &b.cands, b.log
		if log == nil || log.n == 0 || c.list.n == 0 {
			t.Fatalf("nothing to look up: log %v, %d candidates", log, c.list.n)
		}
		first, every := map[int32][]uint64{}, map[int32][]uint64{}
		var some []int32
		for k := range int32(c.list.n) {
			if c.isAlso(k) {
				continue
			}
			if k%3 == 0 {
				some = append(some, k)
			}
			key := logKey(maphash.String(c.seed, c.textOf(k)))
			log.each(func(noted uint32, seq uint64) {
				if noted != key {
					return
				}
				if len(first[k]) == 0 {
					first[k] = []uint64{seq}
				}
				if k%3 == 0 && (len(every[k]) == 0 || every[k][len(every[k])-1] != seq) {
					every[k] = append(every[k], seq)
				}
			})
		}
		if len(first) == 0 {
			t.Fatalf("bits %#x: no candidate's bits noted", bits)
		}
		if got := c.suspects(log, nil); !maps.EqualFunc(got, first, slices.Equal) {
			t.Errorf("bits %#x: %d suspects, want %d", bits, len(got), len(first))
		}
		if got := c.suspects(log, some); !maps.EqualFunc(got, every, slices.Equal) {
			t.Errorf("bits %#x, some: %d suspects, want %d", bits, len(got), len(every))
		}
	}
}
