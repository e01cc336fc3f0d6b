package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets a test run the real scrim binary as a separate process: the
// test binary re-executes itself with SCRIM_TEST_MAIN=1 and behaves as scrim.
// Lock, crash and signal tests need a real second process.
func TestMain(m *testing.M) {
	if os.Getenv("SCRIM_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// isolate keeps a test away from the user's own config, data and env.
func isolate(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home+"/.config")
	t.Setenv("XDG_DATA_HOME", home+"/.local/share")
	t.Setenv("SCRIM_POLICY", "")
	t.Setenv("SCRIM_STORE", "")
}

// scrim runs the CLI in-process and returns its output and exit code.
func scrim(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// scrimProcess returns a command that runs scrim as a separate process.
func scrimProcess(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SCRIM_TEST_MAIN=1")
	return cmd
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	isolate(t)
	_, stderr, code := scrim(t, "", "frobnicate")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d (stderr %q)", code, exitUsage, stderr)
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "scrim: ") {
		t.Fatalf("want one line starting with scrim:, got %q", stderr)
	}
}
