package redact

import (
	"errors"
	"slices"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/session"
)

// TestSettleChecksLateFingerprints: a whole session gathered in pieces,
// whose withheld file shares a line with a readable file read pieces
// before it, settles by reading again only the message that line was met
// in, and gathers what a Recheck of everything gathers: the shared line is
// not a fingerprint, the withheld file's own line is. Where the message read
// again no longer has the line, the log grew past its bound, or reading
// fails, the builder stays stale, and a Recheck gives the same again.
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
		{"changed since", bySeq(map[uint64]session.Message{2: file(2, "/work/src/helper.go", "package helper\n")}), maxLog, false},
		{"log past its bound", bySeq(nil), 1, false},
		{"read fails", func([]uint64, func([]session.Message)) error { return errors.New("disk gone") }, maxLog, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := maxLog
			maxLog = tc.log
			defer func() { maxLog = saved }()
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
		l.add(uint64(i), uint64(1000+i/5000)) // runs of 5,000 pieces across chunks
	}
	type piece struct{ h, seq uint64 }
	var whole, ranged []piece
	l.each(func(h, seq uint64) { whole = append(whole, piece{h, seq}) })
	for lo := range len(l.hashes) {
		l.eachIn(lo, lo+1, func(h, seq uint64) { ranged = append(ranged, piece{h, seq}) })
	}
	if len(l.hashes) < 3 || len(whole) != l.n || !slices.Equal(whole, ranged) {
		t.Fatalf("%d chunks: whole %d pieces, by chunk %d, equal %v", len(l.hashes), len(whole), len(ranged), slices.Equal(whole, ranged))
	}
	for i, p := range whole {
		if p.h != uint64(i) || p.seq != uint64(1000+i/5000) {
			t.Fatalf("piece %d: %+v", i, p)
		}
	}
}
