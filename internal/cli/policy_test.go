package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPolicyExplainSSHKeyOnAFreshMachine is the acceptance line: a
// fresh home without ~/.ssh, the built-in policy, a real scrim process.
func TestPolicyExplainSSHKeyOnAFreshMachine(t *testing.T) {
	t.Parallel()
	isolate(t)
	home := getenv(t, "HOME")
	for _, arg := range []string{filepath.Join(home, ".ssh/id_rsa"), "~/.ssh/id_rsa"} {
		cmd := scrimProcess(t, "policy", "explain", "--model", "anthropic/claude-sonnet-4-5", arg)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		want := filepath.Join(home, ".ssh/id_rsa") + `: denied for tier "cloud" by deny "~/.ssh/**" (line 39); model rule "anthropic/**" (line 89); tools: read, grep, glob` + "\n"
		if string(out) != want {
			t.Fatalf("%s:\n got %q\nwant %q", arg, out, want)
		}
	}
}

func TestPolicyExplain(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	writeFile(t, filepath.Join(dir, "src/main.go"), "package main\n")
	writeFile(t, filepath.Join(dir, "src/.env"), "KEY=1\n")
	if err := os.Symlink("src", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(dir, "src/settings")); err != nil {
		t.Fatal(err)
	}
	pol := writeFile(t, filepath.Join(dir, "policy.toml"), `default_tier = "none"

[tiers.cloud]
label = "Cloud"
read = ["src/**"]
deny = ["**/.env"]

[tiers.none]
label = "nothing"

[[models]]
match = "anthropic/**"
tier = "cloud"
`)
	main, env, viaLink := filepath.Join(dir, "src/main.go"), filepath.Join(dir, "src/.env"), filepath.Join(dir, "link/.env")
	settings := filepath.Join(dir, "src/settings") // a link to .env under another name
	stdout, stderr, code := scrim(t, "", "--policy", pol, "policy", "explain", "--model", "anthropic/claude", main, env, viaLink, settings, "/etc")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{
		main + `: allowed for tier "Cloud" by read "src/**" (line 5); model rule "anthropic/**" (line 11); tools: read, grep, glob`,
		env + `: denied for tier "Cloud" by deny "**/.env" (line 6); model rule "anthropic/**" (line 11); tools: read, grep, glob`,
		viaLink + " (resolves to " + env + `): denied for tier "Cloud" by deny "**/.env" (line 6); model rule "anthropic/**" (line 11); tools: read, grep, glob`,
		settings + " (resolves to " + env + `): denied for tier "Cloud" by deny "**/.env" (line 6) on the resolved path; model rule "anthropic/**" (line 11); tools: read, grep, glob`,
		`/etc: denied for tier "Cloud": no read pattern matches; model rule "anthropic/**" (line 11); tools: read, grep, glob`,
	}
	if got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", stdout, strings.Join(want, "\n"))
	}

	t.Run("unknown model gets the default tier", func(t *testing.T) {
		stdout, _, code := scrim(t, "", "--policy", pol, "policy", "explain", "--model", "mystery/m", main)
		want := main + `: denied for tier "nothing": no read pattern matches; no model rule matches mystery/m: default_tier (line 1); tools: read, grep, glob` + "\n"
		if code != 0 || stdout != want {
			t.Fatalf("exit %d\n got %q\nwant %q", code, stdout, want)
		}
	})

	t.Run("json", func(t *testing.T) {
		stdout, stderr, code := scrim(t, "", "--policy", pol, "policy", "explain", "--model", "anthropic/claude", "--format", "json", settings, main)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var got []map[string]any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%v in %s", err, stdout)
		}
		if len(got) != 2 {
			t.Fatalf("%d results", len(got))
		}
		first := got[0]
		for k, v := range map[string]any{
			"path": settings, "canonical": env, "model": "anthropic/claude", "rule": "anthropic/**", "ruleLine": 11.0,
			"tier": "cloud", "tierLabel": "Cloud", "allowed": false, "decision": "denied", "pattern": "**/.env",
			"patternKind": "deny", "patternLine": 6.0, "viaCanonical": true, "policy": pol,
		} {
			if first[k] != v {
				t.Errorf("%s = %v, want %v", k, first[k], v)
			}
		}
		if got[1]["decision"] != "allowed" || got[1]["pattern"] != "src/**" {
			t.Errorf("second result %v", got[1])
		}
	})

	t.Run("terminal control characters in a path are made visible", func(t *testing.T) {
		stdout, _, _ := scrim(t, "", "--policy", pol, "policy", "explain", "--model", "x", filepath.Join(dir, "a\x1b[31mb"))
		if strings.Contains(stdout, "\x1b") || !strings.Contains(stdout, "a␛[31mb") {
			t.Fatalf("got %q", stdout)
		}
	})
}

func TestPolicyExplainUsage(t *testing.T) {
	t.Parallel()
	isolate(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"policy", "explain", "/tmp"}, "--model is required"},
		{[]string{"policy", "explain", "--model", "", "/tmp"}, "--model is required"},
		{[]string{"policy", "explain", "--model", "a/b"}, "give at least one PATH"},
		{[]string{"policy", "explain", "--model", "a/b", "--format", "yaml", "/tmp"}, "--format must be text or json"},
		{[]string{"policy", "explain", "--nope"}, "unknown flag"},
	} {
		stdout, stderr, code := scrim(t, "", tc.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

func TestPolicyCheckBuiltIn(t *testing.T) {
	t.Parallel()
	isolate(t)
	stdout, stderr, code := scrim(t, "", "policy", "check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	home := getenv(t, "HOME")
	for _, want := range []string{
		"policy <embedded default policy> (built-in",
		"default tier untrusted (line 10)",
		`tier local  label "local"  (line 12)`,
		`tier cloud  label "cloud"  (line 17)`,
		`tier untrusted  label "untrusted"  (line 64)`,
		"  derived         redact  (line 23)",
		"  secrets         redact  (line 24)",
		"  tools           read, grep, glob, bash, webfetch  (line 15)",
		"  unknown_source  withhold  (line 22)",
		"  deny_files      * (every format: scrim policy check --dir DIR shows what a folder has)  (line 25)",
		"  deny_files      none  (default)",
		"  tools           read, grep, glob  (default)",
		"reads nothing",
		"deny  ~/.ssh/**",
		"= " + home + "/.ssh/**",
		"deny  **/.env ",
		"models (first match wins)",
		"any other model",
		"ok: 3 tiers, 26 model rules",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in:\n%s", want, stdout)
		}
	}
	// Tiers and rules in file order.
	order := []string{"\ntier local", "\ntier cloud", "\ntier untrusted", "ollama/**", "lmstudio/**", "llamacpp/**", "anthropic/**", "openai/**", "chutes/**", "any other model"}
	last := -1
	for _, s := range order {
		i := strings.Index(stdout, s)
		if i <= last {
			t.Fatalf("%q out of order in:\n%s", s, stdout)
		}
		last = i
	}
}

func TestPolicyCheckSources(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	text := "default_tier = \"t\"\n[tiers.t]\nlabel = \"T\"\nread = [\"~/src/**\", \"rel/**\"]\ndeny = [\"**/.env\"]\n[[models]]\nmatch = \"m/*\"\ntier = \"t\"\n"
	userPolicy := writeFile(t, filepath.Join(getenv(t, "XDG_CONFIG_HOME"), "scrim/policy.toml"), text)
	envPolicy := writeFile(t, filepath.Join(dir, "env.toml"), text)
	flagPolicy := writeFile(t, filepath.Join(dir, "flag.toml"), text)

	stdout, _, code := scrim(t, "", "policy", "check")
	if code != 0 || !strings.HasPrefix(stdout, "policy "+userPolicy+" (from user config)\n") {
		t.Fatalf("user config: exit %d\n%s", code, stdout)
	}
	var squeezed []string // tabwriter's padding aside
	for _, line := range strings.Split(stdout, "\n") {
		squeezed = append(squeezed, strings.Join(strings.Fields(line), " "))
	}
	for _, want := range []string{
		"read ~/src/** = " + getenv(t, "HOME") + "/src/** line 4",
		"read rel/** = " + filepath.Dir(userPolicy) + "/rel/** line 4",
		"deny **/.env line 5",
		"m/* → t line 6",
		"any other model → t default_tier, line 1",
	} {
		if !contains(squeezed, want) {
			t.Errorf("missing %q in:\n%s", want, stdout)
		}
	}
	setenv(t, "SCRIM_POLICY", envPolicy)
	if stdout, _, _ := scrim(t, "", "policy", "check"); !strings.HasPrefix(stdout, "policy "+envPolicy+" (from $SCRIM_POLICY)\n") {
		t.Fatalf("env:\n%s", stdout)
	}
	if stdout, _, _ := scrim(t, "", "policy", "check", "--policy", flagPolicy); !strings.HasPrefix(stdout, "policy "+flagPolicy+" (from --policy)\n") {
		t.Fatalf("flag:\n%s", stdout)
	}
}

func TestPolicyCheckErrors(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	one := writeFile(t, filepath.Join(dir, "one.toml"), "default_tier = \"t\"\n[tiers.t]\nlabel = \"t\"\ndney = [\"/x\"]\n")
	stdout, stderr, code := scrim(t, "", "policy", "check", "--policy", one)
	want := "scrim: " + one + `:4: unknown key "dney" in tier "t" (did you mean "deny"?) (expected label, read, deny, deny_files, tools, unknown_source, derived, secrets)` + "\n"
	if code != exitError || stdout != "" || stderr != want {
		t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant   %q", code, stdout, stderr, want)
	}

	many := writeFile(t, filepath.Join(dir, "many.toml"), "default_tier = \"x\"\n[tiers.t]\nlabel = \"\"\nread = [\n  \"/[\",\n]\n")
	_, stderr, code = scrim(t, "", "policy", "check", "--policy", many)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != exitError || len(lines) != 4 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for i, prefix := range []string{many + ":1: default_tier", many + ":3: tier \"t\": label", many + ":5: tier \"t\": read pattern \"/[\"", "scrim: 3 problems in " + many} {
		if !strings.HasPrefix(lines[i], prefix) {
			t.Errorf("line %d = %q, want prefix %q", i+1, lines[i], prefix)
		}
	}

	// Every command that needs the policy fails the same way, in one line.
	_, stderr, code = scrim(t, "", "policy", "explain", "--model", "m", "--policy", many, "/tmp")
	if code != exitError || !strings.HasPrefix(stderr, "scrim: "+many+":1: ") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("explain with a bad policy: exit %d, %q", code, stderr)
	}

	_, stderr, code = scrim(t, "", "policy", "check", "--policy", filepath.Join(dir, "missing.toml"))
	if code != exitError || !strings.Contains(stderr, "missing.toml:1: cannot read policy: no such file or directory") {
		t.Fatalf("missing: exit %d, %q", code, stderr)
	}
}

func TestPolicyCommandUsage(t *testing.T) {
	t.Parallel()
	isolate(t)
	// Without a subcommand: a usage error that names them (cli.go
	// requireSubcommand), so a script cannot take help text for success.
	_, stderr, code := scrim(t, "", "policy")
	if code != exitUsage || !strings.Contains(stderr, "check, explain") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if stdout, _, code := scrim(t, "", "policy", "--help"); code != 0 || !strings.Contains(stdout, "explain") {
		t.Fatalf("--help: exit %d:\n%s", code, stdout)
	}
	if _, _, code := scrim(t, "", "policy", "check", "extra"); code != exitUsage {
		t.Fatalf("check with an argument: exit %d, want %d", code, exitUsage)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Every kind of file the built-in policy keeps from cloud models is denied
// to one: the agents' stores, scrim's own, shell and REPL histories,
// credentials and the usual secret files; a model no rule names (the
// untrusted tier) is denied them too.
func TestBuiltInPolicyDenies(t *testing.T) {
	t.Parallel()
	isolate(t)
	home := getenv(t, "HOME")
	h := func(p string) string { return filepath.Join(home, p) }
	paths := []string{
		h(".claude/projects/-home-me-app/5e55.jsonl"), h(".claude.json"), h(".codex/sessions/2025/09/01/rollout-x.jsonl"),
		h(".codex/auth.json"), h(".gemini/tmp/abc/chats/session.json"), h(".local/share/opencode/opencode.db"),
		h(".config/crush/crush.json"), h(".local/share/scrim/store/000001.vlog"), h(".config/scrim/policy.toml"),
		h(".bash_history"), h(".zsh_history"), h(".python_history"), h(".local/share/fish/fish_history"),
		h(".ssh/id_rsa"), h(".ssh/config"), h(".aws/credentials"), h(".gnupg/secring.gpg"), h(".netrc"),
		h(".git-credentials"), h(".docker/config.json"), h(".kube/config"), h(".npmrc"), h(".pypirc"),
		h(".config/gh/hosts.yml"), h(".config/gcloud/credentials.db"), "/srv/app/.git/config",
		"/srv/app/.env", "/srv/app/.env.production", "/srv/app/secrets/db.txt", "/srv/app/tls/server.pem",
		"/srv/app/tls/server.key", "/srv/app/deploy/id_rsa.pub", "/srv/app/id_ed25519",
	}
	for _, model := range []string{"anthropic/x", "some/unknown-model"} {
		out, stderr, code := scrim(t, "", append([]string{"policy", "explain", "--model", model, "--format", "json"}, paths...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var got []explained
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		for i, e := range got {
			if e.Allowed {
				t.Errorf("%s may read %s (%s)", model, paths[i], e.Reason)
			}
		}
	}
	// The same tier still reads ordinary project files.
	out, _, _ := scrim(t, "", "policy", "explain", "--model", "anthropic/x", "/srv/app/main.go", h("src/app/README.md"))
	if strings.Count(out, ": allowed for tier") != 2 {
		t.Fatalf("cloud cannot read project files:\n%s", out)
	}
}
