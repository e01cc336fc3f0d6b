//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scrim-dev/scrim/runner"
)

// ctl is config text that tries to drive the terminal: an OSC title and a
// hyperlink, CSI clear, colour and cursor-up, a C1 CSI, CR, backspace, BEL,
// DEL, a bidi override and isolate, zero-width characters and a BOM. It has
// no '/' (a provider name and a file name may not hold one) and no space.
const ctl = "\x1b]0;cfg-title\x07\x1b]8;;evil\x1b\\ln\x1b]8;;\x1b\\\x1b[2J\x1b[31m\x1b[1A\u009b2J" +
	"\rCR\bBS\x7fDEL\u202erevo\u202c\u2066iso\u2069zw\u200b\u200d\u2060\ufeff\u00ad"

// ctlGlob is the same kinds of text without glob syntax ([ ] { } * ? \), so
// that a policy pattern or a literal model rule holding it stays valid: ESC c
// resets the terminal, ESC 7/8 move the cursor.
const ctlGlob = "\x1bc\x1b7\x1b8\x07\u009b2J\rCR\bBS\x7fDEL\u202erevo\u202c\u2066iso\u2069zw\u200b\ufeff"

// tomlString quotes s as a TOML basic string, escaping everything but
// printable ASCII: TOML forbids raw control characters in strings, and the
// escapes keep this file's bytes plain.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, "\\U%08X", r)
		default:
			fmt.Fprintf(&b, "\\u%04X", r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// evilRule matches the models of provider "evil"+ctl: a lone ']' is no glob
// syntax, so it may hold the OSC title sequence ctl starts with.
const evilRule = "evil\x1b]0;cfg-title\x07*/**"

// hostilePolicy is a valid policy with ctl in every place the loader takes
// free text: read and deny patterns and model rules. Tier names and labels
// must be printable, so they are hostile in badPolicy instead.
func hostilePolicy() string {
	return `default_tier = "cloud"

[tiers.cloud]
label = "cloud"
read  = ["/**", ` + tomlString("/srv/"+ctlGlob+"/**") + `]
deny  = [` + tomlString("**/*"+ctlGlob+"*") + `, ` + tomlString("~/"+ctlGlob) + `]
tools = ["read", "grep", "glob"]

[tiers.local]
label = "local"
read  = ["/**"]

[[models]]
match = ` + tomlString("demo/"+ctlGlob) + `
tier  = "local"

[[models]]
match = ` + tomlString("osc\x1b]0;rule-title\x07/**") + `
tier  = "local"

[[models]]
match = ` + tomlString(evilRule) + `
tier  = "cloud"
`
}

// badPolicy is rejected with several problems, each quoting hostile text:
// a tier name and a label with control characters, and rules naming them.
func badPolicy() string {
	return `default_tier = ` + tomlString(ctl) + `

[tiers.` + tomlString(ctl) + `]
label = ` + tomlString(ctl) + `
read  = []

[tiers.ok]
label = ` + tomlString("ok"+ctl) + `
read  = [` + tomlString("/a\x1b[2J/**") + `]

[[models]]
match = ` + tomlString("x"+ctl+"/**") + `
tier  = ` + tomlString("nope"+ctl) + `
`
}

// hostileProviders configures a provider and models whose names hold ctl,
// a header value with bidi and zero-width characters (the only ones a header
// may hold) and a base URL with them in its host.
func hostileProviders(baseURL string) string {
	return `[providers.` + tomlString("evil"+ctl) + `]
base_url    = ` + tomlString(baseURL) + `
api_key_env = "SCRIM_CTL_KEY"
headers     = { "X-Team" = ` + tomlString("team\u202erevo\u200bzw\ufeff") + ` }
models      = [` + tomlString("m"+ctl) + `, ` + tomlString("a\x1b]0;TITLE\x07") + `]

[providers.bidi]
base_url = ` + tomlString("http://bidi\u202eevil\u200b.invalid/v1") + `
models   = [` + tomlString("b"+ctl) + `]
`
}

// hostileTranscript is a small Claude Code transcript with ctl in its title,
// working folder, model, texts, tool name, call ID and tool result.
func hostileTranscript(t *testing.T, ws string) string {
	t.Helper()
	var b bytes.Buffer
	for _, line := range []map[string]any{
		{"type": "summary", "summary": "title " + ctl, "leafUuid": "a1"},
		{"type": "user", "cwd": ws, "sessionId": "s-ctl", "uuid": "u1", "timestamp": "2025-06-01T10:00:00.000Z",
			"message": map[string]any{"role": "user", "content": "hello " + ctl}},
		{"type": "assistant", "cwd": ws, "sessionId": "s-ctl", "uuid": "a1", "parentUuid": "u1", "timestamp": "2025-06-01T10:00:01.000Z",
			"message": map[string]any{"role": "assistant", "model": "claude" + ctl, "content": []any{
				map[string]any{"type": "text", "text": "answer " + ctl},
				map[string]any{"type": "tool_use", "id": "toolu_" + ctl, "name": "Read" + ctl,
					"input": map[string]any{"file_path": filepath.Join(ws, "f"+ctl+".txt")}},
			}}},
		{"type": "user", "cwd": ws, "sessionId": "s-ctl", "uuid": "u2", "parentUuid": "a1", "timestamp": "2025-06-01T10:00:02.000Z",
			"message": map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_" + ctl, "content": "result " + ctl},
			}}},
	} {
		j, err := json.Marshal(line)
		must(t, err)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// ctlProvider is an OpenAI-compatible server whose first answer asks for a
// tool with a hostile name and whose next answer is plain text.
func ctlProvider(t *testing.T) string {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1)%2 == 1 {
			streamAnswer(w, "", [2]string{"read" + ctl, `{"path":"x"}`})
			return
		}
		streamAnswer(w, "done")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// streamAnswer writes one streamed chat-completions answer: text, then tool calls.
func streamAnswer(w http.ResponseWriter, text string, calls ...[2]string) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if text != "" {
		chunk(map[string]any{"role": "assistant", "content": text}, nil)
	}
	for i, c := range calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": c[0], "arguments": c[1]}}}}, nil)
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// runProcess runs scrim as a separate process, so the check sees every byte
// it writes to its real stdout and stderr, whoever writes them: under the
// race detector, the test binary built without it (plainProcess), since
// what is checked is the bytes: with it, the 40 processes of
// TestConfigTextIsInert took 38 s of CI's internal/cli, 11 without.
func runProcess(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := plainProcess(t, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("scrim %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// TestConfigTextIsInert builds hostile text into every file scrim reads (a
// policy, a bad policy, providers.toml, a bad providers.toml, an imported
// transcript, session titles, file names) and runs every command with text
// output: none may put a control byte, an escape sequence, a bidi control or
// a zero-width character on the terminal. JSON output keeps the strings as
// they are.
func TestConfigTextIsInert(t *testing.T) {
	t.Parallel()
	isolate(t)
	setenv(t, "SCRIM_CTL_KEY", "k")
	root := t.TempDir()
	// Files live in a folder whose name is hostile too: error messages and
	// `policy check` name the file.
	cfg := filepath.Join(root, "cfg"+ctl)
	ws := filepath.Join(root, "ws")
	store := filepath.Join(root, "store")
	mkdirs(t, cfg)
	mkdirs(t, ws)
	write := func(path, text string) string {
		t.Helper()
		must(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	pol := write(filepath.Join(cfg, "policy.toml"), hostilePolicy())
	bad := write(filepath.Join(cfg, "bad.toml"), badPolicy())
	rawESC := write(filepath.Join(cfg, "raw.toml"), "default_tier = \"a\x1b]0;raw\x07\"\n")
	provs := write(filepath.Join(cfg, "providers.toml"), hostileProviders(ctlProvider(t)))
	badProvs := write(filepath.Join(cfg, "bad-providers.toml"),
		"[providers.x]\nbase_url = "+tomlString("http://h/"+ctl)+"\n[providers."+tomlString("a/"+ctl)+"]\nbase_url = \"http://h\"\n")
	transcript := write(filepath.Join(cfg, "t"+ctl+".jsonl"), hostileTranscript(t, ws))
	file := write(filepath.Join(ws, "f"+ctl+".txt"), "plain content\n")

	demoModel := "demo/" + ctlGlob
	evilModel := "evil" + ctl + "/m" + ctl
	global := []string{"--store", store, "--policy", pol, "--providers", provs}

	var outs []output
	// do runs one command; want is the exit code it must have, so that a
	// command that fails early cannot pass by printing nothing.
	do := func(what string, want int, args ...string) (string, string) {
		t.Helper()
		out, errOut, code := runProcess(t, "", append(append([]string{}, global...), args...)...)
		if code != want {
			t.Errorf("%s: exit %d, want %d\nstdout %.600q\nstderr %.600q", what, code, want, out, errOut)
		}
		if want != exitOK && strings.TrimSpace(errOut) == "" {
			t.Errorf("%s: exit %d with nothing on stderr", what, code)
		}
		outs = append(outs, output{what, out, errOut})
		return out, errOut
	}

	// models and policy, from hostile config files.
	out, _ := do("models", exitOK, "models")
	for _, want := range []string{"evil␛]0;cfg-title␇", "a␛]0;TITLE␇", "demo/␛c"} {
		if !strings.Contains(out, want) {
			t.Errorf("models does not show %q (made visible, not dropped): %.600q", want, out)
		}
	}
	do("models --provider", exitOK, "models", "--provider", "evil"+ctl)
	do("models --provider (none listed)", exitError, "models", "--provider", "none"+ctl)
	do("models (bad providers.toml)", exitError, "--providers", badProvs, "models")
	do("models (providers.toml that is a folder)", exitError, "--providers", cfg, "models")
	out, _ = do("policy check", exitOK, "policy", "check")
	if !strings.Contains(out, "osc␛]0;rule-title␇/**") {
		t.Errorf("policy check does not show the hostile model rule: %q", out)
	}
	do("policy check (bad policy)", exitError, "--policy", bad, "policy", "check")
	do("policy check (raw ESC in the file)", exitError, "--policy", rawESC, "policy", "check")
	do("policy check (missing policy)", exitError, "--policy", filepath.Join(cfg, "none"+ctl+".toml"), "policy", "check")
	do("policy explain (literal rule)", exitOK, "policy", "explain", "--model", demoModel, file, filepath.Join(root, "srv"+ctl))
	do("policy explain (glob rule)", exitOK, "policy", "explain", "--model", evilModel, file)
	do("policy explain (default tier)", exitOK, "policy", "explain", "--model", "x"+ctl+"/y"+ctl, "/srv/"+ctlGlob+"/a")
	do("policy explain (no path)", exitUsage, "policy", "explain", "--model", evilModel)
	do("policy explain (bad policy)", exitError, "--policy", bad, "policy", "explain", "--model", evilModel, file)

	// Sessions with hostile stored text: an import, a title, tool results.
	out, _ = do("import", exitOK, "import", "claude", transcript)
	imported := sessionRE.FindStringSubmatch(out)
	if imported == nil {
		t.Fatalf("import printed no session: %q", out)
	}
	do("import (again, unchanged)", exitOK, "import", "claude", transcript)
	do("import (missing file)", exitError, "import", "claude", filepath.Join(cfg, "none"+ctl+".jsonl"))
	// A title given on the command line must be one line: all of ctl but CR.
	title := strings.ReplaceAll(ctl, "\r", "")
	out, _ = do("new", exitOK, "new", "--title", "new "+title, "--workdir", ws)
	id := strings.TrimSpace(out)
	if id == "" {
		t.Fatal("new printed no session ID")
	}
	do("new (title with CR)", exitUsage, "new", "--title", "new "+ctl)
	do("new (bad workdir)", exitUsage, "new", "--title", "t", "--workdir", filepath.Join(cfg, "none"+ctl))
	for _, tool := range [][]string{
		{"read", file},
		{"grep", "content", ws},
		{"grep", "(", ws}, // a bad regular expression: an error result
		{"glob", "*", ws, "--content"},
		{"read", filepath.Join(ws, "none"+ctl)},
	} {
		want := exitOK
		if tool[1] == "(" || strings.Contains(tool[1], "none") {
			want = exitError
		}
		do("tool "+tool[0], want, append([]string{"tool", "--session", id, "--model", demoModel}, tool...)...)
	}
	do("tool (model of an unknown provider)", exitOK, "tool", "--session", id, "--model", evilModel, "read", file)
	do("rename", exitOK, "rename", imported[1], "renamed "+title)
	do("sessions", exitOK, "sessions")
	do("show (imported)", exitOK, "show", imported[1])
	do("show (tools)", exitOK, "show", id)
	do("show (unknown session)", exitError, "show", "ffff"+ctl)
	do("redact (literal rule)", exitOK, "redact", imported[1], "--model", demoModel)
	do("redact (glob rule)", exitOK, "redact", id, "--model", evilModel)

	// send: the model-switch line names both models; a hostile provider asks
	// for a tool with a hostile name; failures name the provider and URL.
	do("send (demo, switch from the tools' model)", exitOK, "send", id, "--model", demoModel, "hello")
	out, _ = do("send (hostile provider and tool name)", exitOK, "send", id, "--model", evilModel, "hello")
	for _, want := range []string{"— model switched from demo/␛c", "[tool read␛]0;cfg-title␇"} {
		if !strings.Contains(out, want) {
			t.Errorf("send does not show %q: %.600q", want, out)
		}
	}
	do("send (unreachable bidi host)", exitError, "send", id, "--model", "bidi/b"+ctl, "hello")
	do("send (unknown provider)", exitError, "send", id, "--model", "nope"+ctl+"/m", "hello")
	do("send (not provider/model)", exitError, "send", id, "--model", "m"+ctl, "hello")
	do("show (after send)", exitOK, "show", id)
	do("rm", exitOK, "rm", imported[1])

	// demo --keep names the folder it keeps, which lies in $TMPDIR. Its
	// stdout is the TUI, whose escape sequences are its own drawing; q quits.
	t.Run("demo --keep", func(t *testing.T) {
		tmp := filepath.Join(root, "tmp"+ctl)
		mkdirs(t, tmp)
		setenv(t, "TMPDIR", tmp)
		_, errOut, code := runProcess(t, "q", "demo", "--keep")
		// A notice, not an error: it does not start with "scrim:".
		if code != exitOK || !strings.Contains(errOut, "demo kept in") || strings.Contains(errOut, "scrim: demo kept") {
			t.Fatalf("demo --keep: exit %d, stderr %q", code, errOut)
		}
		checkInert(t, "demo --keep stderr", errOut)
	})

	for _, o := range outs {
		checkInert(t, o.what+" stdout", o.stdout)
		checkInert(t, o.what+" stderr", o.stderr)
	}

	// JSON stays JSON, with the strings exactly as configured.
	out, _, code := runProcess(t, "", append(global, "models", "--format", "json")...)
	var models []runner.ModelInfo
	if err := json.Unmarshal([]byte(out), &models); code != exitOK || err != nil {
		t.Fatalf("models --format json: exit %d, %v: %.600q", code, err, out)
	}
	found := map[string]bool{}
	for _, m := range models {
		found[m.ID] = true
	}
	for _, want := range []string{evilModel, "evil" + ctl + "/a\x1b]0;TITLE\x07", demoModel} {
		if !found[want] {
			t.Errorf("models --format json lacks %q", want)
		}
	}
	out, _, code = runProcess(t, "", append(global, "policy", "explain", "--format", "json", "--model", evilModel, file)...)
	var explains []explained
	if err := json.Unmarshal([]byte(out), &explains); code != exitOK || err != nil || len(explains) != 1 {
		t.Fatalf("policy explain --format json: exit %d, %v: %q", code, err, out)
	}
	if e := explains[0]; e.Model != evilModel || e.Path != file || e.Rule != evilRule {
		t.Errorf("policy explain --format json changed the strings: model %q, path %q, rule %q", e.Model, e.Path, e.Rule)
	}
}
