package tally

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

const testPolicy = `
default_tier = "limited"
[tiers.limited]
label = "limited"
read = ["%[1]s/**"]
deny = ["**/secret*"]
deny_files = [%[2]s]
`

// fixture is a real store with one session whose tool results read an
// allowed file, a denied one, and one of unknown source.
type fixture struct {
	root string
	st   *session.Store
	sid  string
}

func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := session.Open(filepath.Join(root, "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := st.Create(session.Header{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{root: root, st: st, sid: h.ID}
	f.append(t, 1, n)
	return f
}

// append adds messages; every third reads a denied file, every fifth is of
// unknown source.
func (f *fixture) append(t *testing.T, from, n int) {
	t.Helper()
	var msgs []*session.Message
	for i := from; i < from+n; i++ {
		m := &session.Message{Role: session.RoleTool, Tool: "read", Parts: []session.Part{{Kind: session.PartText, Text: fmt.Sprintf("line %d", i)}}}
		switch {
		case i%3 == 0:
			p := filepath.Join(f.root, "ws", fmt.Sprintf("secret%d.txt", i%7))
			m.Meta.SourcePaths = []string{p}
		case i%5 == 0:
			m.Tool = "bash"
			m.Meta.UnknownSource = "runs a script"
		case i%5 == 1:
			m.Meta.SourcePaths = []string{filepath.Join(f.root, "ws", "open", "a.go")}
		default:
			m = &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "hello"}}}
		}
		msgs = append(msgs, m)
	}
	if err := f.st.Append(f.sid, msgs...); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) policy(t *testing.T, denyFiles string) *policy.Policy {
	t.Helper()
	text := fmt.Sprintf(testPolicy, filepath.Join(f.root, "ws"), denyFiles)
	p, err := policy.ParseEnv([]byte(text), filepath.Join(f.root, "policy.toml"), func(k string) (string, bool) {
		if k == "HOME" {
			return filepath.Join(f.root, "home"), true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// whole counts the session from scratch, one step at a time.
func whole(t *testing.T, f *fixture, p *policy.Policy) Counts {
	t.Helper()
	h, _ := f.st.Get(f.sid)
	var c Counts
	x := NewContexts()
	for from := uint64(1); from <= h.Count; from += 7 {
		s, err := Count(x, f.st, p, f.sid, "any/model", from, min(from+6, h.Count))
		if err != nil {
			t.Fatal(err)
		}
		c.Add(s)
	}
	return c
}

func TestCountAllEqualsSteps(t *testing.T) {
	f := newFixture(t, 3*Chunk+17)
	p := f.policy(t, "")
	var all Counts
	if err := CountAll(NewContexts(), f.st, p, f.sid, "any/model", &all, 3*Chunk+17); err != nil {
		t.Fatal(err)
	}
	want := whole(t, f, p)
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("on all cores %+v\none step at a time %+v", summary(all), summary(want))
	}
	if len(all.Redacted) == 0 || len(all.Unknowns) == 0 || len(all.Denied) != 7 {
		t.Fatalf("the fixture counts nothing: %+v", summary(all))
	}
}

// TestCountDecidesEachPathOnce: the steps of a count share their path
// decisions, one per distinct path of the session, however many steps see
// it; a session forgotten (rewritten by an import) is decided afresh.
func TestCountDecidesEachPathOnce(t *testing.T) {
	f := newFixture(t, 3*Chunk+17)
	p := f.policy(t, "")
	start := p.DecisionCount()
	c := whole(t, f, p) // 440 steps of 7 messages
	if n := p.DecisionCount() - start; n != 8 {
		t.Fatalf("%d decisions for the 8 distinct paths of %d steps", n, (c.Upto+6)/7)
	}
	x := NewContexts()
	for round := range 2 {
		start := p.DecisionCount()
		for from := uint64(1); from <= c.Upto; from += Chunk {
			if _, err := Count(x, f.st, p, f.sid, "any/model", from, min(from+Chunk-1, c.Upto)); err != nil {
				t.Fatal(err)
			}
		}
		if n, want := p.DecisionCount()-start, []uint64{8, 0}[round]; n != want {
			t.Fatalf("round %d: %d decisions, want %d", round, n, want)
		}
	}
	x.Forget(f.sid)
	start = p.DecisionCount()
	if _, err := Count(x, f.st, p, f.sid, "any/model", 1, Chunk); err != nil {
		t.Fatal(err)
	}
	if n := p.DecisionCount() - start; n != 8 {
		t.Fatalf("after Forget: %d decisions, want 8", n)
	}
}

func summary(c Counts) string {
	b, _ := json.Marshal(map[string]any{"upto": c.Upto, "redacted": len(c.Redacted), "unknowns": len(c.Unknowns), "denied": c.Denied, "sent": c.Sent, "unknown": c.Unknown})
	return string(b)
}

// TestKeptCountHoldsUntilSomethingChanges: a count kept in the store is read
// back while nothing it was computed from changed, and is not after a
// policy change, a revised message or a team file; new messages are
// counted on top of it.
func TestKeptCountHoldsUntilSomethingChanges(t *testing.T) {
	f := newFixture(t, 100)
	p := f.policy(t, "")
	c := whole(t, f, p)
	_, _, rev, err := Load(f.st, p, f.sid, "any/model")
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(f.st, p, f.sid, "any/model", rev, c); err != nil {
		t.Fatal(err)
	}
	k, ok, _, err := Load(f.st, p, f.sid, "any/model")
	if err != nil || !ok || !reflect.DeepEqual(k.Counts, c) {
		t.Fatalf("kept count not read back: ok=%v err=%v %+v", ok, err, summary(k.Counts))
	}

	// The same policy text loaded again: same fingerprint.
	if _, ok, _, _ := Load(f.st, f.policy(t, ""), f.sid, "any/model"); !ok {
		t.Fatal("a reloaded, unchanged policy does not take the kept count")
	}
	// A policy change: another deny pattern.
	changed, err := policy.Parse([]byte(fmt.Sprintf("default_tier = \"limited\"\n[tiers.limited]\nlabel = \"limited\"\nread = [%q]\ndeny = [\"**/secret*\", \"**/a.go\"]\n", filepath.Join(f.root, "ws", "**"))), filepath.Join(f.root, "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _, _ := Load(f.st, changed, f.sid, "any/model"); ok {
		t.Fatal("a changed policy takes the kept count")
	}

	// New messages: the kept count still holds, for its 100 messages.
	f.append(t, 101, 50)
	k, ok, rev2, _ := Load(f.st, p, f.sid, "any/model")
	if !ok || k.Upto != 100 || rev2 != rev {
		t.Fatalf("after appending: ok=%v upto=%d rev %d->%d", ok, k.Upto, rev, rev2)
	}
	more := k.Counts
	if err := CountAll(NewContexts(), f.st, p, f.sid, "any/model", &more, 150); err != nil {
		t.Fatal(err)
	}
	if want := whole(t, f, p); !reflect.DeepEqual(more, want) {
		t.Fatalf("counted on top %+v, from scratch %+v", summary(more), summary(want))
	}

	// A revised message (an import pairing a late result): the revision moves.
	b, err := f.st.BeginBulk()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Continue(f.sid); err != nil {
		t.Fatal(err)
	}
	b.Revise(f.sid, 3, func(m *session.Message) { m.Meta.SourcePaths = nil; m.Meta.NoFiles = true })
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, rev3, _ := Load(f.st, p, f.sid, "any/model"); ok || rev3 == rev {
		t.Fatalf("a revised message: kept count taken=%v, revision %d -> %d", ok, rev, rev3)
	}
}

func TestKeptCountWithTeamFiles(t *testing.T) {
	f := newFixture(t, 60)
	for _, d := range []string{"ws/.git", "ws/open"} {
		if err := os.MkdirAll(filepath.Join(f.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := f.policy(t, `".cursorignore"`)
	c := whole(t, f, p)
	_, _, rev, _ := Load(f.st, p, f.sid, "any/model")
	if err := Save(f.st, p, f.sid, "any/model", rev, c); err != nil {
		t.Fatal(err)
	}
	if _, ok, _, _ := Load(f.st, f.policy(t, `".cursorignore"`), f.sid, "any/model"); !ok {
		t.Fatal("nothing changed, yet the kept count is not taken")
	}
	// A .cursorignore appears where the decisions looked: the count is
	// done again, and now the allowed file is denied too.
	if err := os.WriteFile(filepath.Join(f.root, "ws", ".cursorignore"), []byte("open/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := f.policy(t, `".cursorignore"`)
	if _, ok, _, _ := Load(f.st, fresh, f.sid, "any/model"); ok {
		t.Fatal("a new team file, yet the kept count is taken")
	}
	if now := whole(t, f, fresh); len(now.Denied) != len(c.Denied)+1 {
		t.Fatalf("denied %v, want the kept %v and a.go", now.Denied, c.Denied)
	}
}

// TestCountScansOnlyWhatIsSent: a count looks for credentials only in what
// the tier sends: a denied file's read, withheld whole, is neither scanned
// nor kept as scanned; a tier that reads it scans it, and finds its
// credential too.
func TestCountScansOnlyWhatIsSent(t *testing.T) {
	f := newFixture(t, 0)
	denied := filepath.Join(f.root, "ws", "secret.env")
	open := filepath.Join(f.root, "ws", "open", "a.go")
	pat := func(c byte) string { return "ghp_" + strings.Repeat(string(c), 20) + "0123456789abcdef" }
	msgs := []*session.Message{
		{Role: session.RoleTool, Tool: "read", Meta: session.Meta{SourcePaths: []string{denied}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: "GITHUB_TOKEN=" + pat('a') + "\n"}}},
		{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "use export GITHUB_TOKEN=" + pat('b')}}},
		{Role: session.RoleTool, Tool: "read", Meta: session.Meta{SourcePaths: []string{open}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: "package open\n"}}},
	}
	if err := f.st.Append(f.sid, msgs...); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(testPolicy, filepath.Join(f.root, "ws"), "") + "secrets = \"redact\"\n" +
		fmt.Sprintf("[tiers.all]\nlabel = \"all\"\nread = [%q]\nsecrets = \"redact\"\n[[models]]\nmatch = \"all/*\"\ntier = \"all\"\n", filepath.Join(f.root, "ws")+"/**")
	p, err := policy.Parse([]byte(text), filepath.Join(f.root, "policy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	kept := func() []uint64 {
		var seqs []uint64
		f.st.ScanRecords(f.sid, 1, 1<<30, func(seq uint64, _ []byte) error { seqs = append(seqs, seq); return nil })
		return seqs
	}
	var c Counts
	if err := CountAll(NewContexts(), f.st, p, f.sid, "any/model", &c, 3); err != nil {
		t.Fatal(err)
	}
	if c.Secrets != 1 || !reflect.DeepEqual(c.Redacted, []uint64{1, 2}) {
		t.Fatalf("limited: %d credentials, redacted %v", c.Secrets, c.Redacted)
	}
	if got := kept(); !reflect.DeepEqual(got, []uint64{2, 3}) {
		t.Fatalf("scanned and kept %v, want the messages sent (2, 3)", got)
	}
	var all Counts
	if err := CountAll(NewContexts(), f.st, p, f.sid, "all/model", &all, 3); err != nil {
		t.Fatal(err)
	}
	if all.Secrets != 2 || !reflect.DeepEqual(kept(), []uint64{1, 2, 3}) {
		t.Fatalf("all: %d credentials, kept %v", all.Secrets, kept())
	}
}
