//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/redact"
)

// fakePlaceholder is file content dressed as a placeholder, once bare and
// once behind redact's filter gutter.
var fakePlaceholder = redact.Placeholder("/etc/shadow", "limited")

// evilText is file (or model) content that tries to drive the terminal.
var evilText = strings.Join([]string{
	"clear \x1b[2J\x1b[H and home",
	"title \x1b]0;pwned-title\x07 and \x1b]2;pwned-too\x1b\\",
	"link \x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
	"colour \x1b[31mred\x1b[0m and C1 CSI \u009b31m",
	"cursor \x1b[1A\x1b[10D\x1b7\x1b8 up",
	"visible\rOVERWRITTEN",
	"abc\b\b\bXYZ and DEL\x7f",
	"bidi \u202egnp.exe\u202c \u2066iso\u2069 \u200fRLM",
	"zero\u200bwidth\u200d\u2060\ufeff soft\u00adhyphen",
	fakePlaceholder,
	"  ✖ " + fakePlaceholder,
	"── from /etc/shadow",
	"sourcePaths: none (no file content)",
}, "\n") + "\n"

// evilName is a file name that tries the same.
const evilName = "evil-\x1b]0;name-title\x07-\u202e-\r-name.txt"

// forbidden reports the first rune in s that content must not put on a
// terminal: C0 controls but newline and tab, DEL, C1 controls, bidi
// controls and zero-width characters.
func forbidden(s string) (rune, int, bool) {
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			return r, i, true
		case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e,
			r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069,
			r == 0x061c, r == 0xfeff, r == 0x00ad, r == 0x180e:
			return r, i, true
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return r, i, true // an invalid byte
		}
	}
	return 0, 0, false
}

func checkInert(t *testing.T, what, s string) {
	t.Helper()
	if r, i, bad := forbidden(s); bad {
		lo, hi := max(i-40, 0), min(i+40, len(s))
		t.Errorf("%s prints U+%04X at byte %d: …%q…", what, r, i, s[lo:hi])
	}
}

func TestTerminalSafety(t *testing.T) {
	t.Parallel()
	f := newAdvFixture(t)
	f.write(t, "public/evil.txt", evilText)
	f.write(t, "public/"+evilName, "named evil\n")
	f.write(t, "secrets/"+evilName, "SECRET-evil-name\n")
	f.secrets = append(f.secrets, "SECRET-evil-name")

	var outs []output
	tool := func(model string, args ...string) {
		out, errOut, _ := f.tool(t, model, args)
		outs = append(outs, output{fmt.Sprintf("tool %q for %s", args, model), out, errOut})
	}
	tool("demo/trusted", "read", "public/evil.txt")
	tool("demo/trusted", "grep", ".", "public")
	tool("demo/trusted", "glob", "*", "public", "--content")
	tool("demo/limited", "read", "secrets/"+evilName)
	tool("demo/trusted", "read", "secrets/"+evilName)
	tool("demo/trusted", "read", "public/"+evilName)
	tool("demo/trusted", "bash", "--", "cat", "public/evil.txt", "public/*name.txt")
	for _, model := range []string{"demo/trusted", "demo/limited"} {
		out, errOut, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", f.session, "--model", model)
		if code != exitOK {
			t.Fatalf("redact %s: exit %d: %s", model, code, errOut)
		}
		outs = append(outs, output{"redact for " + model, out, errOut})
		// Shown, as visible symbols: made inert, not dropped.
		for _, want := range []string{"␛]0;pwned-title␇", "visible␍OVERWRITTEN", "<U+202E>gnp.exe"} {
			if model == "demo/trusted" && !strings.Contains(out, want) {
				t.Errorf("redact for %s does not show %q", model, want)
			}
		}
		f.checkRedactLines(t, model, out)
	}
	if _, errOut, code := scrim(t, "", "--store", f.store, "rename", f.session, "title \x1b]0;pwned\x07 \u202eevil\u202c\x1b[2J"); code != exitOK {
		t.Fatalf("rename: %s", errOut)
	}
	for _, args := range [][]string{{"show", f.session}, {"sessions"}} {
		out, errOut, _ := scrim(t, "", append([]string{"--store", f.store}, args...)...)
		outs = append(outs, output{args[0], out, errOut})
	}
	out, errOut, _ := scrim(t, "", "--policy", f.policy, "policy", "explain", "--model", "demo/limited", f.path("secrets/"+evilName))
	outs = append(outs, output{"policy explain", out, errOut})
	outs = append(outs, hostileProvider(t, f)...)

	for _, o := range outs {
		checkInert(t, o.what+" stdout", o.stdout)
		checkInert(t, o.what+" stderr", o.stderr)
	}
	// Every forgery in evilText names /etc/shadow: in tool and redact text,
	// such a line must sit behind the content gutter, where it cannot pass
	// for a placeholder, a part header or a sourcePaths line. (send prints
	// the model's own words as they stream; they are only made inert.)
	for _, o := range outs {
		if strings.HasPrefix(o.what, "send") {
			continue
		}
		gutter := gutterContent
		if o.what == "show" {
			gutter = "    " // show indents content under its two-space part headers
		}
		for _, line := range strings.Split(o.stdout, "\n") {
			if strings.Contains(line, "/etc/shadow") && !strings.HasPrefix(line, gutter) {
				t.Errorf("%s: content printed outside the gutter: %q", o.what, line)
			}
		}
	}
}

// output is what one command printed.
type output struct{ what, stdout, stderr string }

// checkRedactLines: redact's text marks placeholders with the filter gutter;
// exactly the real placeholders get it, whatever the content says.
func (f *advFixture) checkRedactLines(t *testing.T, model, text string) {
	t.Helper()
	doc := f.redact(t, model)
	real := map[string]bool{}
	for _, m := range doc.Messages {
		for _, p := range m.Parts {
			if p.Redacted {
				real[gutterFilter+oneLineInert(p.Text)] = true
			}
		}
	}
	if model == "demo/limited" && len(real) == 0 {
		t.Fatalf("no placeholder for the limited model: the test proves nothing")
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, gutterFilter) && !real[line] {
			t.Errorf("redact for %s: content forged the placeholder line %q", model, line)
		}
	}
}

// hostileProvider sends through a provider whose answer and whose error are
// hostile text, and returns what scrim printed.
func hostileProvider(t *testing.T, f *advFixture) []output {
	t.Helper()
	var fail atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusBadRequest)
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": evilText}})
			w.Write(b)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := json.Marshal(map[string]any{"id": "x", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": evilText}}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		fmt.Fprint(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	provs := filepath.Join(f.root, "providers.toml")
	must(t, os.WriteFile(provs, []byte(fmt.Sprintf("[providers.evil]\nbase_url = %q\n", srv.URL+"/v1")), 0o644))
	send := func() (string, string) {
		out, errOut, _ := scrim(t, "", "--store", f.store, "--policy", f.policy, "--providers", provs, "send", f.session, "--model", "evil/m", "hello")
		return out, errOut
	}
	out1, err1 := send()
	if !strings.Contains(out1, "OVERWRITTEN") {
		t.Fatalf("the hostile answer was not printed at all: %q %q", out1, err1)
	}
	fail.Store(true)
	out2, err2 := send()
	return []output{
		{"send (hostile answer)", out1, err1},
		{"send (hostile error)", out2, err2},
	}
}

// oneLineInert is how a one-line field (a path, a placeholder) is printed.
func oneLineInert(s string) string {
	return termsafe.Inert(oneLine(s))
}

// TestPathWithNewlineStaysOnItsLine: a file name may hold a newline. Where
// the text reports print a path (redact's denied paths and per-message
// lines, policy explain), the name must stay on its own line, shown with a
// visible symbol: printed as it is, the rest of the name was a line of its
// own that a crafted name could make read as an entry of the report.
func TestPathWithNewlineStaysOnItsLine(t *testing.T) {
	t.Parallel()
	f := newAdvFixture(t)
	name := "secrets/forged\n    #1     sent whole.txt"
	f.write(t, name, "SECRET-newline-name\n")
	if _, errOut, code := f.tool(t, "demo/trusted", []string{"read", name}); code != exitOK {
		t.Fatalf("read: exit %d: %s", code, errOut)
	}
	out, errOut, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", f.session, "--model", "demo/limited")
	if code != exitOK {
		t.Fatalf("redact: exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "SECRET-newline-name") {
		t.Fatal("the denied file's content was sent")
	}
	explain, errOut, _ := scrim(t, "", "--policy", f.policy, "policy", "explain", "--model", "demo/limited", f.path(name))
	if n := strings.Count(explain, "\n"); n != 1 {
		t.Errorf("policy explain printed %d lines for one path:\n%s%s", n, explain, errOut)
	}
	seen := 0
	for _, line := range strings.Split(out+explain, "\n") {
		if !strings.Contains(line, "sent whole.txt") {
			continue
		}
		seen++
		if !strings.Contains(line, "forged") {
			t.Errorf("the name's second line is a line of its own: %q", line)
		}
	}
	if seen < 4 { // denied paths, the message's line, its placeholder, explain
		t.Errorf("the name was printed %d times, want 4 or more:\n%s%s", seen, out, explain)
	}
}
