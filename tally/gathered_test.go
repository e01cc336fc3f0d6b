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
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	st, err := session.Open(filepath.Join(root, "store"))
	must(t, err)
	defer st.Close()
	h, err := st.Create(session.Header{Title: "kept"})
	must(t, err)
	secret := filepath.Join(root, "ws", "secrets", "vault.txt")
	read := func(i int) *session.Message {
		return &session.Message{Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{secret}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: fmt.Sprintf("the launch code of silo %d is ZX-%04d-ALPHA-7731\n", i, i), SourcePath: secret}}}
	}
	must(t, st.Append(h.ID, read(1), read(2)))
	pol := policytest.Policy(t, derivedTiers)
	const model = "limited/m"

	gathered := func(x *Contexts) []string {
		t.Helper()
		d, err := x.fingerprints(st, pol, h.ID, model)
		must(t, err)
		texts, _ := d.Fingerprints()
		slices.Sort(texts)
		return texts
	}
	first := gathered(NewContexts())
	if len(first) == 0 {
		t.Fatal("fixture: nothing gathered")
	}
	if _, ok, err := st.CountRecord(h.ID, "gathered/limited"); err != nil || !ok {
		t.Fatalf("the gathering was not kept (%v)", err)
	}
	if again := gathered(NewContexts()); !reflect.DeepEqual(again, first) {
		t.Fatalf("read back %q, gathered %q", again, first)
	}

	// Plant a gathering with one more fingerprint: a new program takes it.
	s := redact.NewStream(model, pol)
	s.Gather([]session.Message{{Seq: 1, Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{secret}},
		Parts: []session.Part{{Kind: session.PartToolResult, Text: "the planted line that no message holds 12345\n", SourcePath: secret}}}})
	rev, err := st.Revision(h.ID)
	must(t, err)
	must(t, SaveGathered(st, pol, h.ID, model, rev, 2, s.Gathered()))
	x := NewContexts()
	if got := gathered(x); !slices.Contains(got, "the planted line that no message holds 12345") {
		t.Fatalf("a new program did not take the kept gathering: %q", got)
	}

	// One message more, in the same program: the kept gathering no longer
	// holds, the session is gathered from its start, and that is kept.
	must(t, st.Append(h.ID, read(3)))
	got := gathered(x)
	if slices.Contains(got, "the planted line that no message holds 12345") || len(got) <= len(first) {
		t.Fatalf("after an append: %q", got)
	}
	if again := gathered(NewContexts()); !reflect.DeepEqual(again, got) {
		t.Fatalf("the gathering after the append was not kept: %q, want %q", again, got)
	}
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
