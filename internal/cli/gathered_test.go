package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

const gatheredPolicy = `
default_tier = "limited"

[tiers.limited]
label   = "limited"
read    = ["%[1]s/**"]
deny    = ["%[1]s/secrets/**"]
derived = "redact"
`

// TestKeptGatheringHoldsUntilSomethingChanges: scrim redact keeps the
// fingerprints it gathered beside the session, and the next preview takes
// them instead of reading the session twice more, while the session and
// the tier are what they were; a message appended or a policy changed makes
// it gather again. To see which gathering a preview used, the kept one is
// replaced by one that also fingerprints a readable line: while it is
// taken that line is withheld, once it no longer holds the line is sent.
func TestKeptGatheringHoldsUntilSomethingChanges(t *testing.T) {
	isolate(t)
	root, err := policy.Canonical(t.TempDir())
	must(t, err)
	const secretLine = "the launch code is ZX-99-ALPHA-7731 for the east silo"
	const readableLine = "func readableHelperThatEveryoneMayRead() error {"
	for name, text := range map[string]string{"secrets/vault.txt": secretLine, "src/help.go": readableLine} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, name), []byte(text+"\n"), 0o644))
	}
	polFile := filepath.Join(root, "policy.toml")
	must(t, os.WriteFile(polFile, []byte(fmt.Sprintf(gatheredPolicy, root)), 0o644))
	store := filepath.Join(root, "store")
	read := func(rel, text string) *session.Message { return readOf(filepath.Join(root, rel), text) }
	st, err := session.Open(store)
	must(t, err)
	h, err := st.Create(session.Header{Title: "kept gathering", WorkDir: root})
	must(t, err)
	must(t, st.Append(h.ID, read("secrets/vault.txt", secretLine), read("src/help.go", readableLine),
		say("The vault says "+secretLine+"; the helper is "+readableLine)))
	must(t, st.Close())

	preview := func() string {
		t.Helper()
		out, errOut, code := scrim(t, "", "--store", store, "--policy", polFile, "redact", h.ID, "--model", "vendor/m", "--format", "json")
		if code != 0 {
			t.Fatalf("scrim redact: %d %s", code, errOut)
		}
		if strings.Contains(out, "ZX-99-ALPHA") {
			t.Fatalf("the denied file's line is sent: %s", out)
		}
		return out
	}
	first := preview()
	if !strings.Contains(first, readableLine) {
		t.Fatal("fixture: the readable line must be sent")
	}

	// Replace the kept gathering by one that also has the readable line as
	// withheld content of the denied file, kept for the session as it is.
	st, err = session.Open(store)
	must(t, err)
	pol, err := policy.Load(polFile)
	must(t, err)
	tier, _ := pol.TierFor("vendor/m")
	if _, ok, err := st.CountRecord(h.ID, "gathered/"+tier.Name); err != nil || !ok {
		t.Fatalf("the first preview kept no gathering (%v)", err)
	}
	s := redact.NewStream("vendor/m", pol)
	s.Gather([]session.Message{{Seq: 1, Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{filepath.Join(root, "secrets/vault.txt")}},
		Parts: []session.Part{{Kind: session.PartToolResult, Text: secretLine + "\n" + readableLine + "\n", SourcePath: filepath.Join(root, "secrets/vault.txt")}}}})
	rev, err := st.Revision(h.ID)
	must(t, err)
	must(t, tally.SaveGathered(st, pol, h.ID, "vendor/m", rev, 3, s.Gathered))
	must(t, st.Close())

	if again := preview(); strings.Contains(again, readableLine) {
		t.Fatal("the second preview did not take the kept gathering: it gathered again")
	}

	// A message appended: the session is gathered again, and kept anew.
	st, err = session.Open(store)
	must(t, err)
	must(t, st.Append(h.ID, say("done")))
	must(t, st.Close())
	if out := preview(); !strings.Contains(out, readableLine) {
		t.Fatal("a gathering kept for 3 messages was taken for 4")
	}

	// The policy changed (a deny that changes no decision here): the tier's
	// fingerprint differs, so a gathering kept before is not taken.
	st, err = session.Open(store)
	must(t, err)
	rev, err = st.Revision(h.ID)
	must(t, err)
	must(t, tally.SaveGathered(st, pol, h.ID, "vendor/m", rev, 4, s.Gathered))
	must(t, st.Close())
	if out := preview(); strings.Contains(out, readableLine) {
		t.Fatal("fixture: the planted gathering is taken for the session as it is")
	}
	edited := strings.Replace(gatheredPolicy, `"%[1]s/secrets/**"]`, `"%[1]s/secrets/**", "%[1]s/never/**"]`, 1)
	must(t, os.WriteFile(polFile, []byte(fmt.Sprintf(edited, root)), 0o644))
	if out := preview(); !strings.Contains(out, readableLine) {
		t.Fatal("a gathering kept under another policy was taken")
	}
}

// TestKeptMatchesHoldUntilSomethingChanges: a preview that keeps its
// gathering keeps where it found the fingerprints too, and the next one
// gives the same output from them; a message appended, quoting the denied
// file again, is searched (the record, made for three messages, is not
// taken for four) and its quote replaced, and the record is made anew.
func TestKeptMatchesHoldUntilSomethingChanges(t *testing.T) {
	isolate(t)
	root, err := policy.Canonical(t.TempDir())
	must(t, err)
	const secretLine = "the launch code is ZX-99-ALPHA-7731 for the east silo"
	vault := filepath.Join(root, "secrets/vault.txt")
	must(t, os.MkdirAll(filepath.Dir(vault), 0o755))
	must(t, os.WriteFile(vault, []byte(secretLine+"\n"), 0o644))
	polFile := filepath.Join(root, "policy.toml")
	must(t, os.WriteFile(polFile, []byte(fmt.Sprintf(gatheredPolicy, root)), 0o644))
	store := filepath.Join(root, "store")
	st, err := session.Open(store)
	must(t, err)
	h, err := st.Create(session.Header{Title: "kept matches", WorkDir: root})
	must(t, err)
	must(t, st.Append(h.ID, readOf(vault, secretLine),
		say("The vault says "+secretLine), say("nothing else")))
	must(t, st.Close())

	preview := func() string {
		t.Helper()
		out, errOut, code := scrim(t, "", "--store", store, "--policy", polFile, "redact", h.ID, "--model", "vendor/m", "--format", "json")
		if code != 0 || strings.Contains(out, "ZX-99-ALPHA") {
			t.Fatalf("scrim redact: %d %s\n%s", code, errOut, out)
		}
		return out
	}
	kept := func() []byte {
		t.Helper()
		st, err := session.Open(store)
		must(t, err)
		defer st.Close()
		v, ok, err := st.CountRecord(h.ID, "matched/limited")
		if err != nil || !ok {
			t.Fatalf("no matches kept (%v)", err)
		}
		return v
	}
	first := preview()
	if strings.Count(first, "[Content from "+vault) != 2 {
		t.Fatalf("fixture: the read and the quote are replaced: %s", first)
	}
	record := kept()
	if again := preview(); again != first {
		t.Fatalf("with the kept matches the preview differs:\n%s\nwas\n%s", again, first)
	}
	if string(kept()) != string(record) {
		t.Fatal("a preview that took the kept matches made them again")
	}

	st, err = session.Open(store)
	must(t, err)
	must(t, st.Append(h.ID, say("Once more: "+secretLine)))
	must(t, st.Close())
	if out := preview(); strings.Count(out, "[Content from "+vault) != 3 {
		t.Fatalf("the appended quote was not searched for: %s", out)
	}
	if string(kept()) == string(record) {
		t.Fatal("the matches were not kept anew for four messages")
	}
}

// readOf is a tool result of text+"\n", read from path.
func readOf(path, text string) *session.Message {
	return &session.Message{Role: session.RoleTool, Meta: session.Meta{SourcePaths: []string{path}},
		Parts: []session.Part{{Kind: session.PartToolResult, Text: text + "\n", SourcePath: path}}}
}

// say is the assistant saying text.
func say(text string) *session.Message {
	return &session.Message{Role: session.RoleAssistant, Parts: []session.Part{{Kind: session.PartText, Text: text}}}
}
