package redact

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// gatheredStream redacts msgs with a Stream that resumes from kept if it
// can, and gathers otherwise; it says which, and what it gathered.
func gatheredStream(t *testing.T, msgs []session.Message, model string, p *policy.Policy, kept []byte) (out []session.Message, rep Report, resumed bool, gathered []byte) {
	s := NewStream(model, p)
	if resumed = kept != nil && s.Resume(kept); !resumed {
		s.Gather(msgs)
		if s.Stale() {
			s.Recheck(msgs, true)
		}
	}
	gathered = s.Gathered(nil, math.MaxInt)
	if gathered != nil && s.derived.win.entries != nil {
		// Encoded before the index is filed, the record is not held
		// beside it (planWindows).
		t.Fatal("the fingerprints' index was filed before the gathering was encoded")
	}
	if gathered != nil {
		// The room it needs is measured exactly: a byte less, and it is
		// not made; what it is appended to comes first.
		if g := s.Gathered([]byte("prefix"), len(gathered)+5); g != nil {
			t.Fatalf("a gathering of %d bytes made within %d", len(gathered), len(gathered)-1)
		}
		if g := s.Gathered([]byte("prefix"), len(gathered)+6); string(g) != "prefix"+string(gathered) {
			t.Fatal("a gathering appended to a prefix is not the prefix and the gathering")
		}
	}
	s.Ready() // as scrim redact ends its gathering: the index filed, the texts let go
	if s.derived != nil && (!s.derived.Sealed() || s.Gathered(nil, math.MaxInt) != nil) {
		t.Fatal("after Ready the fingerprints' texts are still held, or encoded again")
	}
	out = s.Next(msgs, nil)
	return out, s.Report(), resumed, gathered
}

// TestResumeKeptGathering: a kept gathering stands in for the gathering
// passes only while every decision it rests on is still the one made now.
// A symlink moved into a denied folder makes a path read before denied: the
// kept gathering, which had its content as readable, is refused, and the
// content quoted from it is withheld as History withholds it.
func TestResumeKeptGathering(t *testing.T) {
	root, err := policy.Canonical(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const vault = "the launch code is ZX-99-ALPHA-7731 for the east silo"
	const moved = `const vaultPassphrase = "s3cr3t-horse-battery-staple"`
	for name, content := range map[string]string{"secrets/vault.txt": vault, "src/conf.go": moved, "secrets/conf.go": moved} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "current")
	if err := os.Symlink(filepath.Join(root, "src"), link); err != nil {
		t.Fatal(err)
	}
	read := func(seq uint64, path, text string) session.Message {
		return session.Message{Seq: seq, Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{path}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: text + "\n", SourcePath: path}}}
	}
	msgs := []session.Message{
		read(1, filepath.Join(root, "secrets/vault.txt"), vault),
		read(2, filepath.Join(link, "conf.go"), moved),
		{Seq: 3, Role: session.RoleAssistant, Parts: []session.Part{{Kind: session.PartText,
			Text: "It says: " + vault + ", and the config has " + moved + "."}}},
	}
	pol := policytest.Policy(t, withDerived)

	want, wantRep := History(msgs, "limited/x", pol)
	got, rep, resumed, kept := gatheredStream(t, msgs, "limited/x", pol, nil)
	if resumed || kept == nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(rep, wantRep) {
		t.Fatalf("first preview: resumed %v, kept %d bytes, same as History: %v", resumed, len(kept), reflect.DeepEqual(got, want))
	}
	if s := sentText(got); strings.Contains(s, "ZX-99-ALPHA") || !strings.Contains(s, "s3cr3t-horse") {
		t.Fatalf("fixture: the quote of the denied file must go, the readable one stay: %q", s)
	}

	got, rep, resumed, _ = gatheredStream(t, msgs, "limited/x", pol, kept)
	if !resumed || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(rep, wantRep) {
		t.Fatalf("nothing changed: resumed %v, same as History %v", resumed, reflect.DeepEqual(got, want))
	}

	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "secrets"), link); err != nil {
		t.Fatal(err)
	}
	want, wantRep = History(msgs, "limited/x", pol)
	got, rep, resumed, _ = gatheredStream(t, msgs, "limited/x", pol, kept)
	if resumed {
		t.Fatal("the kept gathering was taken although a path it decided readable is now denied")
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(rep, wantRep) {
		t.Fatalf("after the refusal the result differs from History's:\n%+v\nwant\n%+v", rep, wantRep)
	}
	if s := sentText(got); strings.Contains(s, "s3cr3t-horse") {
		t.Fatalf("the quote of the file now denied is sent: %q", s)
	}

	for _, bad := range [][]byte{{}, {gatherRules + 1}, kept[:len(kept)/2], append(append([]byte{}, kept...), 0)} {
		if _, _, resumed, _ := gatheredStream(t, msgs, "limited/x", pol, bad); resumed {
			t.Fatalf("a damaged kept gathering (%d bytes) was taken", len(bad))
		}
	}
}

// TestKeptGatheringChunks: a kept gathering read back is cut into chunks as
// an arena is, so every text reads back whole from its place: texts that
// run past a chunk's room, one longer than a chunk, and one longer than a
// place can say the length of.
func TestKeptGatheringChunks(t *testing.T) {
	var texts []string
	for i := 0; len(texts) < 3000; i++ {
		texts = append(texts, strings.Repeat(string(rune('a'+i%26)), 1+i*7%4000)+"-"+strings.Repeat("x", i%13))
	}
	texts = append(texts[:1000], append([]string{strings.Repeat("long-", arenaChunk/4)}, texts[1000:]...)...)
	texts = append(texts[:2000], append([]string{strings.Repeat("huge-", refLong/5+1)}, texts[2000:]...)...)
	_, _, kept, l, _ := keptRoundTrip(t, texts)
	if len(l.text.chunks) < 4 {
		t.Fatalf("%d bytes of texts read back in %d chunks", len(kept), len(l.text.chunks))
	}
	if len(l.fps) != len(texts) {
		t.Fatalf("%d fingerprints read back, want %d", len(l.fps), len(texts))
	}
	for i, want := range texts {
		if got := l.textOf(int32(i)); got != want {
			t.Fatalf("text %d (%d bytes) reads back as %d bytes", i, len(want), len(got))
		}
	}
}

// TestKeptGatheringFilesAsBefore: a kept gathering keeps where each
// fingerprint's windows start, so that the index made when it is resumed
// is, entry for entry, the one made when it was gathered, without counting
// every window again; a place that does not fit its fingerprint is not
// taken, and the places are decided afresh. Over the budget too, where
// lines share their words' windows (shareWindows).
func TestKeptGatheringFilesAsBefore(t *testing.T) {
	t.Run("under the budget", func(t *testing.T) { keptGatheringFilesAsBefore(t, false) })
	t.Run("over the budget", func(t *testing.T) {
		overBudget(t)
		keptGatheringFilesAsBefore(t, true)
	})
}

func keptGatheringFilesAsBefore(t *testing.T, shared bool) {
	var texts []string
	for i := range 3000 {
		texts = append(texts, fmt.Sprintf("func step%d_%d(x int) int { return x*%d }", i, i%12, i%7),
			fmt.Sprintf("step%d_%d", i, i%12), fmt.Sprintf("k%05d", i), fmt.Sprintf("VALUE_%d_of_the_%dth", i, i%40))
	}
	d, m, _, l, from := keptRoundTrip(t, texts)
	if !slices.Equal(from, d.win.from) {
		t.Fatal("the places read back are not the ones kept")
	}
	if got := slices.ContainsFunc(from, func(o uint16) bool { return o&filedShare != 0 }); got != shared {
		t.Fatalf("fixture: windows shared %v, want %v", got, shared)
	}
	d.win.ready(&d.fpSet)
	if w := newWindows(&l.fpSet, from); !reflect.DeepEqual(w.entries, d.win.entries) || !reflect.DeepEqual(w.dir, d.win.dir) || !reflect.DeepEqual(w.filter, d.win.filter) {
		t.Fatal("resumed, the index differs from the one gathered")
	}
	allocated := func(from []uint16) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		newWindows(&l.fpSet, from)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	table := uint64(len(newWindowCounts(&l.fpSet).n))
	if afresh, resumed := allocated(nil), allocated(from); resumed+table > afresh {
		t.Fatalf("resumed, the index took %d bytes to make, afresh %d: the windows were counted again", resumed, afresh)
	}
	bad := slices.Clone(from)
	bad[0] = math.MaxUint16
	if w := newWindows(&l.fpSet, bad); !reflect.DeepEqual(w.entries, d.win.entries) || !slices.Equal(w.from, d.win.from) {
		t.Fatal("a place past its fingerprint was taken")
	}
	d.Seal()
	if d.win.from != nil || encodeGathered(nil, math.MaxInt, m, d) != nil {
		t.Fatal("sealed, the places are still held, or the set encoded")
	}
}

// keptRoundTrip is texts as the fingerprints of one denied path, kept
// (encodeGathered) and read back.
func keptRoundTrip(t *testing.T, texts []string) (d *Derived, m *Memo, kept []byte, l fpList, from []uint16) {
	t.Helper()
	d = derivedOfTexts(texts, "kept")
	m = &Memo{verdicts: map[string]verdict{"/p": {allowed: false}}}
	kept = encodeGathered(nil, math.MaxInt, m, d)
	_, _, l, from, err := decodeGathered(kept)
	if err != nil {
		t.Fatal(err)
	}
	return d, m, kept, l, from
}
