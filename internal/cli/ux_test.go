package cli

import (
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// scrim --version and scrim version say the same, on one line, with the Go
// version the build info records.
func TestVersion(t *testing.T) {
	t.Parallel()
	flag, _, code := scrim(t, "", "--version")
	cmd, _, code2 := scrim(t, "", "version")
	if code != exitOK || code2 != exitOK || flag != cmd || !strings.HasPrefix(flag, "scrim ") ||
		!strings.HasSuffix(flag, " "+runtime.Version()+"\n") || strings.Count(flag, "\n") != 1 {
		t.Fatalf("--version %q (exit %d), version %q (exit %d)", flag, code, cmd, code2)
	}
}

// A mistyped command is a usage error that names the nearest commands.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sesions"}, `unknown command "sesions" for "scrim"; did you mean "sessions"?`},
		{[]string{"polcy", "check"}, `did you mean "policy"?`},
		{[]string{"tool", "reed"}, `unknown command "reed" for "scrim tool"; it takes one of: bash, glob, grep, read, webfetch`},
	} {
		_, stderr, code := scrim(t, "", c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, stderr, c.want)
		}
	}
	if _, stderr, _ := scrim(t, "", "frobnicate"); strings.Contains(stderr, "did you mean") {
		t.Errorf("frobnicate is near nothing: %q", stderr)
	}
}

// Shell completion offers session IDs with their titles (inert), models
// with their tiers, import's agents and --format's values.
func TestCompletion(t *testing.T) {
	t.Parallel()
	store := t.TempDir() + "/store"
	id, _, _ := scrim(t, "", "--store", store, "new", "--title", "fix the \x1b]0;pwned\x07parser")
	id = strings.TrimSpace(id)
	complete := func(args ...string) string {
		t.Helper()
		out, stderr, code := scrim(t, "", append([]string{"--store", store, "__complete"}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", args, code, stderr)
		}
		return out
	}
	if out := complete("show", ""); !strings.Contains(out, id+"\tfix the ]0;pwnedparser\n") || strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("show: %q", out)
	}
	if out := complete("redact", id, "--model", "demo/"); !strings.Contains(out, "demo/limited\ttier ") {
		t.Errorf("--model: %q", out)
	}
	if out := complete("tool", "read", "--session", ""); !strings.Contains(out, id+"\t") {
		t.Errorf("--session: %q", out)
	}
	if out := complete("import", ""); !strings.Contains(out, "claude\t") || !strings.Contains(out, "codex\t") {
		t.Errorf("import: %q", out)
	}
	if out := complete("sessions", "--format", ""); !strings.Contains(out, "text\njson\n") || strings.Contains(out, "request") {
		t.Errorf("--format: %q", out)
	}
	if out := complete("redact", id, "--format", ""); !strings.Contains(out, "text\njson\nrequest\n") {
		t.Errorf("redact --format: %q", out)
	}
}

// scrim demo --model M opens the TUI with M active (plain scrim takes the
// same flag; its default is the most recent session's last model).
func TestDemoOpensWithTheModelGiven(t *testing.T) {
	t.Parallel()
	setenv(t, "TMPDIR", t.TempDir())
	if s := demoFirstScreen(t, nil, "demo", "--model", "demo/public"); !strings.Contains(s, "Sent to demo/public") || strings.Contains(s, "Sent to demo/limited") {
		t.Fatalf("first screen is not demo/public's:\n%s", s)
	}
}

// Every command a user runs shows examples under --help.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	a := &app{lookupEnv: lookup(t)}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cobraOwn := c.Name() == "help" || c.Name() == "completion" || c.HasParent() && c.Parent().Name() == "completion"
		if (c.IsAvailableCommand() || !c.HasParent()) && !cobraOwn && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no examples", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a.rootCommand())
	out, _, code := scrim(t, "", "show", "--help")
	if code != exitOK || !strings.Contains(out, "Examples:\n  scrim show 3f2a\n") {
		t.Errorf("show --help: %q", out)
	}
}
