//go:build unix

package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/search"
	"github.com/scrim-dev/scrim/session"
)

// The acceptance test of search: the secret that exists only in a denied
// file is found in the stored history, and for the limited tier it is
// reported as withheld, with the path, and no byte of it is printed, in
// text or JSON.
func TestSearchSecretWithheld(t *testing.T) {
	t.Parallel()
	isolate(t)
	f := newExportFixture(t)

	out, stderr, code := scrim(t, "", f.args("search", theSecret)...)
	if code != exitOK {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	want := "#3 tool result read " + f.secretPath + ":1:      1␉API_TOKEN=" + theSecret
	if !strings.Contains(out, f.id) || !strings.Contains(out, want) {
		t.Fatalf("the stored history's hit is not shown as %q:\n%s", want, out)
	}

	for _, format := range []string{"text", "json"} {
		out, stderr, code = scrim(t, "", f.args("search", theSecret, "--model", "anthropic/claude-x", "--format", format)...)
		if code != exitOK {
			t.Fatalf("search --model: exit %d: %s", code, stderr)
		}
		for _, leak := range []string{theSecret, "ZX81", "API_TOKEN="} {
			if strings.Contains(out, leak) {
				t.Fatalf("%s: the limited search shows %q:\n%s", format, leak, out)
			}
		}
		if format == "text" {
			want := `#3 tool result read · withheld from tier "limited" · 1 match in ` + f.secretPath
			if !strings.Contains(out, want) {
				t.Fatalf("not reported as %q:\n%s", want, out)
			}
			continue
		}
		hits := decodeHits(t, out)
		if len(hits) != 2 || hits[0].Seq != 3 || hits[1].Seq != 8 {
			t.Fatalf("JSON hits (the import's read and the tool's): %+v", hits)
		}
		for _, h := range hits {
			if !h.Withheld || h.Tier != "limited" || h.WithheldIn != f.secretPath || h.Text != "" || h.Matches != 1 {
				t.Fatalf("JSON hit: %+v", h)
			}
		}
	}
	// The local tier may read it: the hit is shown.
	out, _, _ = scrim(t, "", f.args("search", theSecret, "--model", "ollama/llama3")...)
	if !strings.Contains(out, "API_TOKEN="+theSecret) || strings.Contains(out, "withheld") {
		t.Fatalf("local tier:\n%s", out)
	}
}

func decodeHits(t *testing.T, out string) []search.Hit {
	t.Helper()
	var hits []search.Hit
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var h search.Hit
		if err := json.Unmarshal([]byte(line), &h); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		hits = append(hits, h)
	}
	return hits
}

// Smart case, regular expressions, tool inputs, --session, and a match in
// allowed content shown to the limited tier.
func TestSearchQueries(t *testing.T) {
	t.Parallel()
	isolate(t)
	f := newExportFixture(t)
	cases := []struct {
		name  string
		args  []string
		want  []string // "#seq where" of each hit, in order
		empty bool
	}{
		{"ignores case without upper case", []string{"where is the api"}, []string{"#1 user text"}, false},
		{"upper case matches exactly", []string{"Where is the API"}, []string{"#1 user text"}, false},
		{"upper case that does not match", []string{"WHERE IS"}, nil, true},
		{"tool input values, not keys", []string{"page.html"}, []string{"#4 tool input", "#6 assistant text"}, false},
		{"tool input of scrim's own tool", []string{"api.env"}, []string{"#2 tool input", "#6 assistant text", "#7 tool input"}, false},
		{"keys are not searched", []string{"file_path"}, nil, true},
		{"regex", []string{`alert\('x'\)`, "--regex"}, []string{"#5 tool result"}, false},
		{"limited tier sees allowed content", []string{"evil.example", "--model", "anthropic/claude-x"}, []string{"#5 tool result"}, false},
		{"one session", []string{"token", "--session", f.id[:6]}, []string{"#1 user text", "#3 tool result", "#6 assistant text", "#8 tool result"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := scrim(t, "", f.args(append([]string{"search", "--format", "json"}, tc.args...)...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var got []string
			for _, h := range decodeHits(t, out) {
				got = append(got, "#"+itoa(h.Seq)+" "+h.Where)
			}
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Fatalf("hits %q, want %q", got, tc.want)
			}
		})
	}
	if _, stderr, code := scrim(t, "", f.args("search", "(", "--regex")...); code != exitUsage || !strings.Contains(stderr, "regular expression") {
		t.Fatalf("a bad regex: exit %d %s", code, stderr)
	}
	out, _, _ := scrim(t, "", f.args("search", "nothing-like-this")...)
	if !strings.Contains(out, "No match for") {
		t.Fatalf("no hits says nothing: %q", out)
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Sessions come newest first: of two imported sessions, the one scrim's
// read tool then added to is searched, and printed, first.
func TestSearchNewestFirst(t *testing.T) {
	t.Parallel()
	isolate(t)
	f := newExportFixture(t) // its session was just added to by the read tool
	tr := &transcript{}
	tr.claude(f.root, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Is the API token rotated?"}})
	older := tr.write(t, filepath.Join(f.root, "older.jsonl"))
	if _, stderr, code := scrim(t, "", f.args("import", "claude", older)...); code != exitOK {
		t.Fatal(stderr)
	}
	oid := importedSession(t, f.store, older)
	out, _, _ := scrim(t, "", f.args("search", "api token", "--format", "json")...)
	var order []string
	for _, h := range decodeHits(t, out) {
		if len(order) == 0 || order[len(order)-1] != h.SessionID {
			order = append(order, h.SessionID)
		}
	}
	if strings.Join(order, " ") != f.id+" "+oid {
		t.Fatalf("sessions in order %v, want %s then %s", order, f.id, oid)
	}
}

// In the demo's session of quotes, commands and credentials (made by the
// real tools), the limited tier is sent neither the .env values that the
// assistant repeated nor the registry token of the deploy log: search
// reports each as withheld, as derived content or as a credential, and no
// export for that tier holds a byte of them.
func TestSearchAndExportDerivedAndSecrets(t *testing.T) {
	t.Parallel()
	isolate(t)
	d := seededDemo(t)
	d.store.Close()
	sid := demoSession(t, d, "Quotes, commands and credentials")
	ws, _ := filepath.EvalSymlinks(d.workspace)
	args := func(a ...string) []string {
		return append([]string{"--store", d.storeDir, "--policy", filepath.Join(d.dir, "policy.toml")}, a...)
	}
	leaks := []string{"hunter2", "glpat-", "sk-demo-local-0000-NOT-REAL"}
	kinds := map[string]bool{}
	for _, q := range []string{"hunter2", "glpat-"} {
		out, stderr, code := scrim(t, "", args("search", q, "--model", "demo/limited", "--session", sid, "--format", "json")...)
		if code != exitOK {
			t.Fatalf("search %s: %s", q, stderr)
		}
		for _, leak := range leaks {
			if strings.Contains(out, leak) {
				t.Fatalf("search %s for limited shows %q:\n%s", q, leak, out)
			}
		}
		hits := decodeHits(t, out)
		if len(hits) == 0 {
			t.Fatalf("search %s: no hit", q)
		}
		for _, h := range hits {
			if !h.Withheld {
				t.Fatalf("search %s: a hit is shown: %+v", q, h)
			}
			kinds[h.WithheldIn] = true
		}
	}
	for _, want := range []string{"content derived from " + filepath.Join(ws, ".env"), "a credential (gitlab-pat)", filepath.Join(ws, ".env")} {
		if !kinds[want] {
			t.Fatalf("no hit withheld as %q, only %v", want, kinds)
		}
	}
	for _, format := range exportFormats {
		out, stderr, code := scrim(t, "", args("export", sid, "--model", "demo/limited", "--format", format)...)
		if code != exitOK {
			t.Fatalf("export %s: %s", format, stderr)
		}
		for _, leak := range leaks {
			if strings.Contains(out, leak) {
				t.Fatalf("export %s for limited holds %q", format, leak)
			}
		}
		if format != "jsonl" && !strings.Contains(out, "1 credential inside parts") {
			t.Fatalf("export %s does not count the credential:\n%s", format, firstLines(out, 20))
		}
	}
}

// demoSession is the ID of the demo session titled title.
func demoSession(t *testing.T, d *demo, title string) string {
	t.Helper()
	st, err := session.Open(d.storeDir)
	must(t, err)
	defer st.Close()
	hs, _, err := st.List()
	must(t, err)
	for _, h := range hs {
		if h.Title == title {
			return h.ID
		}
	}
	t.Fatalf("no demo session %q", title)
	return ""
}
