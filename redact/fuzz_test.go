package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// choices reads fuzz input as a sequence of small decisions; past the end
// every decision is 0, so any input makes a valid history.
type choices struct{ data []byte }

func (c *choices) n(k int) int {
	if len(c.data) == 0 || k <= 1 {
		return 0
	}
	b := c.data[0]
	c.data = c.data[1:]
	return int(b) % k
}

// fuzzTree is a real tree with a symlink, so that decisions exercise
// canonicalisation as well as pattern matching.
func fuzzTree(t testing.TB) []string {
	root, err := policy.Canonical(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"pub", "secrets", "priv"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, d, "a.txt"), []byte("a"), 0o644)
	}
	os.Symlink(filepath.Join(root, "secrets"), filepath.Join(root, "pub", "link"))
	// Enough names in pub/ for a batch to list the folder, and a file link
	// into secrets/ among them that the listing must not take as plain.
	os.Symlink(filepath.Join(root, "secrets", "a.txt"), filepath.Join(root, "pub", "zlink.txt"))
	paths := []string{
		filepath.Join(root, "pub", "a.txt"), filepath.Join(root, "secrets", "a.txt"),
		filepath.Join(root, "priv", "a.txt"), filepath.Join(root, "pub", "link", "a.txt"),
		filepath.Join(root, "pub", "missing.env"), filepath.Join(root, "priv", "key.pem"),
		"/", "relative/path.txt", "/bad\x00path", filepath.Join(root, "pub", "zlink.txt"),
	}
	for i := range 8 {
		name := filepath.Join(root, "pub", fmt.Sprintf("f%d.txt", i))
		os.WriteFile(name, []byte("f"), 0o644)
		paths = append(paths, name)
	}
	return paths
}

var (
	fuzzRead  = []string{`"/**"`, `"%s/pub/**"`, `"%s/priv/*"`, `"**/*.txt"`}
	fuzzDeny  = []string{`"**/secrets/**"`, `"**/*.pem"`, `"%s/priv/**"`, `"**/.env*"`, `"**/missing.*"`}
	fuzzLabel = []string{"cloud", "local", `odd "quoted" label`, "ünïcode"}
)

func fuzzPolicy(t testing.TB, c *choices, root string) (*policy.Policy, string) {
	pick := func(pool []string) string {
		var sel []string
		for _, p := range pool {
			if c.n(2) == 1 {
				sel = append(sel, strings.ReplaceAll(p, "%s", root))
			}
		}
		return "[" + strings.Join(sel, ", ") + "]"
	}
	label := fuzzLabel[c.n(len(fuzzLabel))]
	text := fmt.Sprintf("default_tier = \"t\"\n[tiers.t]\nlabel = %q\nread = %s\ndeny = %s\n", label, pick(fuzzRead), pick(fuzzDeny))
	if c.n(2) == 1 {
		text += "unknown_source = \"withhold\"\n"
	}
	if c.n(2) == 1 {
		text += "derived = \"redact\"\n"
	}
	if c.n(3) == 1 {
		text += "secrets = \"redact\"\n"
	}
	p, err := policy.Parse([]byte(text), filepath.Join(root, "policy.toml"))
	if err != nil {
		t.Fatalf("generated policy does not load: %v\n%s", err, text)
	}
	return p, label
}

// fuzzSnippets are what parts say besides their unique token: lines and
// tokens that derived redaction takes as fingerprints, lines too common to
// count, a credential, and text that looks like a placeholder. Drawn from
// one pool, they repeat across parts and messages the way quoted content
// does.
var fuzzSnippets = []string{
	"API_TOKEN=tok-SECRET-12345",
	"The token is tok-SECRET-12345.",
	"DATABASE_URL=postgres://app:hunter2pass@db:5432/app",
	"// Copyright 2026 The Example Authors. All rights reserved.",
	"}", "return nil", "import (", "package main",
	"func openVault(masterKeyMaterial string) error {",
	"     3\tfunc openVault(masterKeyMaterial string) error {",
	`password = "Zx9Qw2Lm8Rt4"`,
	"export GITHUB_TOKEN=ghp_R9bX2kQm7LpZ4vT8nW1cY6dF3hJ5sA0eG2uI",
	"[Content from /x filtered — trust tier \"cloud\" does not have read access]",
	"tok-SECRET-12345 tok-SECRET-12345\n\tAPI_TOKEN=tok-SECRET-12345",
	"ünïcode line that is long enough to count: ✓✓✓",
}

func (c *choices) snippet() string {
	var b strings.Builder
	for k := c.n(3); k > 0; k-- {
		b.WriteString("\n")
		b.WriteString(fuzzSnippets[c.n(len(fuzzSnippets))])
	}
	return b.String()
}

// fuzzHistory builds messages whose every part text starts with a unique
// token, so a leak of any denied part can be found by searching for it.
func fuzzHistory(c *choices, paths []string) []session.Message {
	roles := []session.Role{session.RoleUser, session.RoleAssistant, session.RoleTool, session.RoleTool, session.RoleEvent, session.RoleSystem}
	msgs := make([]session.Message, c.n(40))
	for i := range msgs {
		m := session.Message{ID: fmt.Sprint("m", i), Role: roles[c.n(len(roles))], Model: "x/y"}
		style := c.n(4) // 0 no paths, 1 per part, 2 whole message, 3 per part plus an extra path
		nparts := c.n(5)
		if nparts > 0 || c.n(2) == 0 {
			m.Parts = make([]session.Part, 0, nparts)
		}
		for j := 0; j < nparts; j++ {
			p := session.Part{Kind: session.PartText, Text: fmt.Sprintf("«%d.%d»", i, j) + c.snippet()}
			if c.n(5) == 0 {
				in, _ := json.Marshal(map[string]any{"path": "x", "old_string": c.snippet(), "n": []any{1, c.snippet()}})
				p.Kind, p.CallID, p.Name, p.Input = session.PartToolCall, "c", "Edit", in
				if (style == 1 || style == 3) && c.n(2) == 0 {
					p.SourcePath = paths[c.n(len(paths))] // the file it writes
				}
			} else if (style == 1 || style == 3) && c.n(3) > 0 {
				p.SourcePath = paths[c.n(len(paths))]
			}
			m.Parts = append(m.Parts, p)
		}
		switch style {
		case 1, 3:
			m.SyncSourcePaths()
			if style == 3 {
				m.Meta.SourcePaths = append(m.Meta.SourcePaths, paths[c.n(len(paths))])
			}
		case 2:
			for k := c.n(3) + 1; k > 0; k-- {
				m.Meta.SourcePaths = append(m.Meta.SourcePaths, paths[c.n(len(paths))])
			}
		}
		switch c.n(4) { // what is known of the source beyond paths
		case 1:
			m.Meta.UnknownSource = "a script"
		case 2:
			m.Meta.NoFiles = true
		}
		msgs[i] = m
	}
	return msgs
}

func FuzzHistory(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 20, 2, 1, 4, 2, 1, 1, 1, 2, 2, 3, 2, 1, 3, 7})
	f.Add([]byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox"))
	paths := fuzzTree(f)
	root := filepath.Dir(filepath.Dir(paths[0]))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &choices{data}
		pol, label := fuzzPolicy(t, c, root)
		msgs := fuzzHistory(c, paths)
		before, _ := json.Marshal(msgs)
		copyBefore := deepCopy(msgs)

		out, rep := History(msgs, "any/model", pol)

		after, _ := json.Marshal(msgs)
		if !bytes.Equal(before, after) || !reflect.DeepEqual(msgs, copyBefore) {
			t.Fatal("History changed its input")
		}
		checkInvariants(t, pol, label, msgs, out, rep)
		checkWrites(t, pol, label, msgs, out)
		checkSpans(t, pol, msgs, out)
		// The engine sends what the path rule says. pathRule knows nothing
		// of derived and secret redaction, so only for a tier without them.
		if tier, _ := pol.TierFor("any/model"); !tier.RedactsDerived() && !tier.RedactsSecrets() {
			if want := pathRule(msgs, "any/model", pol); !reflect.DeepEqual(out, want) {
				for i := range min(len(out), len(want)) {
					if !reflect.DeepEqual(out[i], want[i]) {
						t.Fatalf("sent message %d differs from the path rule:\n got %+v\nwant %+v", i, out[i], want[i])
					}
				}
				t.Fatalf("History sent %d messages, the path rule %d", len(out), len(want))
			}
		}
		// The engine does what the whole rule says, report included.
		if want, wantRep := reference(msgs, "any/model", pol); !reflect.DeepEqual(out, want) || !reflect.DeepEqual(rep, wantRep) {
			// Name the first message that the two treat differently.
			for i := range msgs {
				one := msgs[i : i+1]
				o1, r1 := History(one, "any/model", pol)
				o2, r2 := reference(one, "any/model", pol)
				if !reflect.DeepEqual(o1, o2) || r1.UnknownSource != r2.UnknownSource || r1.RedactedParts != r2.RedactedParts || r1.RedactedMessages != r2.RedactedMessages || r1.Withheld != r2.Withheld {
					t.Fatalf("message %+v:\n got %+v %+v\nwant %+v %+v", msgs[i], o1, r1, o2, r2)
				}
			}
			t.Fatalf("History differs from the reference:\n%+v\n%+v\nwant\n%+v\n%+v", out, rep, want, wantRep)
		}

		// Cut into chunks and blocks as small as they go, the history
		// comes out the same: merging the chunks' paths, placing copies
		// after events and sharing out the work lose nothing.
		fine := layout{chunkMin: 1, maxChunks: 1 + c.n(6), block: 1 + c.n(4)}
		if out2, rep2, _ := history(msgs, "any/model", pol, Context{}, fine, false); !reflect.DeepEqual(out2, out) || !reflect.DeepEqual(rep2, rep) {
			t.Fatalf("cut as %+v, the result differs:\n%+v\n%+v\nwant\n%+v\n%+v", fine, out2, rep2, out, rep)
		}
		checkOwnStorage(t, msgs, copyBefore, out)
	})
}

// checkSpans: for a tier with derived = "redact", no fingerprint of
// withheld content is left anywhere in what is sent, placeholders aside;
// every tool call's input is still valid JSON; and each placeholder note
// points at its placeholder.
func checkSpans(t *testing.T, pol *policy.Policy, in, out []session.Message) {
	t.Helper()
	tier, _ := pol.TierFor("any/model")
	var fps, paths []string
	if tier.RedactsDerived() {
		_, _, gs := history(in, "any/model", pol, Context{}, defaultLayout, true)
		fps, paths = derivedOf(gs, tier.Label).Fingerprints()
	}
	for _, m := range out {
		for _, p := range m.Parts {
			if p.Kind == session.PartToolCall && !json.Valid(p.Input) {
				t.Fatalf("tool call input is not JSON after redaction: %s", p.Input)
			}
			if p.Redacted {
				continue
			}
			p.EachUnit(func(u session.Unit) {
				rest, at := "", 0
				for _, f := range p.Filtered {
					if f.Key != u.Key {
						continue
					}
					if f.Start < at || f.End > len(u.Text) {
						t.Fatalf("note %+v out of place in %q", f, u.Text)
					}
					if ph := u.Text[f.Start:f.End]; !strings.HasPrefix(ph, "[Content from ") && !strings.HasPrefix(ph, "[Secret filtered (") {
						t.Fatalf("note %+v does not point at a placeholder: %q", f, ph)
					}
					rest += u.Text[at:f.Start] + "\x00"
					at = f.End
				}
				rest += u.Text[at:]
				for i, f := range fps {
					if strings.Contains(rest, f) {
						t.Fatalf("fingerprint %q of %s is sent: %q", f, paths[i], u.Text)
					}
				}
			})
		}
	}
}

// checkOwnStorage writes through every slice of each message of out, and
// fails if that reaches the input or another message of out.
func checkOwnStorage(t *testing.T, in, inBefore, out []session.Message) {
	t.Helper()
	for i := range out {
		others := deepCopy(out)
		m := &out[i]
		for j := range m.Parts {
			m.Parts[j].Text = "overwritten"
			if len(m.Parts[j].Input) > 0 {
				m.Parts[j].Input[0] = 'X'
			}
			m.Parts[j].Input = append(m.Parts[j].Input, '!')
		}
		if len(m.Meta.SourcePaths) > 0 {
			m.Meta.SourcePaths[0] = "/overwritten"
		}
		m.Parts = append(m.Parts, session.Part{Text: "appended"})
		m.Meta.SourcePaths = append(m.Meta.SourcePaths, "/appended")
		for k := range out {
			if k != i && !reflect.DeepEqual(out[k], others[k]) {
				t.Fatalf("writing through message %d of the result changed message %d", i, k)
			}
		}
	}
	if !reflect.DeepEqual(in, inBefore) {
		t.Fatal("the result shares storage with the input")
	}
}

func checkInvariants(t *testing.T, pol *policy.Policy, label string, in, out []session.Message, rep Report) {
	t.Helper()
	denied := func(p string) bool { return !pol.Allowed("any/model", p) }
	var kept []session.Message
	for _, m := range in {
		if m.Role != session.RoleEvent {
			kept = append(kept, m)
		}
	}
	if len(out) != len(kept) || rep.Messages != len(out) {
		t.Fatalf("%d messages out, want %d", len(out), len(kept))
	}
	var sent strings.Builder
	for i := range out {
		if out[i].ID != kept[i].ID {
			t.Fatalf("message %d is %s, want %s: order changed", i, out[i].ID, kept[i].ID)
		}
		withholds := pol.Tiers["t"].WithholdsUnknown()
		for _, p := range out[i].Parts {
			sent.WriteString(p.Text)
			switch {
			case p.Redacted && p.SourcePath == "":
				if _, unknown := kept[i].Unknown(); !withholds || !unknown || p.Text != Withheld(label) {
					t.Fatalf("withheld placeholder %q for a message of known source or a tier that sends it", p.Text)
				}
			case p.Redacted:
				if !denied(p.SourcePath) || p.Text != Placeholder(p.SourcePath, label) {
					t.Fatalf("placeholder %q for %q (denied %v)", p.Text, p.SourcePath, denied(p.SourcePath))
				}
			}
		}
	}
	all := sent.String()
	for i, m := range kept {
		// Every denied path of a message is named by one of its placeholders,
		// so a reader can tell what was removed.
		for _, p := range append(m.Meta.SourcePaths[:len(m.Meta.SourcePaths):len(m.Meta.SourcePaths)], partPaths(m.Parts)...) {
			if denied(p) && !hasPlaceholder(out[i].Parts, p) {
				t.Fatalf("message %s: no placeholder names denied %q: %+v", m.ID, p, out[i].Parts)
			}
		}
	}
	for _, m := range kept {
		// A tier that withholds content of unknown source sends none of it.
		if _, unknown := m.Unknown(); unknown && pol.Tiers["t"].WithholdsUnknown() {
			for _, p := range m.Parts {
				if p.Kind != session.PartToolCall && strings.Contains(all, p.Text) {
					t.Fatalf("content of unknown source %q was sent to a tier that withholds it", p.Text)
				}
			}
		}
		whole := false // a denied path that no part carries takes the whole message
		for _, p := range m.Meta.SourcePaths {
			if denied(p) && !carried(m.Parts, p) {
				whole = true
			}
		}
		for _, p := range m.Parts {
			if (whole || p.SourcePath != "" && denied(p.SourcePath)) && strings.Contains(all, p.Text) {
				t.Fatalf("denied content %q (from %q) was sent", p.Text, p.SourcePath)
			}
		}
	}
}

func partPaths(parts []session.Part) []string {
	var out []string
	for _, p := range parts {
		if p.SourcePath != "" {
			out = append(out, p.SourcePath)
		}
	}
	return out
}

func hasPlaceholder(parts []session.Part, path string) bool {
	for _, p := range parts {
		if p.Redacted && p.SourcePath == path {
			return true
		}
		for _, f := range p.Filtered {
			if f.Kind == "path" && f.Path == path {
				return true
			}
		}
	}
	return false
}

// checkWrites checks the calls of in that write a denied file: each is
// sent, with the same keys, and each string of its input is the file's
// placeholder, the file's path or empty.
func checkWrites(t *testing.T, pol *policy.Policy, label string, in, out []session.Message) {
	t.Helper()
	k := 0
	for _, m := range in {
		if m.Role == session.RoleEvent {
			continue
		}
		sent := &out[k]
		k++
		for _, p := range m.Parts {
			if p.Kind != session.PartToolCall || p.SourcePath == "" || pol.Allowed("any/model", p.SourcePath) {
				continue
			}
			i := slices.IndexFunc(sent.Parts, func(s session.Part) bool { return s.Kind == session.PartToolCall && s.SourcePath == p.SourcePath })
			if i < 0 {
				if slices.ContainsFunc(sent.Parts, func(s session.Part) bool { return s.Redacted }) {
					continue // the whole message went (a denied path no part carries)
				}
				t.Fatalf("message %s: its call that writes %s is not sent: %+v", m.ID, p.SourcePath, sent.Parts)
			}
			var before, after map[string]any
			if json.Unmarshal(p.Input, &before) != nil || json.Unmarshal(sent.Parts[i].Input, &after) != nil || len(before) != len(after) {
				t.Fatalf("message %s: the call's input %s is sent as %s", m.ID, p.Input, sent.Parts[i].Input)
			}
			var walk func(v any)
			walk = func(v any) {
				switch v := v.(type) {
				case string:
					if v != "" && v != Placeholder(p.SourcePath, label) && v != p.SourcePath {
						t.Fatalf("message %s: %q of a call that writes denied %s is sent", m.ID, v, p.SourcePath)
					}
				case []any:
					for _, x := range v {
						walk(x)
					}
				case map[string]any:
					for _, x := range v {
						walk(x)
					}
				}
			}
			walk(after)
		}
	}
}
