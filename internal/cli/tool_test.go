package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// cliSecret has no hex digits after its prefix: were table blocks
// compressed (Snappy, Badger's default, off in scrim's stores since
// 2026-12-01), a four-byte run of it that also stood in a random hex ID
// earlier in a block would be stored as a back reference, hiding it from
// storeBytesContain.
const cliSecret = "sk-cli-qwzxjvkmpy"

// toolFixture is a store, a policy file (policytest.Tiers) and a work tree
// with a session whose working folder is the tree.
type toolFixture struct {
	store, policy, work, session string
}

func newToolFixture(t *testing.T) toolFixture {
	t.Helper()
	isolate(t)
	work, err := policy.Canonical(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"secrets/k":   cliSecret + "\n",
		"src/main.go": "package main // key\n",
		"src/util.go": "package main\n",
		"README.md":   "key facts\n",
	} {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := toolFixture{store: t.TempDir(), policy: filepath.Join(t.TempDir(), "policy.toml"), work: work}
	if err := os.WriteFile(f.policy, []byte(policytest.Tiers), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := session.Open(f.store)
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.Create(session.Header{Title: "tools", WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	f.session = h.ID
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f toolFixture) args(tool, model string, rest ...string) []string {
	return append([]string{"--store", f.store, "--policy", f.policy, "tool", tool, "--session", f.session, "--model", model}, rest...)
}

func (f toolFixture) messages(t *testing.T) []session.Message {
	t.Helper()
	st, err := session.Open(f.store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, bad, err := st.Messages(f.session)
	if err != nil || len(bad) > 0 {
		t.Fatalf("load: %v %v", bad, err)
	}
	return msgs
}

// storeBytesContain reports whether any file of the store holds s.
func storeBytesContain(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(s)) {
			found = true
		}
		return nil
	})
	return found
}

func TestToolCLIAppendsCallAndResult(t *testing.T) {
	t.Parallel()
	f := newToolFixture(t)
	stdout, stderr, code := scrim(t, "", f.args("read", "trusted/x", "src/../src/main.go")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	path := filepath.Join(f.work, "src", "main.go")
	for _, want := range []string{"── from " + path + "\n  │      1\tpackage main // key\n", "sourcePaths: " + path + "\n"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("stdout %q lacks %q", stdout, want)
		}
	}
	msgs := f.messages(t)
	if len(msgs) != 2 {
		t.Fatalf("%d messages stored, want the call and its result", len(msgs))
	}
	call, res := msgs[0], msgs[1]
	if call.Role != session.RoleAssistant || call.Model != "trusted/x" || len(call.Parts) != 1 {
		t.Fatalf("call message %+v", call)
	}
	cp := call.Parts[0]
	if cp.Kind != session.PartToolCall || cp.Name != "read" || cp.CallID == "" || string(cp.Input) != `{"path":"src/../src/main.go"}` {
		t.Fatalf("tool_call part %+v (input %s)", cp, cp.Input)
	}
	if res.Role != session.RoleTool || res.ToolCallID != cp.CallID || res.Tool != "read" || res.Model != "trusted/x" {
		t.Fatalf("result %+v", res)
	}
	if !slices.Equal(res.Meta.SourcePaths, []string{path}) {
		t.Fatalf("stored sourcePaths %q", res.Meta.SourcePaths)
	}

	t.Run("json prints the stored shape", func(t *testing.T) {
		out, stderr, code := scrim(t, "", f.args("grep", "trusted/x", "key", "--format", "json")...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var printed session.Message
		if err := json.Unmarshal([]byte(out), &printed); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		stored := f.messages(t)[3]
		if !reflect.DeepEqual(printed.Parts, stored.Parts) || !slices.Equal(printed.Meta.SourcePaths, stored.Meta.SourcePaths) || printed.Seq != stored.Seq {
			t.Fatalf("printed %+v\nstored %+v", printed, stored)
		}
		want := []string{filepath.Join(f.work, "README.md"), path}
		if !slices.Equal(stored.Meta.SourcePaths, want) {
			t.Fatalf("grep sourcePaths %q, want %q", stored.Meta.SourcePaths, want)
		}
	})
}

func TestToolCLIDeniedReadExits3AndStoresNoContent(t *testing.T) {
	t.Parallel()
	f := newToolFixture(t)
	stdout, stderr, code := scrim(t, "", f.args("read", "limited/x", "secrets/k")...)
	want := `read denied: trust tier "limited" does not have read access to ` + filepath.Join(f.work, "secrets", "k")
	if code != exitRefused || !strings.Contains(stderr, want) || !strings.Contains(stdout, want) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// grep over the whole tree skips secrets/ and says so.
	stdout, stderr, code = scrim(t, "", f.args("grep", "limited/x", "sk-|key")...)
	if code != exitOK || !strings.Contains(stdout, `[skipped 1 file that trust tier "limited" may not read]`) || strings.Contains(stdout, "secrets") {
		t.Fatalf("grep: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	msgs := f.messages(t)
	if len(msgs) != 4 || !msgs[1].IsError || msgs[1].Meta.SourcePaths != nil {
		t.Fatalf("stored %d messages; denied result %+v", len(msgs), msgs[1])
	}
	for _, m := range msgs {
		raw, _ := json.Marshal(m)
		if strings.Contains(string(raw), cliSecret) || slices.ContainsFunc(m.Meta.SourcePaths, func(p string) bool { return strings.Contains(p, "secrets") }) {
			t.Fatalf("secret content reached the store: %s", raw)
		}
	}
	if storeBytesContain(t, f.store, cliSecret) {
		t.Fatal("the secret is in the store's files")
	}

	t.Run("control: a trusted read does put it in the store's files", func(t *testing.T) {
		if _, stderr, code := scrim(t, "", f.args("read", "trusted/x", "secrets/k")...); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !storeBytesContain(t, f.store, cliSecret) {
			t.Fatal("the byte scan cannot see stored content, so it proves nothing")
		}
	})
}

func TestToolCLIDeniedReadExits3AsAProcess(t *testing.T) {
	t.Parallel()
	f := newToolFixture(t)
	cmd := scrimProcess(t, f.args("read", "limited/x", "secrets/k")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitRefused {
		t.Fatalf("want exit 3, got %v (stderr %q)", err, stderr.String())
	}
	if lines := strings.Count(strings.TrimSpace(stderr.String()), "\n"); lines != 0 {
		t.Fatalf("stderr is not one line: %q", stderr.String())
	}
}

func TestToolCLIArgumentsMapToInputs(t *testing.T) {
	t.Parallel()
	f := newToolFixture(t)
	for _, tc := range []struct {
		args  []string
		input string
		out   string
	}{
		{[]string{"read", "trusted/x", "README.md", "--offset", "1", "--limit", "1"}, `{"limit":1,"offset":1,"path":"README.md"}`, "     1\tkey facts"},
		{[]string{"grep", "trusted/x", "PACKAGE", "src", "-i", "--glob", "util*", "--max-matches", "5"}, `{"glob":"util*","ignore_case":true,"max_matches":5,"path":"src","pattern":"PACKAGE"}`, "util.go:1:package main"},
		{[]string{"glob", "trusted/x", "*.go", "src", "--content"}, `{"content":true,"path":"src","pattern":"*.go"}`, "==> " + filepath.Join(f.work, "src", "util.go") + " <=="},
		{[]string{"bash", "trusted/x", "--timeout", "5s", "--", "ls", "-1", "src"}, `{"command":"ls -1 src","timeout":"5s"}`, "  │ main.go\n  │ util.go\n  │ [exit code 0]"},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			stdout, stderr, code := scrim(t, "", f.args(tc.args[0], tc.args[1], tc.args[2:]...)...)
			if code != exitOK || !strings.Contains(stdout, tc.out) {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			msgs := f.messages(t)
			if got := string(msgs[len(msgs)-2].Parts[0].Input); got != tc.input {
				t.Fatalf("input %s, want %s", got, tc.input)
			}
		})
	}
}

func TestToolCLIErrors(t *testing.T) {
	t.Parallel()
	f := newToolFixture(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no model", []string{"--store", f.store, "tool", "read", "--session", f.session, "x"}, exitUsage, "needs --session S and --model M"},
		{"unknown session", []string{"--store", f.store, "tool", "read", "--session", "zzzz", "--model", "m/x", "x"}, exitError, `no session matches "zzzz"`},
		{"bad format", append(f.args("read", "trusted/x", "README.md"), "--format", "yaml"), exitUsage, "--format must be text or json"},
		{"missing file", f.args("read", "trusted/x", "nope.txt"), exitError, "does not exist"},
		{"no arguments", f.args("read", "trusted/x"), exitUsage, "accepts 1 arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := scrim(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}
