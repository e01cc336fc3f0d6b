package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadingMakesNoStore: a command that only reads a store, given a
// folder where there is none (a mistyped --store), makes nothing there:
// sessions says there is no store, the others fail with one line that says
// which folder and how one is made. new makes one.
func TestReadingMakesNoStore(t *testing.T) {
	isolate(t)
	dir := filepath.Join(t.TempDir(), "mistyped")
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"sessions"}, exitOK, "No sessions yet in " + dir + " (no session store there yet)."},
		{[]string{"sessions", "--format", "json"}, exitOK, "[]\n"},
		{[]string{"sessions", "--model", "openai/x"}, exitOK, "no session store there yet"},
		{[]string{"show", "abc"}, exitError, ""},
		{[]string{"redact", "abc", "--model", "openai/x"}, exitError, ""},
		{[]string{"search", "token"}, exitError, ""},
		{[]string{"export", "abc"}, exitError, ""},
		{[]string{"rm", "abc"}, exitError, ""},
	} {
		out, stderr, code := scrim(t, "", append([]string{"--store", dir}, tc.args...)...)
		if code != tc.code || !strings.Contains(out, tc.out) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, stderr, tc.code, tc.out)
		}
		if tc.code != exitOK && stderr != "scrim: no session store at "+dir+": nothing was imported or made there (check --store and $SCRIM_STORE; scrim import, scrim new or scrim itself make one)\n" {
			t.Errorf("%q: stderr %q", tc.args, stderr)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("%q made %s (%v)", tc.args, dir, err)
		}
	}
	if _, stderr, code := scrim(t, "", "--store", dir, "new", "--title", "first"); code != exitOK {
		t.Fatalf("new: exit %d: %s", code, stderr)
	}
	if out, _, _ := scrim(t, "", "--store", dir, "sessions"); !strings.Contains(out, "first") {
		t.Fatalf("the store new made does not list its session:\n%s", out)
	}
}
