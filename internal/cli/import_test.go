package cli

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

const (
	claudeFixture = "../../session/importers/claude/testdata/session.jsonl"
	claudeTree    = "../../session/importers/claude/testdata/projects"
	codexFixture  = "../../session/importers/codex/testdata/rollout-2025-09-01T10-00-00-0199aaaa.jsonl"
)

var sessionRE = regexp.MustCompile(`→ session ([0-9a-f]{16})`)

func TestImportCommandErrors(t *testing.T) {
	t.Parallel()
	isolate(t)
	store := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no agent", []string{"import"}, exitUsage, "requires at least 1 arg"},
		{"unknown agent", []string{"import", "cursor", claudeFixture}, exitUsage, `unknown agent "cursor"`},
		{"missing path", []string{"import", "claude", "nope/none.jsonl"}, exitError, "cannot read nope/none.jsonl"},
		{"missing default folder", []string{"import", "codex"}, exitError, ".codex/sessions"},
		{"folder without transcripts", []string{"import", "claude", "../../policy"}, exitError, "no claude transcripts"},
		{"folder without Gemini CLI sessions", []string{"import", "gemini", "../../policy"}, exitError, "no gemini sessions (session-*.json"},
		{"another agent's transcript as gemini", []string{"import", "gemini", claudeFixture}, exitError, "looks like a Claude Code transcript, not a Gemini CLI session: scrim import claude"},
		{"a transcript as crush", []string{"import", "crush", claudeFixture}, exitError, "not a Crush database (not SQLite)"},
		{"a transcript as opencode", []string{"import", "opencode", claudeFixture}, exitError, "looks like a Claude Code transcript, not an opencode session: scrim import claude"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := scrim(t, "", append(tc.args, "--store", store)...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q on one line", code, stderr, tc.code, tc.msg)
			}
		})
	}
}

func TestImportCommandSummaryAndIdempotency(t *testing.T) {
	t.Parallel()
	isolate(t)
	store := t.TempDir()
	abs, _ := filepath.Abs(claudeFixture)
	out, stderr, code := scrim(t, "", "import", "claude", claudeFixture, "--store", store)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := regexp.MustCompile(`^` + regexp.QuoteMeta(abs) + `: 23 messages, 6 tool results tagged, 3 unknown-source results, 2 skipped lines, 1 subagent session → session [0-9a-f]{16}\n$`)
	if !want.MatchString(out) {
		t.Errorf("summary %q", out)
	}
	id := sessionRE.FindStringSubmatch(out)[1]
	out, _, code = scrim(t, "", "import", "claude", claudeFixture, "--store", store)
	if code != 0 || out != abs+": unchanged since the last import (session "+id+")\n" {
		t.Errorf("second import: %d %q", code, out)
	}
	st, err := session.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hs, _, _ := st.List()
	if len(hs) != 2 {
		t.Errorf("%d sessions after importing twice, want 2 (main and sidechain)", len(hs))
	}
}

// TestImportDefaultFolders: without PATH, ~/.claude/projects and
// ~/.codex/sessions are searched recursively.
func TestImportDefaultFolders(t *testing.T) {
	t.Parallel()
	isolate(t)
	home := getenv(t, "HOME")
	copyTree(t, claudeTree, filepath.Join(home, ".claude", "projects"))
	day := filepath.Join(home, ".codex", "sessions", "2025", "09", "01")
	copyTree(t, filepath.Dir(codexFixture), day)
	os.RemoveAll(filepath.Join(day, "fuzz"))
	os.Remove(filepath.Join(day, "symlinks.jsonl"))
	store := t.TempDir()
	out, stderr, code := scrim(t, "", "import", "claude", "--store", store)
	if code != 0 || strings.Count(out, "\n") != 4 || !strings.Contains(out, "3 files: 10 messages, 2 tool results tagged, 1 unknown-source result, 0 skipped lines") {
		t.Errorf("claude: exit %d %q %s", code, out, stderr)
	}
	out, stderr, code = scrim(t, "", "import", "codex", "--store", store)
	if code != 0 || !strings.Contains(out, "rollout-2025-09-01T10-00-00-0199aaaa.jsonl: 14 messages") {
		t.Errorf("codex: exit %d %q %s", code, out, stderr)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(to, strings.TrimPrefix(p, from))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestImportRoundTrip: import a transcript, then `scrim redact` it for a
// model whose tier denies one of the files it read: that file's text is
// gone, the rest is intact, and the stored history still has everything.
func TestImportRoundTrip(t *testing.T) {
	t.Parallel()
	isolate(t)
	store := t.TempDir()
	out, stderr, code := scrim(t, "", "import", "claude", claudeFixture, "--store", store)
	if code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	id := sessionRE.FindStringSubmatch(out)[1]
	const envPlaceholder = "[Content from /home/dev/shop/.env filtered \u2014 trust tier \"cloud\" does not have read access]"
	for _, tc := range []struct {
		model           string
		denied          []string
		present, absent []string
	}{
		{"anthropic/claude-sonnet-4-5", // cloud: the default policy denies **/.env and **/.env.*, and withholds what is of unknown source (go test's output)
			[]string{"/home/dev/shop/.env", "/home/dev/shop/config/.env.production"},
			[]string{envPlaceholder, "func Total() int { return 3 }", "Total counts items, not prices.", "Whenever you read a file", redact.Withheld("cloud")},
			[]string{"sk_test_4242", "postgres://shop@db", "Found 2 files\nsrc/payment.go", "FAIL: TestTotal"}},
		{"ollama/llama3.1:8b", // local: reads everything, from the same stored history
			[]string{},
			[]string{"sk_test_4242", "Found 2 files\nsrc/payment.go", "func Total() int { return 3 }"},
			[]string{"[Content from"}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			out, stderr, code := scrim(t, "", "redact", id, "--model", tc.model, "--format", "json", "--store", store)
			if code != 0 {
				t.Fatalf("redact: exit %d %s", code, stderr)
			}
			var got struct {
				Messages []session.Message `json:"messages"`
				Report   struct {
					DeniedPaths []struct{ Path string } `json:"deniedPaths"`
				} `json:"report"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			var sent strings.Builder
			for _, m := range got.Messages {
				sent.WriteString(m.Text() + "\n")
			}
			for _, s := range tc.present {
				if !strings.Contains(sent.String(), s) {
					t.Errorf("%q missing from what is sent", s)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(sent.String(), s) {
					t.Errorf("%q is sent", s)
				}
			}
			denied := []string{}
			for _, d := range got.Report.DeniedPaths {
				denied = append(denied, d.Path)
			}
			if strings.Join(denied, " ") != strings.Join(tc.denied, " ") {
				t.Errorf("denied paths %q, want %q", denied, tc.denied)
			}
		})
	}
	shown, stderr, code := scrim(t, "", "show", id, "--store", store)
	if code != 0 || !strings.Contains(shown, "sk_test_4242") || !strings.Contains(shown, "sourcePaths: /home/dev/shop/.env") {
		t.Errorf("the stored history was changed (exit %d %s)", code, stderr)
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestImportSummaryIsInert: a transcript's file name is untrusted text; the
// summary line shows its escape sequences, never sends them.
func TestImportSummaryIsInert(t *testing.T) {
	t.Parallel()
	isolate(t)
	b, err := os.ReadFile(codexFixture)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "evil\x1b]0;pwned\x07\nname.jsonl")
	os.WriteFile(file, b, 0o600)
	out, stderr, code := scrim(t, "", "import", "codex", file, "--store", t.TempDir())
	if code != 0 || strings.ContainsAny(out, "\x1b\x07") || strings.Count(out, "\n") != 1 || !strings.Contains(out, "14 messages") {
		t.Errorf("exit %d, out %q, stderr %q", code, out, stderr)
	}
}
