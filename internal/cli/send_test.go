package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
)

// newStoreWithSession makes a store with one empty session and returns its
// folder and the session ID; the store is closed again for the CLI to open.
func newStoreWithSession(t *testing.T) (dir, id string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "store")
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.Create(session.Header{Title: "cli", WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, h.ID
}

func storedMessages(t *testing.T, dir, id string) []session.Message {
	t.Helper()
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, _, err := st.Messages(id)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// The demo works offline on a fresh machine: no config, no keys, no network.
func TestSendDemoOffline(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir, id := newStoreWithSession(t)
	stdout, stderr, code := scrim(t, "", "--store", dir, "send", id, "--model", "demo/limited", "hello")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "demo/limited here. I received 2 messages (1 system, 1 user). No part arrived as a placeholder.") {
		t.Fatalf("stdout %q", stdout)
	}
	msgs := storedMessages(t, dir, id)
	if len(msgs) != 2 || msgs[0].Text() != "hello" || msgs[1].Role != session.RoleAssistant || !strings.Contains(stdout, msgs[1].Text()) {
		t.Fatalf("stored %+v", msgs)
	}
	// Switching prints and stores the event; the prefix of the ID is enough.
	stdout, stderr, code = scrim(t, "", "--store", dir, "send", id[:6], "--model", "demo/trusted", "again")
	if code != exitOK || !strings.HasPrefix(stdout, "— model switched from demo/limited (tier untrusted) to demo/trusted (tier untrusted)\n") {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	// Without --model the session's last model is used.
	stdout, _, code = scrim(t, "", "--store", dir, "send", id, "third")
	if code != exitOK || !strings.Contains(stdout, "demo/trusted here.") || strings.Contains(stdout, "switched") {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
}

// The same as a separate process, the way a user runs it.
func TestSendDemoAsProcess(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir, id := newStoreWithSession(t)
	cmd := scrimProcess(t, "--store", dir, "send", id, "--model", "demo/limited", "hello")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if !strings.HasPrefix(out.String(), "demo/limited here.") || errb.Len() != 0 {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}
}

func TestSendPromptFromStdin(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir, id := newStoreWithSession(t)
	_, stderr, code := scrim(t, "line one\nline two\n", "--store", dir, "send", id, "--model", "demo/x", "-")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if msgs := storedMessages(t, dir, id); msgs[0].Text() != "line one\nline two\n" {
		t.Fatalf("prompt %q", msgs[0].Text())
	}
}

func TestSendErrors(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir, id := newStoreWithSession(t)
	bad := filepath.Join(t.TempDir(), "providers.toml")
	if err := os.WriteFile(bad, []byte("[providers.x]\nbase_url = \"http://h/v1\"\nkey = \"sk\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no prompt", []string{"send", id, "--model", "demo/x"}, exitUsage, "no prompt"},
		{"no model yet", []string{"send", id, "hi"}, exitUsage, "has no model yet"},
		{"prompt and continue", []string{"send", id, "--model", "demo/x", "--continue", "hi"}, exitUsage, "--continue"},
		{"unknown session", []string{"send", "ffffffffff", "--model", "demo/x", "hi"}, exitError, "no session matches"},
		{"unknown provider", []string{"send", id, "--model", "nowhere/x", "hi"}, exitError, `unknown provider "nowhere"`},
		{"missing key", []string{"send", id, "--model", "openai/gpt-4o", "hi"}, exitError, "set OPENAI_API_KEY"},
		{"bad providers file", []string{"--providers", bad, "send", id, "--model", "demo/x", "hi"}, exitError, "providers.toml:3: unknown key"},
	}
	setenv(t, "OPENAI_API_KEY", "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := scrim(t, "", append([]string{"--store", dir}, c.args...)...)
			if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit %d and one line with %q", code, stderr, c.code, c.want)
			}
		})
	}
	if n := len(storedMessages(t, dir, id)); n != 0 {
		t.Fatalf("%d messages stored by failed sends", n)
	}
}

// A provider error is exit 1 with one line; the prompt stays stored. Never exit 3.
func TestSendProviderErrorKeepsPrompt(t *testing.T) {
	t.Parallel()
	isolate(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"slow down"}}`)
	}))
	defer srv.Close()
	provs := filepath.Join(t.TempDir(), "providers.toml")
	if err := os.WriteFile(provs, []byte(fmt.Sprintf("[providers.gw]\nbase_url = %q\n", srv.URL+"/v1")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, id := newStoreWithSession(t)
	_, stderr, code := scrim(t, "", "--store", dir, "--providers", provs, "send", id, "--model", "gw/m", "hello")
	if code != exitError || !strings.Contains(stderr, `provider "gw" is rate limiting (429 Too Many Requests)`) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	if msgs := storedMessages(t, dir, id); len(msgs) != 1 || msgs[0].Text() != "hello" {
		t.Fatalf("stored %+v", msgs)
	}
}

// Model text cannot drive the terminal.
func TestSendOutputIsInert(t *testing.T) {
	t.Parallel()
	isolate(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := json.Marshal(map[string]any{"id": "x", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": "hi \x1b]0;pwned\x07 there"}}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		fmt.Fprint(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	provs := filepath.Join(t.TempDir(), "providers.toml")
	if err := os.WriteFile(provs, []byte(fmt.Sprintf("[providers.gw]\nbase_url = %q\n", srv.URL+"/v1")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, id := newStoreWithSession(t)
	stdout, stderr, code := scrim(t, "", "--store", dir, "--providers", provs, "send", id, "--model", "gw/m", "hello")
	if code != exitOK || strings.ContainsRune(stdout, 0x1b) || !strings.Contains(stdout, "hi ␛]0;pwned␇ there") {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

// Tool activity is printed in order with the answer; a denied read is a
// result for the model, not exit 3.
func TestSendPrintsToolActivity(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir, id := newStoreWithSession(t)
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := st.Get(id)
	st.Close()
	if err := os.WriteFile(filepath.Join(h.WorkDir, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	canonWD, err := filepath.EvalSymlinks(h.WorkDir) // read tags content with the real path
	if err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte(fmt.Sprintf(`default_tier = "none"
[tiers.trusted]
label = "trusted"
read = ["%s/**"]
[tiers.none]
label = "none"
read = []
[[models]]
match = "demo/trusted"
tier = "trusted"
`, h.WorkDir)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		model string
		want  []string
	}{
		{"demo/trusted", []string{"Reading notes.txt.\n", "[tool read {\"path\":\"notes.txt\"}]\n", "[tool read ok: 2 lines from " + filepath.Join(canonWD, "notes.txt") + "]\n", "The tool returned 2 lines"}},
		{"demo/limited", []string{"— model switched from demo/trusted (tier trusted) to demo/limited (tier none)\n", "[tool read denied: read denied: trust tier \"none\" does not have read access to " + filepath.Join(h.WorkDir, "notes.txt") + "]\n", "The tool returned an error: read denied"}},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			stdout, stderr, code := scrim(t, "", "--store", dir, "--policy", pol, "send", id, "--model", c.model, "read notes.txt")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			at := 0
			for _, w := range c.want {
				i := strings.Index(stdout[at:], w)
				if i < 0 {
					t.Fatalf("stdout lacks %q after offset %d:\n%s", w, at, stdout)
				}
				at += i + len(w)
			}
		})
	}
}
