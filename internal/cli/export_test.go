//go:build unix

package cli

import (
	"bufio"
	"encoding/json"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/scrim-dev/scrim/internal/spool"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// exportPolicy gives models that match no rule the limited tier, which may
// not read secrets/; ollama models may read everything.
const exportPolicy = `
default_tier = "limited"

[tiers.local]
label = "local"
read  = ["/**"]

[tiers.limited]
label = "limited"
read  = ["/**"]
deny  = ["**/secrets/**"]

[[models]]
match = "ollama/**"
tier  = "local"
`

// theSecret exists only in the denied file secrets/api.env.
const theSecret = "ZX81-SECRET-7f3a9c"

// hostileFile is file content that tries to become markup in an export.
const hostileFile = "<script>alert('x')</script>\n</pre><img src=\"http://evil.example/p.png\">\n``` fence\n"

// exportFixture is a session imported by the Claude importer from a
// transcript in which the agent read a denied file holding theSecret and an
// allowed file holding hostileFile, to which scrim's read tool, run for a
// model of the local tier, then added the denied file again.
type exportFixture struct {
	root, store, policy, id string
	secretPath              string
}

func (f *exportFixture) args(a ...string) []string {
	return append([]string{"--store", f.store, "--policy", f.policy}, a...)
}

func newExportFixture(t *testing.T) *exportFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	f := &exportFixture{root: root, store: filepath.Join(root, "store"), policy: filepath.Join(root, "policy.toml")}
	must(t, os.WriteFile(f.policy, []byte(exportPolicy), 0o644))
	ws := filepath.Join(root, "ws")
	must(t, os.MkdirAll(filepath.Join(ws, "secrets"), 0o755))
	f.secretPath = filepath.Join(ws, "secrets", "api.env")
	must(t, os.WriteFile(f.secretPath, []byte("API_TOKEN="+theSecret+"\n"), 0o644))
	page := filepath.Join(ws, "page.html")
	must(t, os.WriteFile(page, []byte(hostileFile), 0o644))

	tr := &transcript{}
	tr.claude(ws, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Where is the API token set?"}})
	tr.claudeCall(ws, "toolu_1", "Read", map[string]any{"file_path": f.secretPath})
	tr.claudeResult(ws, "toolu_1", "     1\tAPI_TOKEN="+theSecret+"\n", false, nil)
	tr.claudeCall(ws, "toolu_2", "Read", map[string]any{"file_path": page})
	tr.claudeResult(ws, "toolu_2", numbered(hostileFile, "\t"), false, nil)
	tr.claude(ws, map[string]any{"type": "assistant", "message": map[string]any{"id": "m9", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "text", "text": "The token is set in secrets/api.env; page.html has a **script** tag."}}}})
	file := tr.write(t, filepath.Join(root, "t.jsonl"))
	if out, stderr, code := scrim(t, "", f.args("import", "claude", file)...); code != exitOK {
		t.Fatalf("import: %s %s", out, stderr)
	}
	f.id = importedSession(t, f.store, file)
	// A model of the local tier reads the denied file with scrim's own
	// tool: the secret enters the history a second way.
	if _, stderr, code := scrim(t, "", f.args("tool", "read", "--session", f.id, "--model", "ollama/llama3", f.secretPath)...); code != exitOK {
		t.Fatalf("tool read: %s", stderr)
	}
	return f
}

// The acceptance test of export: for the limited tier every format holds
// no byte of the secret, names the model and tier at the top, and keeps
// the placeholder; without --model every format holds the secret and
// says, at the top, that it is not redacted.
func TestExportRedactsEveryFormat(t *testing.T) {
	t.Parallel()
	isolate(t)
	f := newExportFixture(t)
	placeholder := redact.Placeholder(f.secretPath, "limited")
	for _, format := range exportFormats {
		t.Run(format, func(t *testing.T) {
			out, stderr, code := scrim(t, "", f.args("export", f.id, "--model", "anthropic/claude-x", "--format", format)...)
			if code != exitOK {
				t.Fatalf("export: exit %d: %s", code, stderr)
			}
			for _, leak := range []string{theSecret, "ZX81", "7f3a9c"} {
				if strings.Contains(out, leak) {
					t.Fatalf("the limited export holds %q:\n%s", leak, out)
				}
			}
			top := firstLines(out, 25)
			if !strings.Contains(top, "anthropic/claude-x") || !strings.Contains(top, "limited") || strings.Contains(top, "NOT REDACTED") {
				t.Fatalf("the top does not say which model and tier:\n%s", top)
			}
			if format != "jsonl" && !strings.Contains(top, "Filtered: 2 parts in 2 messages") {
				t.Fatalf("the top lacks the report's counts:\n%s", top)
			}
			if !strings.Contains(out, inFormat(format, placeholder)) {
				t.Fatalf("no placeholder %q in:\n%s", placeholder, out)
			}

			out, stderr, code = scrim(t, "", f.args("export", f.id, "--format", format)...)
			if code != exitOK {
				t.Fatalf("export without --model: exit %d: %s", code, stderr)
			}
			if !strings.Contains(firstLines(out, 25), "NOT REDACTED") {
				t.Fatalf("no warning at the top:\n%s", firstLines(out, 25))
			}
			if !strings.Contains(out, theSecret) {
				t.Fatalf("the stored history lacks the secret:\n%s", out)
			}
		})
	}
}

// inFormat is s as it appears in format's output.
func inFormat(format, s string) string {
	switch format {
	case "html":
		return template.HTMLEscapeString(s)
	case "jsonl":
		b, _ := json.Marshal(s)
		return strings.Trim(string(b), `"`)
	}
	return s
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// File content that holds <script>, </pre>, an image and a code fence stays
// text in every format.
func TestExportEscapesContent(t *testing.T) {
	t.Parallel()
	isolate(t)
	f := newExportFixture(t)
	html, _, code := scrim(t, "", f.args("export", f.id, "--format", "html")...)
	if code != exitOK {
		t.Fatal("export html failed")
	}
	for _, bad := range []string{"<script", "</pre><img", "<img", `src="http`} {
		if strings.Contains(html, bad) {
			t.Fatalf("html export holds %q", bad)
		}
	}
	if !strings.Contains(html, "&lt;script&gt;") {
		t.Fatalf("the file content is not in the page, escaped")
	}
	md, _, _ := scrim(t, "", f.args("export", f.id, "--format", "md")...)
	// The content's own ``` fence must sit inside a longer one.
	if !strings.Contains(md, "````text\n     1\t<script>") {
		t.Fatalf("the hostile file is not fenced by a longer fence:\n%s", md)
	}
	jl, _, _ := scrim(t, "", f.args("export", f.id, "--format", "jsonl")...)
	sc := bufio.NewScanner(strings.NewReader(jl))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d is not JSON: %v", n+1, err)
		}
		if n > 0 {
			var m session.Message
			must(t, json.Unmarshal(sc.Bytes(), &m))
			if m.SessionID != f.id || m.Seq != uint64(n) {
				t.Fatalf("line %d is message %s#%d", n+1, m.SessionID, m.Seq)
			}
		}
		n++
	}
	if n < 6 {
		t.Fatalf("%d JSONL lines", n)
	}
}

// -o writes the file (owner-only) and nothing to standard output; an
// unknown format is a usage error.
func TestExportToFile(t *testing.T) {
	t.Parallel()
	isolate(t)
	f := newExportFixture(t)
	dst := filepath.Join(f.root, "out.html")
	out, stderr, code := scrim(t, "", f.args("export", f.id, "--model", "anthropic/x", "--format", "html", "-o", dst)...)
	if code != exitOK || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	fi, err := os.Stat(dst)
	must(t, err)
	if fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Fatalf("mode %v size %d", fi.Mode(), fi.Size())
	}
	if _, stderr, code := scrim(t, "", f.args("export", f.id, "--format", "pdf")...); code != exitUsage || !strings.Contains(stderr, "md, html or jsonl") {
		t.Fatalf("--format pdf: exit %d %s", code, stderr)
	}
	// An -o that cannot be written is said so at once, in its own words,
	// and nothing is left: a folder, a missing folder, a file as a folder.
	plain := filepath.Join(f.root, "plain")
	must(t, os.WriteFile(plain, []byte("mine"), 0o600))
	for _, c := range []struct{ o, want string }{
		{f.root, "is a folder: give the file to write, e.g. -o " + filepath.Join(f.root, "session.html")},
		{filepath.Join(f.root, "missing", "out.html"), "the folder " + filepath.Join(f.root, "missing") + " does not exist"},
		{filepath.Join(plain, "out.html"), plain + " is a file, not a folder"},
	} {
		before, _ := os.ReadDir(f.root)
		_, stderr, code := scrim(t, "", f.args("export", f.id, "--format", "html", "-o", c.o)...)
		if code == exitOK || !strings.Contains(stderr, c.want) || strings.Contains(stderr, ".tmp-") {
			t.Errorf("-o %s: exit %d %s; want %q", c.o, code, stderr, c.want)
		}
		if after, _ := os.ReadDir(f.root); len(after) != len(before) {
			t.Errorf("-o %s left %v", c.o, after)
		}
	}
	if out, _, _ := scrim(t, "", f.args("__complete", "export", f.id, "--format", "")...); !strings.Contains(out, "md\nhtml\njsonl\n") {
		t.Fatalf("--format completes %q", out)
	}
	if out, _, _ := scrim(t, "", f.args("__complete", "search", "x", "--session", "")...); !strings.Contains(out, f.id+"\t") {
		t.Fatalf("--session completes %q", out)
	}
}

// The Markdown export of the limited tier, against a golden file
// (go test -run TestExportMarkdownGolden -update to regenerate).
func TestExportMarkdownGolden(t *testing.T) {
	t.Parallel()
	isolate(t)
	f := newExportFixture(t)
	out, stderr, code := scrim(t, "", f.args("export", f.id, "--model", "anthropic/claude-x", "--format", "md")...)
	if code != exitOK {
		t.Fatal(stderr)
	}
	out = strings.ReplaceAll(out, f.root, "/ROOT")
	out = strings.ReplaceAll(out, f.id, "SESSION")
	// What scrim's tool added carries the time of the test and a fresh call ID.
	out = regexp.MustCompile(`20[0-9][0-9]-[0-9-]+T[0-9:]+Z`).ReplaceAllStringFunc(out, func(ts string) string {
		if strings.HasPrefix(ts, "2025-06-01T") {
			return ts
		}
		return "NOW"
	})
	out = regexp.MustCompile(`call\\_[0-9a-f]+`).ReplaceAllString(out, "CALL")
	golden.RequireEqual(t, out)
}

// An export redacts the session once: its messages wait in a spool beside
// the output while the report for its top is counted. Where there is no
// room for the spool (here: no temporary folder for an export to standard
// output) it redacts twice and writes the same bytes. Not parallel: it
// counts the passes of every export.
func TestExportRedactsOnce(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	store, pol := filepath.Join(dir, "store"), filepath.Join(dir, "policy.toml")
	// The cloud tier redacts derived content and credentials; 2,000
	// messages are about 1.4 MB, past what a spool keeps in memory.
	must(t, os.WriteFile(pol, []byte(bigPolicy), 0o644))
	id := writeBigSession(t, store, 2000)
	args := func(format string, more ...string) []string {
		return append([]string{"--store", store, "--policy", pol, "export", id, "--model", "anthropic/claude-sonnet-4-5", "--format", format}, more...)
	}
	for _, format := range exportFormats {
		exportPasses.Store(0)
		once, stderr, code := scrim(t, "", args(format)...)
		if code != exitOK || exportPasses.Load() != 1 {
			t.Fatalf("%s: exit %d after %d passes: %s", format, code, exportPasses.Load(), stderr)
		}
		if len(once) <= spool.Memory || !strings.Contains(once, "pkg3/file") || !strings.Contains(once, `filtered — trust tier \"cloud\"`) &&
			!strings.Contains(once, `filtered — trust tier "cloud"`) && !strings.Contains(once, "filtered — trust tier &#34;cloud&#34;") {
			t.Fatalf("%s: %d bytes, no placeholder for pkg3", format, len(once))
		}

		exportPasses.Store(0)
		dst := filepath.Join(dir, "out."+format)
		if _, stderr, code := scrim(t, "", args(format, "-o", dst)...); code != exitOK || exportPasses.Load() != 1 {
			t.Fatalf("%s -o: exit %d after %d passes: %s", format, code, exportPasses.Load(), stderr)
		}
		got, err := os.ReadFile(dst)
		must(t, err)
		if string(got) != once {
			t.Fatalf("%s -o: the file differs from standard output", format)
		}
		left, err := os.ReadDir(dir)
		must(t, err)
		for _, e := range left {
			if strings.HasPrefix(e.Name(), ".") {
				t.Fatalf("%s -o: %s left behind", format, e.Name())
			}
		}

		cmd := scrimProcess(t, args(format)...)
		cmd.Env = append(cmd.Env, "TMPDIR="+filepath.Join(dir, "missing"))
		var errb strings.Builder
		cmd.Stderr = &errb
		twice, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s without a temporary folder: %v: %s", format, err, errb.String())
		}
		if string(twice) != once {
			t.Fatalf("%s without a temporary folder: %d bytes, not the %d of one pass", format, len(twice), len(once))
		}
	}
}
