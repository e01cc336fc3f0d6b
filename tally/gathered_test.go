package tally

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// TestContextsKeepTheirGathering: the TUI's contexts keep the fingerprints
// they gather from a session's start, and a program started again reads
// them back instead of reading the session twice; a message appended since
// has it gather again. To tell which gathering a context used, the kept one
// is replaced by one with a fingerprint the session does not have.
func TestContextsKeepTheirGathering(t *testing.T) {
	root, st, h := gatheringSession(t, "kept")
	secret := filepath.Join(root, "ws", "secrets", "vault.txt")
	read := func(i int) *session.Message {
		return &session.Message{Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{secret}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: fmt.Sprintf("the launch code of silo %d is ZX-%04d-ALPHA-7731\n", i, i), SourcePath: secret}}}
	}
	must(t, st.Append(h.ID, read(1), read(2)))
	pol := policytest.Policy(t, derivedTiers)
	const model = "limited/m"

	gathered := func(x *Contexts) *redact.Derived {
		t.Helper()
		d, err := x.fingerprints(st, pol, h.ID, model)
		must(t, err)
		return d
	}
	// A small gathering: its builder stays, to grow with the session, and
	// the texts with it.
	fresh := gathered(NewContexts())
	first, firstPaths := fresh.Fingerprints()
	if len(first) == 0 || fresh.Sealed() {
		t.Fatalf("fixture: gathered %q (sealed %v)", first, fresh.Sealed())
	}
	if _, ok, err := st.CountRecord(h.ID, "gathered/limited"); err != nil || !ok {
		t.Fatalf("the gathering was not kept (%v)", err)
	}
	// Read back, it is sealed: the texts went with the record.
	if again := gathered(NewContexts()); !again.Sealed() || !holdsAll(again, first, firstPaths) {
		t.Fatalf("read back %d fingerprints (sealed %v), gathered %q", again.Len(), again.Sealed(), first)
	}

	// Plant a gathering with one more fingerprint: a new program takes it.
	const planted = "the planted line that no message holds 12345"
	s := redact.NewStream(model, pol)
	s.Gather([]session.Message{{Seq: 1, Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{secret}},
		Parts: []session.Part{{Kind: session.PartToolResult, Text: planted + "\n", SourcePath: secret}}}})
	rev, err := st.Revision(h.ID)
	must(t, err)
	must(t, SaveGathered(st, pol, h.ID, model, rev, 2, s.Gathered))
	x := NewContexts()
	if _, ok := gathered(x).Holds(planted); !ok {
		t.Fatal("a new program did not take the kept gathering")
	}

	// One message more, in the same program: the kept gathering no longer
	// holds, the session is gathered from its start, and that is kept.
	must(t, st.Append(h.ID, read(3)))
	grown := gathered(x)
	got, gotPaths := grown.Fingerprints()
	if slices.Contains(got, planted) || len(got) <= len(first) {
		t.Fatalf("after an append: %q", got)
	}
	if again := gathered(NewContexts()); !holdsAll(again, got, gotPaths) {
		t.Fatalf("the gathering after the append was not kept: %d fingerprints, want %q", again.Len(), got)
	}
}

// holdsAll reports whether d's fingerprints are texts, each naming the
// path of the same place in paths (sealed or not: Derived.Holds).
func holdsAll(d *redact.Derived, texts, paths []string) bool {
	if d.Len() != len(texts) {
		return false
	}
	for i, text := range texts {
		if path, ok := d.Holds(text); !ok || path != paths[i] {
			return false
		}
	}
	return true
}

// gatheringSession opens a store in a folder of its own (its path
// canonical, as the policy decides paths) and makes an empty session in it.
func gatheringSession(t *testing.T, title string) (root string, st *session.Store, h session.Header) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	st, err = session.Open(filepath.Join(root, "store"))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	h, err = st.Create(session.Header{Title: title})
	must(t, err)
	return root, st, h
}

// derivedTiers is the shared test policy with derived redaction on the
// limited tier.
var derivedTiers = strings.Replace(policytest.Tiers, `label = "limited"`, "label = \"limited\"\nderived = \"redact\"", 1)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestGatheringInPiecesEqualsWhole: the TUI gathers a long session in
// pieces read on every core and handed over in order; what it gathers is
// what one pass over the whole session gives: the same fingerprints, in
// the same order, each with the path it first appears in. Content the
// tier may read in the first piece has lines that a withheld file in the
// last piece has too, so those lines count only if the pieces are checked
// against fingerprints found later.
func TestGatheringInPiecesEqualsWhole(t *testing.T) {
	root, st, h := gatheringSession(t, "pieces")
	n := 3*gatherPiece + 17
	read := func(path, text string) session.Message {
		return session.Message{Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{path}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: text, SourcePath: path}}}
	}
	shared := "const sharedConfigurationValue = \"both-files-hold-this-0042\"\n"
	var msgs []session.Message
	for i := 1; i <= n; i++ {
		var m session.Message
		switch {
		case i == 5:
			m = read(filepath.Join(root, "ws", "src", "config.go"), shared+"func readable() {}\n")
		case i%97 == 0:
			vault := filepath.Join(root, "ws", "secrets", fmt.Sprintf("vault%d.txt", i%3))
			m = read(vault, fmt.Sprintf("the launch code of silo %d is ZX-%04d-ALPHA-7731\n", i/300, i/300))
		case i == n-3:
			m = read(filepath.Join(root, "ws", "secrets", "late.txt"), shared+"a late withheld line only here 9911\n")
		default:
			m = session.Message{Role: session.RoleAssistant, Parts: []session.Part{{Kind: session.PartText, Text: fmt.Sprintf("step %d", i)}}}
		}
		msgs = append(msgs, m)
	}
	for i := 0; i < len(msgs); i += 1000 {
		batch := make([]*session.Message, 0, 1000)
		for j := i; j < min(i+1000, len(msgs)); j++ {
			batch = append(batch, &msgs[j])
		}
		must(t, st.Append(h.ID, batch...))
	}
	pol := policytest.Policy(t, derivedTiers)
	const model = "limited/m"
	d, err := NewContexts().fingerprints(st, pol, h.ID, model)
	must(t, err)
	texts, paths := d.Fingerprints()
	stored, _, err := st.Range(h.ID, 1, uint64(n))
	must(t, err)
	wantTexts, wantPaths := redact.PrepareDerived(stored, model, pol).Fingerprints()
	if !reflect.DeepEqual(texts, wantTexts) || !reflect.DeepEqual(paths, wantPaths) {
		t.Fatalf("in pieces: %q from %q\nwhole: %q from %q", texts, paths, wantTexts, wantPaths)
	}
	if slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, "sharedConfigurationValue") }) {
		t.Fatalf("a line readable content has too is a fingerprint: %q", texts)
	}
	if !slices.Contains(texts, "a late withheld line only here 9911") || len(texts) < 10 {
		t.Fatalf("fixture: %q", texts)
	}
}

// TestLargeGatheringLetsItsCandidatesGo: a whole gathering too large to
// keep its builder drops the candidates, and a session grown since is
// gathered again from its start: what it gives is what a first gathering
// of the grown session gives.
func TestLargeGatheringLetsItsCandidatesGo(t *testing.T) {
	saved := largeGathering
	largeGathering = 0
	defer func() { largeGathering = saved }()
	root, st, h := gatheringSession(t, "large")
	vault := filepath.Join(root, "ws", "secrets", "vault.txt")
	config := filepath.Join(root, "ws", "src", "config.go")
	read := func(path, text string) *session.Message {
		return &session.Message{Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{path}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: text, SourcePath: path}}}
	}
	must(t, st.Append(h.ID, read(vault, "the launch code is ZX-0001-ALPHA-7731\nshared line of both files 42\n")))
	pol := policytest.Policy(t, derivedTiers)
	const model = "limited/m"
	x := NewContexts()
	gathered := func(x *Contexts) *redact.Derived {
		t.Helper()
		d, err := x.fingerprints(st, pol, h.ID, model)
		must(t, err)
		return d
	}
	const shared = "shared line of both files 42"
	if d := gathered(x); !d.Sealed() {
		t.Fatal("a gathering that let its candidates go kept its texts")
	} else if _, ok := d.Holds(shared); !ok {
		t.Fatalf("fixture: %d fingerprints, not %q", d.Len(), shared)
	}
	// Grown: a readable file with one of the lines, a withheld one more.
	must(t, st.Append(h.ID, read(config, shared+"\n"), read(vault, "a second withheld line 0002\n")))
	stored, _, err := st.Range(h.ID, 1, 3)
	must(t, err)
	d := gathered(x)
	want, wantPaths := redact.PrepareDerived(stored, model, pol).Fingerprints()
	_, hasShared := d.Holds(shared)
	_, hasSecond := d.Holds("a second withheld line 0002")
	if !holdsAll(d, want, wantPaths) || hasShared || !hasSecond {
		t.Fatalf("grown: %d fingerprints, gathered afresh: %q", d.Len(), want)
	}
}

// TestReadAtRefusesARevisedSession: Settle trusts the messages it reads
// again to be those it gathered from; once an import has revised the
// session since the gathering began, the read fails rather than hand them
// over, and reads as before while the revision holds.
func TestReadAtRefusesARevisedSession(t *testing.T) {
	_, st, h := gatheringSession(t, "revised")
	must(t, st.Append(h.ID, &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "one"}}}))
	rev, err := st.Revision(h.ID)
	must(t, err)
	read := func() (int, error) {
		n := 0
		err := ReadAt(st, h.ID, rev)([]uint64{1}, func(msgs []session.Message) { n += len(msgs) })
		return n, err
	}
	if n, err := read(); err != nil || n != 1 {
		t.Fatalf("read at the gathering's revision: %d messages, %v", n, err)
	}
	b, err := st.BeginBulk()
	must(t, err)
	_, err = b.Continue(h.ID)
	must(t, err)
	b.Revise(h.ID, 1, func(m *session.Message) { m.Meta.Note = "revised" })
	must(t, b.Commit(nil))
	if _, err := read(); err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Fatalf("read after an import revised the session: %v", err)
	}
}

// TestKeptMatchesNameWhatTheyWereFoundWith: where a preview found the
// fingerprints is read back only for the gathering it was found with, over
// the same messages at the same revision, under the tier as it was; each
// of the four changed alone refuses it.
func TestKeptMatchesNameWhatTheyWereFoundWith(t *testing.T) {
	_, st, h := gatheringSession(t, "matches")
	pol := policytest.Policy(t, derivedTiers)
	const model = "limited/m"
	rev, err := st.Revision(h.ID)
	must(t, err)
	record := []byte("where the fingerprints are")
	must(t, SaveMatches(st, pol, h.ID, model, rev, 7, 0xfeed, func(b []byte, most int) []byte { return append(b, record...) }))
	got, ok, err := LoadMatches(st, pol, h.ID, model, rev, 7, 0xfeed)
	if err != nil || !ok || string(got) != string(record) {
		t.Fatalf("read back %q, %v, %v", got, ok, err)
	}
	other := policytest.Policy(t, strings.Replace(derivedTiers, `deny  = ["**/secrets/**"]`, `deny  = ["**/secrets/**", "**/never/**"]`, 1))
	edited, _ := other.TierFor(model)
	tier, _ := pol.TierFor(model)
	if other.Fingerprint(edited) == pol.Fingerprint(tier) {
		t.Fatal("fixture: the edited policy must change the tier's fingerprint")
	}
	for name, load := range map[string]func() (bool, error){
		"revision": func() (bool, error) {
			_, ok, err := LoadMatches(st, pol, h.ID, model, rev+1, 7, 0xfeed)
			return ok, err
		},
		"count":     func() (bool, error) { _, ok, err := LoadMatches(st, pol, h.ID, model, rev, 8, 0xfeed); return ok, err },
		"gathering": func() (bool, error) { _, ok, err := LoadMatches(st, pol, h.ID, model, rev, 7, 0xbeef); return ok, err },
		"policy": func() (bool, error) {
			_, ok, err := LoadMatches(st, other, h.ID, model, rev, 7, 0xfeed)
			return ok, err
		},
	} {
		if ok, err := load(); ok || err != nil {
			t.Errorf("another %s: taken %v (%v)", name, ok, err)
		}
	}
	// Nothing made, nothing kept: the record before stays.
	must(t, SaveMatches(st, pol, h.ID, model, rev, 7, 0xfeed, func([]byte, int) []byte { return nil }))
	if _, ok, _ := LoadMatches(st, pol, h.ID, model, rev, 7, 0xfeed); !ok {
		t.Fatal("a record that was not made replaced the kept one")
	}
}
