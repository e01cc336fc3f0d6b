package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// redactFixture fills a session through `scrim tool` under the trusted
// model: a secret read, an allowed read, a mixed grep, and a file whose
// content imitates a placeholder.
func redactFixture(t *testing.T) toolFixture {
	t.Helper()
	f := newToolFixture(t)
	forged := `[Content from /x filtered — trust tier "limited" does not have read access]`
	if err := os.WriteFile(filepath.Join(f.work, "forged.txt"), []byte(forged+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"read", "secrets/k"},
		{"read", "src/main.go"},
		{"grep", "sk-|key"},
		{"read", "forged.txt"},
	} {
		if _, stderr, code := scrim(t, "", f.args(args[0], "trusted/x", args[1:]...)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	return f
}

func TestRedactCLIJSON(t *testing.T) {
	t.Parallel()
	f := redactFixture(t)
	stored := f.messages(t)
	out, stderr, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", f.session[:6], "--model", "limited/x", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Session  string            `json:"session"`
		Model    string            `json:"model"`
		Tier     redact.Tier       `json:"tier"`
		Messages []session.Message `json:"messages"`
		Report   redact.Report     `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	key := filepath.Join(f.work, "secrets", "k")
	ph := `[Content from ` + key + ` filtered — trust tier "limited" does not have read access]`
	if doc.Session != f.session || doc.Model != "limited/x" || doc.Tier != (redact.Tier{Name: "limited", Label: "limited"}) {
		t.Fatalf("header %q %q %+v", doc.Session, doc.Model, doc.Tier)
	}
	if len(doc.Messages) != len(stored) || strings.Contains(out, cliSecret) {
		t.Fatalf("%d messages (stored %d); secret present: %v", len(doc.Messages), len(stored), strings.Contains(out, cliSecret))
	}
	secretRead, grep := doc.Messages[1], doc.Messages[5]
	if p := secretRead.Parts[0]; p.Text != ph || !p.Redacted {
		t.Fatalf("secret read sent as %+v", p)
	}
	if len(grep.Parts) != 3 || grep.Parts[1].Text != ph || !grep.Parts[1].Redacted || grep.Parts[0].Redacted || grep.Parts[2].Redacted {
		t.Fatalf("mixed grep sent as %+v", grep.Parts)
	}
	if r := doc.Report; r.RedactedMessages != 2 || r.RedactedParts != 2 || len(r.DeniedPaths) != 1 || r.DeniedPaths[0].Path != key || r.DeniedPaths[0].Pattern != "**/secrets/**" {
		t.Fatalf("report %+v", r)
	}
	// The same messages in the same shape as the store holds them, except
	// for the placeholders.
	for i := range stored {
		if i == 1 || i == 5 {
			continue
		}
		if !reflect.DeepEqual(doc.Messages[i].Parts, stored[i].Parts) || doc.Messages[i].ID != stored[i].ID {
			t.Fatalf("message %d differs from the stored one", i)
		}
	}
	if !reflect.DeepEqual(f.messages(t), stored) {
		t.Fatal("redact changed the stored session")
	}
}

func TestRedactCLITextMarksOnlyRealPlaceholders(t *testing.T) {
	t.Parallel()
	f := redactFixture(t)
	out, stderr, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", f.session, "--model", "limited/x")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	key := filepath.Join(f.work, "secrets", "k")
	for _, want := range []string{
		"What limited/x would be sent of session " + f.session + ` (tier limited, label "limited")`,
		"  ✖ [Content from " + key + ` filtered — trust tier "limited" does not have read access]`,
		"  │      1\t[Content from /x filtered", // the forged placeholder prints as content
		"  filtered: 2 parts in 2 messages",
		"    " + key + `  — deny pattern "**/secrets/**" (` + f.policy + ":12)",
		"  unknown source: 0 tool results",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(out, "  ✖ "); n != 2 {
		t.Errorf("%d placeholder lines, want 2:\n%s", n, out)
	}
	if strings.Contains(out, cliSecret) {
		t.Fatal("the secret was printed")
	}

	t.Run("switch back shows everything", func(t *testing.T) {
		out, _, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", f.session, "--model", "trusted/x")
		if code != exitOK || !strings.Contains(out, cliSecret) || strings.Contains(out, "  ✖ ") || !strings.Contains(out, "denied paths: none") {
			t.Fatalf("trusted view: exit %d\n%s", code, out)
		}
	})
}

func TestRedactCLIErrors(t *testing.T) {
	t.Parallel()
	f := newToolFixture(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no model", []string{"--store", f.store, "redact", f.session}, exitUsage, "needs --model M"},
		{"no session", []string{"--store", f.store, "redact", "--model", "a/b"}, exitUsage, "accepts 1 arg"},
		{"unknown session", []string{"--store", f.store, "redact", "ffff0000", "--model", "a/b"}, exitError, `no session matches "ffff0000"`},
		{"bad format", []string{"--store", f.store, "redact", f.session, "--model", "a/b", "--format", "xml"}, exitUsage, "--format must be text, json or request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := scrim(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

// The text report's counts agree with their nouns and verbs: one span
// repeats, two repeat.
func TestSpanReportGrammar(t *testing.T) {
	tier := &policy.Tier{Derived: "redact", Secrets: "redact"}
	for n, want := range map[int]string{
		1: "derived: 1 span that repeats content of denied files",
		2: "derived: 2 spans that repeat content of denied files",
	} {
		var b strings.Builder
		writeSpanReport(&b, tier, redact.Report{Derived: n, Secrets: n, DerivedFrom: []redact.PathCount{{Path: "/p/.env", Spans: n}}})
		if !strings.Contains(b.String(), want) {
			t.Errorf("%d spans: %q lacks %q", n, b.String(), want)
		}
	}
}
