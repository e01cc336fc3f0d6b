package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain lets a test run the real scrim binary as a separate process: the
// test binary re-executes itself with SCRIM_TEST_MAIN=1 and behaves as scrim.
// Lock, crash and signal tests need a real second process.
func TestMain(m *testing.M) {
	switch os.Getenv("SCRIM_TEST_MAIN") {
	case "1":
		os.Exit(Main(os.Args[1:], OSEnv()))
	case "commands":
		runCommands(os.Args[1:])
		os.Exit(0)
	}
	code := m.Run()
	if plain.dir != "" {
		os.RemoveAll(plain.dir)
	}
	os.Exit(code)
}

// commandResult is one command's outcome, as runCommands writes it.
type commandResult struct {
	Code           int
	Stdout, Stderr string
}

// runCommands runs the commands in args, separated by "::", one after the
// other, each a fresh Main with the process's environment, and writes each
// one's commandResult to stdout as a JSON line.
func runCommands(args []string) {
	enc := json.NewEncoder(os.Stdout)
	for len(args) > 0 {
		cmd := args
		if i := slices.Index(args, "::"); i >= 0 {
			cmd, args = args[:i], args[i+1:]
		} else {
			args = nil
		}
		var out, errb bytes.Buffer
		env := OSEnv()
		env.Stdin, env.Stdout, env.Stderr = strings.NewReader(""), &out, &errb
		code := Main(cmd, env)
		enc.Encode(commandResult{code, out.String(), errb.String()})
	}
}

// A test's environment: what scrim sees as its environment variables when
// the test runs it, in-process (scrim) or as a process (scrimProcess). Each
// test has its own, kept away from the user's config, data and variables (a
// fresh home folder, nothing else set), so that tests run in parallel
// without t.Setenv. A subtest starts with a copy of its parent's.
var (
	envsMu sync.Mutex
	envs   = map[string]map[string]string{} // by test name
)

// testEnv returns tb's environment, made on first use.
func testEnv(tb testing.TB) map[string]string {
	tb.Helper()
	envsMu.Lock()
	defer envsMu.Unlock()
	name := tb.Name()
	if e, ok := envs[name]; ok {
		return e
	}
	var e map[string]string
	for parent := name; e == nil && strings.Contains(parent, "/"); {
		parent = parent[:strings.LastIndexByte(parent, '/')]
		if pe, ok := envs[parent]; ok {
			e = maps.Clone(pe)
		}
	}
	if e == nil {
		home := tb.TempDir()
		e = map[string]string{
			"HOME":            home,
			"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
			"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		}
	}
	envs[name] = e
	tb.Cleanup(func() {
		envsMu.Lock()
		delete(envs, name)
		envsMu.Unlock()
	})
	return e
}

// setenv sets key in tb's environment (t.Setenv's counterpart).
func setenv(tb testing.TB, key, value string) {
	tb.Helper()
	e := testEnv(tb)
	envsMu.Lock()
	e[key] = value
	envsMu.Unlock()
}

// isolate gives t its own environment (every test has one anyway: this
// makes the home folder before the test needs its path) and lets t run in
// parallel with the others.
func isolate(t *testing.T) {
	t.Helper()
	testEnv(t)
}

// lookup is tb's environment as Env.LookupEnv reads it.
func lookup(tb testing.TB) func(string) (string, bool) {
	e := testEnv(tb)
	return func(k string) (string, bool) {
		envsMu.Lock()
		defer envsMu.Unlock()
		v, ok := e[k]
		return v, ok
	}
}

// scrim runs the CLI in-process and returns its output and exit code.
func scrim(t testing.TB, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, Env{LookupEnv: lookup(t), Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), code
}

// scrimProcess returns a command that runs scrim as a separate process, in
// the test's environment: the process's own (PATH and the like) without
// what scrim reads from it (home and config folders, scrim's variables,
// API keys), then the test's.
func scrimProcess(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	e := testEnv(t)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{"SCRIM_TEST_MAIN=1"}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !scrimReads(k) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	envsMu.Lock()
	for k, v := range e {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	envsMu.Unlock()
	return cmd
}

// scrimReads reports whether scrim's behaviour depends on the environment
// variable k.
func scrimReads(k string) bool {
	return k == "HOME" || k == "GOMEMLIMIT" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "SCRIM_") ||
		strings.HasSuffix(k, "_API_KEY") || strings.HasPrefix(k, "OPENAI_")
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	t.Parallel()
	isolate(t)
	_, stderr, code := scrim(t, "", "frobnicate")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d (stderr %q)", code, exitUsage, stderr)
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "scrim: ") {
		t.Fatalf("want one line starting with scrim:, got %q", stderr)
	}
}

// getenv is the variable key of tb's environment.
func getenv(tb testing.TB, key string) string {
	v, _ := lookup(tb)(key)
	return v
}

// startTUI starts scrim's TUI as a process (scrimProcess) with args: keys
// go to it through a pipe, kept open (the TUI waits for keys), and its
// frames are collected. It is killed when the test ends, if it has not.
func startTUI(t *testing.T, args ...string) (cmd *exec.Cmd, keys io.WriteCloser, frames *syncBuffer) {
	t.Helper()
	cmd = scrimProcess(t, args...)
	keys, err := cmd.StdinPipe()
	must(t, err)
	frames = &syncBuffer{}
	cmd.Stdout = frames
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, keys, frames
}

// waitFor waits (a generous bound, so a loaded machine is not a failure)
// until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
