package redact

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tools"
)

const spanPolicy = `
default_tier = "limited"

[tiers.all]
label = "all"
read  = ["/**"]
tools = ["read", "grep", "glob", "bash"]

[tiers.limited]
label   = "limited"
read    = ["/**"]
deny    = ["**/.env", "**/secrets/**"]
derived = "redact"
secrets = "redact"

[tiers.paths]
label = "paths only"
read  = ["/**"]
deny  = ["**/.env", "**/secrets/**"]

[[models]]
match = "trusted/*"
tier  = "all"

[[models]]
match = "paths/*"
tier  = "paths"
`

// The .env of the issue, and an allowed file that shares common lines and a
// licence header with a denied one.
const (
	dotEnv = "# local settings\nAPI_TOKEN=tok-SECRET-12345\nDATABASE_URL=postgres://app:hunter2pass@db.internal:5432/app\nDEBUG=true\n"
	header = "// Copyright 2026 The Example Authors. All rights reserved.\n"
	denied = header + "package vault\n\nimport (\n\t\"fmt\"\n)\n\nfunc openVault(masterKeyMaterial string) error {\n\treturn nil\n}\n"
	public = header + "package main\n\nimport (\n\t\"fmt\"\n)\n\nfunc main() {\n\tfmt.Println(\"hello\")\n\treturn nil\n}\n"
)

// spanFixture is a work tree and a history the real tools made for the
// trusted model: a denied .env read, then the assistant quoting it, an
// Edit whose old_string repeats two of its lines, and `env` printing
// credentials.
type spanFixture struct {
	root, env string
	pol       *policy.Policy
	msgs      []session.Message
}

func newSpanFixture(t *testing.T) spanFixture {
	t.Helper()
	root, err := policy.Canonical(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		".env":              dotEnv,
		"secrets/vault.go":  denied,
		"cmd/main.go":       public,
		"docs/keys-demo.md": "AWS's documentation uses AKIAIOSFODNN7EXAMPLE as its example key.\n",
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol := policytest.Policy(t, spanPolicy)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAQYLPMN5HHHFPZAM2")
	t.Setenv("GITHUB_TOKEN", "ghp_R9bX2kQm7LpZ4vT8nW1cY6dF3hJ5sA0eG2uI")
	env := tools.Env{Policy: pol, Model: "trusted/a", WorkDir: root}
	run := func(name string, in any) session.Message {
		raw, _ := json.Marshal(in)
		res := tools.Run(context.Background(), env, name, raw)
		if res.Message.IsError {
			t.Fatalf("%s: %s", name, res.Message.Text())
		}
		return res.Message
	}
	text := func(role session.Role, s string) session.Message {
		return session.Message{Role: role, Model: "trusted/a", Parts: []session.Part{{Kind: session.PartText, Text: s}}}
	}
	edit, _ := json.Marshal(map[string]string{
		"file_path":  filepath.Join(root, "config", "settings.py"),
		"old_string": "API_TOKEN=tok-SECRET-12345\nDATABASE_URL=postgres://app:hunter2pass@db.internal:5432/app",
		"new_string": "API_TOKEN = os.environ[\"API_TOKEN\"]",
	})
	msgs := []session.Message{
		text(session.RoleUser, "why does the app not connect?"),
		run("read", map[string]any{"path": ".env"}),
		text(session.RoleAssistant, "The token is tok-SECRET-12345. The database is at postgres://app:hunter2pass@db.internal:5432/app."),
		{Role: session.RoleAssistant, Model: "trusted/a", Parts: []session.Part{{Kind: session.PartToolCall, CallID: "e1", Name: "Edit", Input: edit}}},
		run("bash", map[string]any{"command": "env | sort"}),
		run("read", map[string]any{"path": "secrets/vault.go"}),
		run("read", map[string]any{"path": "cmd/main.go"}),
		run("read", map[string]any{"path": "docs/keys-demo.md"}),
		text(session.RoleAssistant, "openVault takes masterKeyMaterial; the id 550e8400-e29b-41d4-a716-446655440000 and the digest e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 are not secrets."),
		text(session.RoleAssistant, "So the DB password is hunter2pass; rotate it."),
	}
	for i := range msgs {
		msgs[i].Seq = uint64(i + 1)
	}
	return spanFixture{root: root, env: filepath.Join(root, ".env"), pol: pol, msgs: msgs}
}

func sentText(msgs []session.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, p := range m.Parts {
			b.WriteString(p.Text)
			b.Write(p.Input)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func TestDerivedAndSecretsOnRealToolResults(t *testing.T) {
	f := newSpanFixture(t)
	before := deepCopy(f.msgs)
	out, rep := History(f.msgs, "limited/b", f.pol)
	ph := Placeholder(f.env, "limited")
	all := sentText(out)

	t.Run("the assistant's quote", func(t *testing.T) {
		got := out[2].Parts[0].Text
		if strings.Contains(got, "tok-SECRET-12345") || strings.Contains(got, "hunter2pass") {
			t.Fatalf("the quote of .env is sent: %q", got)
		}
		want := "The token is " + ph + ". The database is at " + ph + "."
		if got != want {
			t.Fatalf("got  %q\nwant %q", got, want)
		}
		fs := out[2].Parts[0].Filtered
		if len(fs) != 2 || fs[0].Kind != "derived" || fs[0].Path != f.env || got[fs[0].Start:fs[0].End] != ph ||
			f.msgs[2].Parts[0].Text[fs[0].StoredStart:fs[0].StoredEnd] != "tok-SECRET-12345" {
			t.Fatalf("notes %+v", fs)
		}
	})
	t.Run("the edit's old_string, as valid JSON", func(t *testing.T) {
		in := out[3].Parts[0].Input
		if !json.Valid(in) {
			t.Fatalf("invalid JSON after redaction: %s", in)
		}
		var v map[string]string
		json.Unmarshal(in, &v)
		if v["old_string"] != ph {
			t.Fatalf("old_string %q, want the .env placeholder (two lines, one placeholder)", v["old_string"])
		}
		if !strings.HasSuffix(v["file_path"], "settings.py") || !strings.Contains(v["new_string"], "os.environ") {
			t.Fatalf("the rest of the input changed: %v", v)
		}
	})
	t.Run("env's credentials", func(t *testing.T) {
		got := out[4].Text()
		for _, s := range []string{"AKIAQYLPMN5HHHFPZAM2", "ghp_R9bX2kQm7LpZ4vT8nW1cY6dF3hJ5sA0eG2uI"} {
			if strings.Contains(got, s) {
				t.Fatalf("credential %s sent: %q", s, got)
			}
		}
		for _, rule := range []string{"aws-access-token", "github-pat"} {
			if !strings.Contains(got, secrets.Placeholder(rule, "limited")) {
				t.Fatalf("no %s placeholder in %q", rule, got)
			}
		}
		if !strings.Contains(got, "PATH=") {
			t.Fatalf("env's other lines should stay: %q", got)
		}
	})
	t.Run("shared lines stay in the allowed file", func(t *testing.T) {
		if got, want := out[6].Text(), f.msgs[6].Text(); got != want {
			t.Fatalf("the allowed file changed:\n got %q\nwant %q", got, want)
		}
		if !strings.Contains(out[5].Text(), "filtered") {
			t.Fatalf("the denied file is sent: %q", out[5].Text())
		}
		got := out[8].Parts[0].Text
		// masterKeyMaterial, an identifier of the denied file, goes;
		// openVault is too short to count as one.
		if strings.Contains(got, "masterKeyMaterial") || !strings.Contains(got, "openVault") {
			t.Fatalf("the denied file's identifier: %q", got)
		}
		for _, s := range []string{"550e8400-e29b-41d4-a716-446655440000", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"} {
			if !strings.Contains(got, s) {
				t.Fatalf("%s is no secret, but was filtered: %q", s, got)
			}
		}
		if !strings.Contains(out[7].Text(), "AKIAIOSFODNN7EXAMPLE") {
			t.Fatalf("the documentation key was filtered: %q", out[7].Text())
		}
	})
	t.Run("a URL's password quoted alone", func(t *testing.T) {
		if got, want := out[9].Parts[0].Text, "So the DB password is "+ph+"; rotate it."; got != want {
			t.Fatalf("got  %q\nwant %q", got, want)
		}
	})
	t.Run("report", func(t *testing.T) {
		vault := filepath.Join(f.root, "secrets", "vault.go")
		from := []PathCount{{f.env, 4}, {vault, 1}} // the quote's two, the edit's one, the password; the identifier
		rules := []RuleCount{{"aws-access-token", 1}, {"github-pat", 1}}
		if rep.Derived != 5 || !reflect.DeepEqual(rep.DerivedFrom, from) || rep.Secrets != 2 || !reflect.DeepEqual(rep.SecretRules, rules) {
			t.Fatalf("report %+v", rep)
		}
		if rep.RedactedMessages < 6 {
			t.Fatalf("%d messages redacted, want the quote, the edit, env, the two denied reads and the identifier", rep.RedactedMessages)
		}
	})
	t.Run("the stored history is unchanged and output is deterministic", func(t *testing.T) {
		if !reflect.DeepEqual(f.msgs, before) {
			t.Fatal("History changed its input")
		}
		again, rep2 := History(f.msgs, "limited/b", f.pol)
		if !reflect.DeepEqual(again, out) || !reflect.DeepEqual(rep2, rep) {
			t.Fatal("a second call gives different output")
		}
	})
	t.Run("the trusted tier gets everything; switching back restores it", func(t *testing.T) {
		whole, rep := History(f.msgs, "trusted/a", f.pol)
		if rep.Derived+rep.Secrets+rep.RedactedParts != 0 {
			t.Fatalf("trusted report %+v", rep)
		}
		for i := range whole {
			if whole[i].Text() != f.msgs[i].Text() || string(whole[i].Parts[0].Input) != string(f.msgs[i].Parts[0].Input) {
				t.Fatalf("message %d: %q, want %q", i, whole[i].Text(), f.msgs[i].Text())
			}
		}
	})
	t.Run("a tier without the keys redacts paths only", func(t *testing.T) {
		paths, rep := History(f.msgs, "paths/x", f.pol)
		if rep.Derived+rep.Secrets != 0 || !strings.Contains(sentText(paths), "tok-SECRET-12345") {
			t.Fatalf("paths-only tier: %+v", rep)
		}
	})
	if strings.Contains(all, "tok-SECRET-12345") {
		t.Fatal("the token reaches the limited tier somewhere")
	}
}

// TestMatchManyBehindOneAnchor: generated content puts many fingerprints
// behind one anchor (a thousand alike lines, each barely longer than the
// windows filed for it, so that most of those windows are the ones they all
// share); each is still found exactly where it is, as a plain search finds
// it.
func TestMatchManyBehindOneAnchor(t *testing.T) {
	// As long as the windows of the longest class span: each fingerprint
	// has one byte of its own, and then one window.
	middle := "shared-middle-part-of-the-value:0123456789abcdef"[:windowClasses[0].w+windowClasses[0].k-1]
	var fps []string
	for i := range 40 {
		text := middle + string(rune('A'+i))
		if i%4 == 0 {
			text = "<" + text // another length and place of the windows
		}
		fps = append(fps, text)
	}
	d := derivedOfTexts(fps, "x")
	if c := windowClasses[0]; len(middle) != c.w+c.k-1 {
		t.Fatalf("the middle is %d bytes, not the %d the windows of a fingerprint span", len(middle), c.w+c.k-1)
	}
	behind := map[uint64]int{}
	most := 0
	d.win.ready(&d.fpSet)
	for _, e := range d.win.filed(0) {
		behind[e.tag]++
		most = max(most, behind[e.tag])
	}
	if most < len(fps)*3/4 {
		t.Fatalf("at most %d of the %d fingerprints are filed under one hash", most, len(fps))
	}
	unique := fps
	hay := "noise " + unique[3] + " and " + unique[17] + "\n" + unique[3][1:] + " " + unique[len(unique)-1]
	got := map[[2]int]bool{}
	for _, sp := range d.match(hay, nil) {
		got[[2]int{sp.start, sp.end}] = true
	}
	want := map[[2]int]bool{}
	for _, f := range unique {
		for at := 0; ; {
			i := strings.Index(hay[at:], f)
			if i < 0 {
				break
			}
			want[[2]int{at + i, at + i + len(f)}] = true
			at += i + 1
		}
	}
	if !reflect.DeepEqual(got, want) || len(want) < 3 {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestCandidatesSharingAHash: candidates are found by a hash of their
// text, and texts whose hashes collide are told apart by their bytes, or,
// their texts spilled, by their lengths and a second hash: each is found
// as itself, marked on its own, and a text that is not a candidate is not
// taken for one; spilled, each reads back as itself.
func TestCandidatesSharingAHash(t *testing.T) {
	for _, spill := range []bool{false, true} {
		t.Run(fmt.Sprint("spilled=", spill), func(t *testing.T) { candidatesSharingAHash(t, spill) })
	}
}

func candidatesSharingAHash(t *testing.T, spill bool) {
	var c candidates
	if spill {
		c.spill = newSpilled(t.TempDir())
	}
	const h = 42              // one hash for all: every lookup meets a collision
	early := c.meet("/q", -1) // a withheld text met before the others, added last
	texts := []string{"first-withheld-line", "second-withheld-line", "third-withheld-one", "third-withheld-two"}
	met := make([]uint32, len(texts))
	for i, s := range texts {
		if met[i] = c.meet("/p", int64(i)); !c.put(s, h, met[i]) {
			t.Fatalf("%q was not new", s)
		}
	}
	if c.put(texts[1], h, c.meet("/q", 9)) {
		t.Fatalf("%q again was new", texts[1])
	}
	for i, s := range texts {
		if k := c.find(s, h); k != int32(i) || c.list.at(k).met != met[i] || c.paths[c.pathOf(c.list.at(k))] != "/p" {
			t.Fatalf("find(%q) = %d", s, k)
		}
	}
	for _, s := range []string{"first-withheld-lin", "fourth-withheld-line", ""} {
		if k := c.find(s, h); k >= 0 {
			t.Fatalf("find(%q) = %d", s, k)
		}
	}
	if k := c.find(texts[0], h+1); k >= 0 {
		t.Fatalf("found under another hash: %d", k)
	}
	// The earliest meeting names the path.
	if c.put(texts[2], h, early); c.paths[c.pathOf(c.list.at(c.find(texts[2], h)))] != "/q" {
		t.Fatal("an earlier meeting did not move the path")
	}
	if !spill {
		return
	}
	if len(c.text.chunks) != 0 {
		t.Fatal("spilled candidates' texts are held in memory too")
	}
	c.also = []uint64{1 << 1} // the second is in readable content too: not read back
	if err := c.unspill(); err != nil {
		t.Fatal(err)
	}
	if c.list.at(1).text != (ref{lo: h}) {
		t.Fatal("a candidate in readable content was read back")
	}
	for i, s := range texts {
		if i != 1 && c.textOf(int32(i)) != s {
			t.Fatalf("candidate %d reads back as %q, not %q", i, c.textOf(int32(i)), s)
		}
	}
	if c.spill != nil || c.text.size() > 4<<10 {
		t.Fatalf("after reading back, the spill is %v and the texts take %d bytes", c.spill, c.text.size())
	}
}

// size is how many bytes the arena's chunks hold.
func (a *arena) size() int {
	n := 0
	for _, c := range a.chunks {
		n += len(c)
	}
	return n
}

// TestArenaPlaces: every text added to an arena reads back from its place
// however many chunks it took, a text longer than a chunk included, and
// what was read before more was added stays as it was; past its first
// chunks, an arena grows by whole chunks.
func TestArenaPlaces(t *testing.T) {
	var a arena
	var texts []string
	var at []ref
	for i := 0; a.size() < 70*arenaChunk; i++ {
		s := strings.Repeat(string(rune('a'+i%26)), 1+i%3000)
		switch {
		case i == 7000:
			s = strings.Repeat("huge-", refLong/5+1) // longer than a ref's length can say
		case i%5000 == 0:
			s = strings.Repeat("long-", arenaChunk/4) // longer than a chunk
		}
		texts, at = append(texts, s), append(at, a.add(s))
	}
	first := a.string(at[0])
	for i, s := range texts {
		if got := a.string(at[i]); got != s {
			t.Fatalf("text %d (%d bytes) reads back as %d bytes", i, len(s), len(got))
		}
		if string(a.bytes(at[i])) != s || a.length(at[i]) != len(s) {
			t.Fatalf("text %d's bytes differ", i)
		}
	}
	if first != texts[0] {
		t.Fatal("a text read before the arena grew changed")
	}
	for k, c := range a.chunks[arenaDoublings:] {
		if len(c) < arenaChunk {
			t.Fatalf("chunk %d holds %d bytes, less than %d", k+arenaDoublings, len(c), arenaChunk)
		}
	}
	if len(a.chunks[arenaDoublings-1]) != arenaChunk/2 {
		t.Fatalf("the last doubled chunk holds %d bytes, not half of %d", len(a.chunks[arenaDoublings-1]), arenaChunk)
	}
}

// TestCandidatesPastAChunk: candidates past the first chunks of their list
// are found, each with its own text and order.
func TestCandidatesPastAChunk(t *testing.T) {
	var c candidates
	const n = 3<<candidateShift + 123
	for i := range n {
		s := fmt.Sprintf("withheld-line-%07d", i)
		if !c.put(s, c.hash(s), c.meet("/p", int64(i))) {
			t.Fatalf("%q was not new", s)
		}
	}
	for i := range n {
		s := fmt.Sprintf("withheld-line-%07d", i)
		if k := c.find(s, c.hash(s)); k < 0 || c.textOf(k) != s || c.orderOf(c.list.at(k)) != int64(i) {
			t.Fatalf("find(%q) = %d", s, k)
		}
	}
	if c.list.n != n || len(c.list.chunks) != 4 {
		t.Fatalf("%d candidates in %d chunks", c.list.n, len(c.list.chunks))
	}
}

// TestLongWordsWithheld: a withheld file may hold words far longer than a
// line is taken whole (a base64 blob, a minified bundle's identifier, one
// past the index's 16-bit lengths too). Each is a fingerprint: found where
// it is repeated, not taken when content the tier may read has it too, and
// gathering them does not fail.
func TestLongWordsWithheld(t *testing.T) {
	pol := policytest.Policy(t, spanPolicy)
	word := func(seed string, n int) string {
		return strings.Repeat(seed, n/len(seed)+1)[:n]
	}
	blob := word("aB3xQ9zK7mW2pL5v", 6000)   // past maxFingerprint
	huge := word("Zr8tY1uI4oP6aS0d", 70000)  // past an entry's length
	shared := word("Qw2Er4Ty6Ui8Op0A", 5000) // in an allowed file too
	read := func(seq uint64, path, text string) session.Message {
		m := session.Message{Seq: seq, Role: session.RoleTool, Tool: "read", Parts: []session.Part{{Kind: session.PartText, Text: text}}}
		m.Meta.SourcePaths = []string{path}
		return m
	}
	msgs := []session.Message{
		read(1, "/w/secrets/bundle.txt", "data: "+blob+"\nkey "+huge+"\nalso "+shared+"\n"),
		read(2, "/w/public.txt", "from the docs: "+shared+"\n"),
		{Seq: 3, Role: session.RoleAssistant, Parts: []session.Part{{Kind: session.PartText, Text: "It holds " + blob + " and " + huge + " and " + shared + "."}}},
	}
	hist, rep := History(msgs, "x/y", pol)
	sent := hist[2].Parts[0].Text
	if strings.Contains(sent, blob) || strings.Contains(sent, huge) {
		t.Fatalf("a withheld long word is sent: %d bytes", len(sent))
	}
	if !strings.Contains(sent, shared) {
		t.Fatal("a word an allowed file has too was withheld")
	}
	if rep.Derived != 2 {
		t.Fatalf("%d derived spans, want 2", rep.Derived)
	}
}

// TestSortCandidates: candidates sorted run by run of one meeting, as they
// come, or as a whole, when they come out of order, are in the order one
// sort by meeting and text gives.
func TestSortCandidates(t *testing.T) {
	pol := policytest.Policy(t, spanPolicy)
	b := NewDerivedBuilder("limited/x", pol)
	var msgs []session.Message
	for i := range 300 {
		var text strings.Builder
		for l := range 1 + i%13 {
			fmt.Fprintf(&text, "line %d of file %d: value_%d = %d\n", (l*7919+i)%97, i, l, i*l)
		}
		p := fmt.Sprintf("/w/secrets/f%d.txt", i%40)
		msgs = append(msgs, session.Message{Seq: uint64(i + 1), Role: session.RoleTool, Tool: "read",
			Parts: []session.Part{{Kind: session.PartText, Text: text.String(), SourcePath: p}}, Meta: session.Meta{SourcePaths: []string{p}}})
	}
	b.Add(msgs)
	c := &b.cands
	if c.list.n < 1000 {
		t.Fatalf("only %d candidates", c.list.n)
	}
	all := make([]int32, c.list.n)
	for i := range all {
		all[i] = int32(i)
	}
	want := slices.Clone(all)
	slices.SortFunc(want, func(a, b int32) int {
		return cmp.Or(cmp.Compare(c.orderOf(c.list.at(a)), c.orderOf(c.list.at(b))), strings.Compare(c.textOf(a), c.textOf(b)))
	})
	if slices.Equal(want, all) {
		t.Fatal("the candidates are sorted as listed: the test tries nothing")
	}
	reversed := slices.Clone(all)
	slices.Reverse(reversed)
	// On one core, and on every core in ranges that mostly start and end
	// inside a text's run (as many ranges as there are cores, sixteen).
	defer func(n int) { fpRangeMin = n }(fpRangeMin)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	for _, fpRangeMin = range []int{len(all), 7} {
		for name, keep := range map[string][]int32{"as listed": slices.Clone(all), "reversed": reversed} {
			sortCandidates(c, keep)
			if !slices.Equal(keep, want) {
				t.Errorf("%s, ranges of %d: sorted differently", name, fpRangeMin)
			}
		}
	}
}

// hash is the hash candidates file s under, the slots made if none are.
func (c *candidates) hash(s string) uint64 {
	c.init()
	return maphash.String(c.seed, s)
}

// TestExpectSizesTheTableOnce: told the Seqs to come, a gathering makes its
// candidates' table to their measure a sixteenth of the way through them
// and does not double it after, without changing what it gathers; told of
// a few more messages on top of many candidates, it sizes the table for
// those few, not for the rate of all the candidates before them.
func TestExpectSizesTheTableOnce(t *testing.T) {
	pol := policytest.Policy(t, spanPolicy)
	const n = 3200
	readsOf := func(lines func(i int) int) []session.Message {
		msgs := make([]session.Message, n)
		for i := range msgs {
			path := fmt.Sprintf("/work/src/pkg/f%d.go", i)
			if i%2 == 0 {
				path = fmt.Sprintf("/work/secrets/f%d.go", i)
			}
			var text strings.Builder
			for l := range lines(i) {
				fmt.Fprintf(&text, "const secretValue%d_%d = %d // line of its own\n", i, l, i*l)
			}
			msgs[i] = session.Message{Seq: uint64(i + 1), Role: session.RoleTool, Tool: "read", Meta: session.Meta{SourcePaths: []string{path}},
				Parts: []session.Part{{Kind: session.PartToolResult, Text: text.String(), SourcePath: path}}}
		}
		return msgs
	}
	msgs := readsOf(func(int) int { return 12 })
	gather := func(expect bool) (*DerivedBuilder, []int) {
		b := NewDerivedBuilder("x/y", pol)
		if expect {
			b.Expect(1, n)
		}
		var sizes []int
		for at := 0; at < n; at += 50 {
			b.Add(msgs[at : at+50])
			sizes = append(sizes, len(b.cands.slots))
		}
		return b, sizes
	}
	told, sizes := gather(true)
	sixteenth := n/16/50 - 1 // the piece that reaches it
	for i, s := range sizes[sixteenth+1:] {
		if s != sizes[sixteenth] {
			t.Fatalf("the table went from %d to %d slots at piece %d, after it was sized", sizes[sixteenth], s, sixteenth+1+i)
		}
	}
	if c := told.cands.list.n; 4*c > 3*sizes[sixteenth] || sizes[sixteenth] > 4*c {
		t.Fatalf("%d candidates in a table of %d slots", c, sizes[sixteenth])
	}
	untold, doubled := gather(false)
	if doubled[sixteenth] >= sizes[sixteenth] {
		t.Fatalf("without Expect the table is %d slots at a sixteenth, with it %d", doubled[sixteenth], sizes[sixteenth])
	}
	a, _ := told.Done().Fingerprints()
	b, _ := untold.Done().Fingerprints()
	if !slices.Equal(a, b) {
		t.Fatalf("gathered %d fingerprints told, %d untold", len(a), len(b))
	}

	// Fewer candidates a message in the first sixteenth than after it:
	// sized again an eighth of the way, the table does not double after.
	msgs = readsOf(func(i int) int { return min(12, 4+i/25) })
	_, sizes = gather(true)
	for i, s := range sizes[n/8/50:] {
		if s != sizes[n/8/50-1] {
			t.Fatalf("the table went from %d to %d slots at piece %d, after an eighth of the way", sizes[n/8/50-1], s, n/8/50+i)
		}
	}
	msgs = readsOf(func(int) int { return 12 })

	// A few more messages, whose sixteenth comes at their first piece.
	grown, before := gather(false)
	had := len(grown.cands.slots)
	more := make([]session.Message, 32)
	for i := range more {
		more[i] = msgs[i]
		more[i].Seq = uint64(n + 1 + i)
	}
	grown.Expect(n+1, n+32)
	grown.Add(more[:2])
	if got := len(grown.cands.slots); got != had {
		t.Fatalf("2 messages more (nothing new in them) took the table from %d to %d slots (%v)", had, got, before[len(before)-1])
	}
}

// TestCheckQueuesEveryPiece: readable content is looked up among the
// candidates a queue of pieces at a time (pieceQueue); every piece of a
// long readable text counts, the last queue's too, in a piece of the
// session before the withheld one and after it.
func TestCheckQueuesEveryPiece(t *testing.T) {
	pol := policytest.Policy(t, spanPolicy)
	var shared, own strings.Builder
	for l := range 3*len(pieceQueue{}.s) + 5 {
		fmt.Fprintf(&shared, "func sharedHelperNumber%d(input string) error { return nil }\n", l)
	}
	for l := range 3 {
		fmt.Fprintf(&own, "const vaultMasterKey%d = \"zq81-kf02-a7c3-%04d\"\n", l, l)
	}
	read := func(seq uint64, path, text string) session.Message {
		return session.Message{Seq: seq, Role: session.RoleTool, Tool: "read", Meta: session.Meta{SourcePaths: []string{path}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: text, SourcePath: path}}}
	}
	msgs := []session.Message{
		read(1, "/work/secrets/vault.go", shared.String()+own.String()),
		read(2, "/work/src/helper.go", shared.String()),
	}
	for _, pieces := range [][][]session.Message{{msgs}, {msgs[:1], msgs[1:]}} {
		b := NewDerivedBuilder("x/y", pol)
		for _, p := range pieces {
			b.Add(p)
		}
		texts, _ := b.Done().Fingerprints()
		for _, f := range texts {
			if strings.Contains(shared.String(), f) {
				t.Fatalf("%q is in the readable file, and a fingerprint (%d pieces)", f, len(pieces))
			}
		}
		if len(texts) == 0 {
			t.Fatal("nothing of the withheld lines of its own was gathered")
		}
	}
}

// TestKeyLikeIsEntropy: keyLike says what entropy says of every word,
// those a hair from minEntropy (8 bytes each present as often: exactly 3
// bits) and the long ones past the table included.
func TestKeyLikeIsEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabets := []string{"ab", "abcdefg", "abcdefgh", "0123456789abcdef", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-"}
	words := []string{"", "abcdefgh", "aabbccddeeffgghh", "abcdefgabcdefg", strings.Repeat("abcdefgh", 40), strings.Repeat("abcdefghi", 40) + "a"}
	for range 20000 {
		a := alphabets[rng.IntN(len(alphabets))]
		b := make([]byte, 1+rng.IntN(120))
		for i := range b {
			if rng.IntN(50) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = a[rng.IntN(len(a))]
			}
		}
		words = append(words, string(b))
	}
	for _, w := range words {
		if got, want := keyLike(w), entropy(w) >= minEntropy; got != want {
			t.Fatalf("%q: key-like %v, entropy %v", w, got, entropy(w))
		}
	}
}

// BenchmarkEntropy: keyLike of the words a gathering weighs (12 bytes or
// more, letters and digits), against entropy's sum.
func BenchmarkEntropy(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	words := make([]string, 4096)
	for i := range words {
		w := make([]byte, 12+rng.IntN(30))
		for j := range w {
			w[j] = alnum[rng.IntN(len(alnum)/(1+i%4))]
		}
		words[i] = string(w)
	}
	for _, bc := range []struct {
		name string
		fn   func(string) bool
	}{{"table", keyLike}, {"entropy", func(w string) bool { return entropy(w) >= minEntropy }}} {
		b.Run(bc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				for _, w := range words {
					if bc.fn(w) {
						n++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(words)), "ns/word")
		})
	}
}

// TestByteKinds holds byteKinds to what an identifier, a word and a quote
// are made of, spelled out byte by byte.
func TestByteKinds(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		ident := b == '_' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		word := ident || b == '-' || b == '+' || b == '/' || b == '=' || b == '.' || b == '~' || b == ':'
		quote := b == '"' || b == '\'' || b == '`'
		if isIdent(b) != ident || isWord(b) != word || isQuote(b) != quote {
			t.Errorf("byte %#x: ident %v word %v quote %v, want %v %v %v", b, isIdent(b), isWord(b), isQuote(b), ident, word, quote)
		}
	}
}

// firstQuote looks for each quote on its own: it must find the first of
// them a byte at a time finds, whatever comes before and after it (another
// quote, a byte one more or less than one, bytes past ASCII).
func TestFirstQuote(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	alphabet := []byte{'"', '\'', '`', '!', '#', '&', '(', '_', 'a', '\\', 0, 0x80, 0xff, 0x21, 0x61}
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			if r.IntN(8) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = byte('a' + r.IntN(26))
			}
		}
		want := len(b)
		for i, c := range b {
			if c == '"' || c == '\'' || c == '`' {
				want = i
				break
			}
		}
		if got := firstQuote(string(b)); got != want {
			t.Fatalf("%q: %d, want %d", b, got, want)
		}
	}
}

// wordFingerprints skips the bytes no word it takes can start in: it must
// take what a look at every word takes, on texts of short and long words,
// identifiers, keys and punctuation at every place.
func TestWordFingerprintsSkip(t *testing.T) {
	every := func(s string, loose bool) []string {
		var out []string
		for i := 0; i < len(s); {
			if !isWord(s[i]) {
				i++
				continue
			}
			j := i
			for j < len(s) && isWord(s[j]) {
				j++
			}
			if w := trimPunct(s[i:j]); len(w) >= minEntropyWord && (loose || letterAndDigit(w) && keyLike(w)) {
				out = append(out, w)
			}
			if j-i >= minIdent {
				identifiers(s[i:j], func(id string) { out = append(out, id) })
			}
			i = j
		}
		return out
	}
	r := rand.New(rand.NewPCG(6, 1))
	pieces := []string{" ", "  ", "\t", ".", ":", "-", "(", ")", "=", "x", "ab", "k9", "q7Zp2Lx0Wv", "tokenValue", "AKIA4Q7ZP2LX0WV8RT3M", "very_long_identifier_name", "a.b.c", "--", "::", "/", "é"}
	for range 5000 {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		for _, loose := range []bool{false, true} {
			var got []string
			wordFingerprints(s, loose, func(w string) { got = append(got, w) })
			if want := every(s, loose); !slices.Equal(got, want) {
				t.Fatalf("%q (loose %v): %q, want %q", s, loose, got, want)
			}
		}
	}
}
