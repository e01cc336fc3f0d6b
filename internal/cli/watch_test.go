package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseWatch(t *testing.T) {
	cases := []struct {
		spec, agent, dir, err string
	}{
		{"/srv/projects", "claude", "/srv/projects", ""},
		{"claude:/srv/x", "claude", "/srv/x", ""},
		{"codex:/srv/x", "codex", "/srv/x", ""},
		{"/home/u/.codex/sessions", "codex", "/home/u/.codex/sessions", ""},
		{"/home/u/.codex", "codex", "/home/u/.codex", ""},
		{"claude:/home/u/.codex/sessions", "claude", "/home/u/.codex/sessions", ""},
		{"/home/u/.codexes/x", "claude", "/home/u/.codexes/x", ""},
		{"C:/Users/me/.claude/projects", "claude", "C:/Users/me/.claude/projects", ""}, // a drive, not an agent
		{"frob:/x", "", "", `unknown agent "frob" in "frob:/x": use claude:DIR, codex:DIR, crush:DIR, gemini:DIR or opencode:DIR`},
		{"claude:", "", "", `"claude:" names no folder: use [claude:|codex:|crush:|gemini:|opencode:]DIR`},
		{"", "", "", `"" names no folder: use [claude:|codex:|crush:|gemini:|opencode:]DIR`},
	}
	for _, c := range cases {
		agent, dir, err := parseWatch(c.spec)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if agent != c.agent || dir != c.dir || got != c.err {
			t.Errorf("parseWatch(%q) = %q, %q, %q; want %q, %q, %q", c.spec, agent, dir, got, c.agent, c.dir, c.err)
		}
	}
}

// config.toml: every mistake is one FILE:LINE: MSG line, and nothing starts.
func TestConfigFileErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		line       int
		msg        string
	}{
		{"not a bool", "watch = \"no\"\n", 1, `watch must be true or false, not "no"`},
		{"not a list", "\nwatch_dirs = \"claude:/x\"\n", 2, `watch_dirs must be a list of folders like ["claude:/path"], not "claude:/x"`},
		{"not a string", "watch_dirs = [\n  \"/a\",\n  3,\n]\n", 3, `watch_dirs[1] must be a string like "claude:/path", not 3`},
		{"unknown agent", "watch_dirs = [\n  \"/a\",\n  \"frob:/b\",\n]\n", 3, `watch_dirs[1]: unknown agent "frob" in "frob:/b": use claude:DIR, codex:DIR, crush:DIR, gemini:DIR or opencode:DIR`},
		{"relative", "watch_dirs = [\"claude:work/projects\"]\n", 1, `watch_dirs[0]: "work/projects" is relative: give an absolute folder (or ~/…)`},
		{"unknown key", "watch = true\nwacth_dirs = []\n", 2, `unknown key "wacth_dirs" (the config file takes watch, watch_dirs)`},
		{"syntax", "watch = \n", 1, ""},
		{"empty", "\n  \n", 1, "config file is empty; add a setting such as watch = false (see README) or remove the file"},
		{"binary", "watch = true\n\x00\n", 2, "config file looks binary (NUL byte); it must be UTF-8 TOML text: is this the right file?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			isolate(t)
			file := filepath.Join(getenv(t, "XDG_CONFIG_HOME"), "scrim", "config.toml")
			must(t, os.MkdirAll(filepath.Dir(file), 0o755))
			must(t, os.WriteFile(file, []byte(c.text), 0o644))
			_, stderr, code := scrim(t, "", "--store", filepath.Join(t.TempDir(), "store"))
			prefix := "scrim: " + file + ":" + strconv.Itoa(c.line) + ": " + c.msg
			if code != exitError || !strings.HasPrefix(stderr, prefix) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, stderr, prefix)
			}
		})
	}
}

func TestWatchFlagErrors(t *testing.T) {
	t.Parallel()
	isolate(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--watch", "/x", "--no-watch"}, "scrim: --watch and --no-watch cannot be used together (see: scrim --help)\n"},
		{[]string{"--watch", "frob:/x"}, "scrim: --watch: unknown agent \"frob\" in \"frob:/x\": use claude:DIR, codex:DIR, crush:DIR, gemini:DIR or opencode:DIR (see: scrim --help)\n"},
		{[]string{"--watch", ""}, "scrim: --watch: \"\" names no folder: use [claude:|codex:|crush:|gemini:|opencode:]DIR (see: scrim --help)\n"},
		{[]string{"sessions", "--watch", "/x"}, "scrim: unknown flag: --watch (see: scrim sessions --help)\n"},
	} {
		_, stderr, code := scrim(t, "", c.args...)
		if code != exitUsage || stderr != c.want {
			t.Errorf("%q: exit %d, %q; want 2, %q", c.args, code, stderr, c.want)
		}
	}
}

// What plain scrim watches: the agents' folders under the home folder, the
// config file's watch_dirs, every --watch, once each; nothing with
// --no-watch or watch = false (which --watch overrides).
func TestWatchRoots(t *testing.T) {
	t.Parallel()
	isolate(t)
	home := getenv(t, "HOME")
	file := filepath.Join(getenv(t, "XDG_CONFIG_HOME"), "scrim", "config.toml")
	must(t, os.MkdirAll(filepath.Dir(file), 0o755))
	roots := func(cfg string, args ...string) string {
		t.Helper()
		if cfg == "" {
			os.Remove(file)
		} else {
			must(t, os.WriteFile(file, []byte(cfg), 0o644))
		}
		a := &app{lookupEnv: lookup(t)}
		root := a.rootCommand()
		must(t, root.ParseFlags(args))
		rs, dirs, err := a.watchRoots()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i, r := range rs {
			if r.Dir != dirs[i] || (r.Factory == nil) == (r.Source == nil) {
				t.Fatalf("root %+v, dir %q", r, dirs[i])
			}
			out = append(out, r.Agent+":"+strings.Replace(r.Dir, home, "~", 1))
		}
		return strings.Join(out, " ")
	}
	defaults := "claude:~/.claude/projects codex:~/.codex/sessions gemini:~/.gemini/tmp opencode:~/.local/share/opencode"
	for _, c := range []struct {
		cfg  string
		args []string
		want string
	}{
		{"", nil, defaults},
		{"", []string{"--no-watch"}, ""},
		{"", []string{"--watch", "/srv/a", "--watch", "/srv/.codex/b", "--watch", "/srv/a"}, defaults + " claude:/srv/a codex:/srv/.codex/b"},
		{"watch = false\n", nil, ""},
		{"watch = false\nwatch_dirs = [\"/srv/c\"]\n", nil, ""},
		{"watch = false\n", []string{"--watch", "codex:/srv/d"}, defaults + " codex:/srv/d"},
		{"watch = true\nwatch_dirs = [\"claude:~/work\", \"codex:/srv/e\"]\n", []string{"--watch", "/srv/f"}, defaults + " claude:~/work codex:/srv/e claude:/srv/f"},
		// --watch=~/x, which the shell leaves as it is: the home folder's.
		{"", []string{"--watch=~/g", "--watch=codex:~/h"}, defaults + " claude:~/g codex:~/h"},
	} {
		if got := roots(c.cfg, c.args...); got != c.want {
			t.Errorf("config %q, args %q:\n got  %s\n want %s", c.cfg, c.args, got, c.want)
		}
	}
}

// Each agent's folder follows the agent's own variable, as the agent does
// (it then writes nothing to its usual folder): for the watch and for an
// import without PATH. A relative value, which the agent would take from
// wherever it was started, is left for the usual folder.
func TestAgentFoldersFollowTheirVariables(t *testing.T) {
	t.Parallel()
	isolate(t)
	home := getenv(t, "HOME")
	cfg := t.TempDir()
	env := testEnv(t)
	envsMu.Lock()
	env["CLAUDE_CONFIG_DIR"] = cfg
	env["CODEX_HOME"] = "relative/codex"
	env["GEMINI_CLI_HOME"] = "~/gh"
	env["XDG_DATA_HOME"] = "/data"
	envsMu.Unlock()
	a := &app{lookupEnv: lookup(t)}
	must(t, a.rootCommand().ParseFlags(nil))
	rs, _, err := a.watchRoots()
	must(t, err)
	var got []string
	for _, r := range rs {
		got = append(got, r.Agent+":"+r.Dir)
	}
	want := []string{"claude:" + filepath.Join(cfg, "projects"), "codex:" + filepath.Join(home, ".codex", "sessions"),
		"gemini:" + filepath.Join(home, "gh", ".gemini", "tmp"), "opencode:/data/opencode"}
	if !slices.Equal(got, want) {
		t.Errorf("watched:\n got  %q\n want %q", got, want)
	}

	transcript, err := os.ReadFile(filepath.Join("..", "..", "session", "importers", "claude", "testdata", "session.jsonl"))
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(cfg, "projects", "-home-dev-shop"), 0o755))
	must(t, os.WriteFile(filepath.Join(cfg, "projects", "-home-dev-shop", "s.jsonl"), transcript, 0o644))
	out, stderr, code := scrim(t, "", "--store", filepath.Join(t.TempDir(), "store"), "import", "claude")
	if code != exitOK || !strings.Contains(out, filepath.Join(cfg, "projects", "-home-dev-shop", "s.jsonl")) {
		t.Errorf("import claude with CLAUDE_CONFIG_DIR: exit %d\n%s%s", code, out, stderr)
	}
}
