//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
)

// inputRow is one bad command line. Every row runs with --store and a good
// --policy first; a row's own flags come after and win.
type inputRow struct {
	name  string
	args  []string // {S} is a session ID, {file:NAME} a bad file, {dir} a folder
	stdin string
	code  int    // 1 or 2
	want  string // in the one line on stderr
}

const inputPolicy = `default_tier = "limited"

[tiers.trusted]
label = "trusted"
read  = ["/**"]
tools = ["read", "grep", "glob", "bash", "webfetch"]

[tiers.limited]
label = "limited"
read  = []

[[models]]
match = "demo/trusted"
tier  = "trusted"
`

// Two sessions share the prefix "aaaa": an ambiguous prefix.
const (
	inputSession = "aaaa000000000001"
	inputOther   = "aaaa000000000002"
	inputFresh   = "bbbb000000000003" // never written to: it has no model
)

// badFiles are the hostile policy and providers files, by name.
var badFiles = []string{"empty", "blank", "binary", "huge", "latin1", "missing", "dir"}

func inputRows() []inputRow {
	rows := []inputRow{
		// The root and unknown things.
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, want: `unknown command "frobnicate"`},
		{name: "unknown flag", args: []string{"--frob"}, code: 2, want: "unknown flag: --frob (see: scrim --help)"},
		{name: "flag without its value", args: []string{"redact", "{S}", "--model"}, code: 2, want: "flag needs an argument"},
		{name: "root with an argument", args: []string{"--store", "x", "extra"}, code: 2, want: `unknown command "extra"`},

		// import
		{name: "import: nothing", args: []string{"import"}, code: 2, want: "requires at least 1 arg(s)"},
		{name: "import: unknown agent", args: []string{"import", "frob", "x"}, code: 2, want: `unknown agent "frob": use scrim import claude, codex, crush, gemini or opencode`},
		{name: "import: missing file", args: []string{"import", "claude", "{file:missing}"}, code: 1, want: "no such file or directory; pass a transcript file or folder"},
		{name: "import: the agent's folder is missing", args: []string{"import", "claude"}, code: 1, want: "/.claude/projects does not exist (where Claude Code writes them; $CLAUDE_CONFIG_DIR moves them); pass PATH to import from elsewhere"},
		{name: "import: folder without transcripts", args: []string{"import", "codex", "{file:dir}"}, code: 1, want: "no codex transcripts (*.jsonl) found in"},
		{name: "import: binary file", args: []string{"import", "claude", "{file:binary}"}, code: 1, want: "looks binary (NUL byte), not a JSON-lines transcript: is this the right file?"},
		{name: "import: huge sparse file", args: []string{"import", "codex", "{file:huge}"}, code: 1, want: "looks binary (NUL byte)"},

		// the store folder
		{name: "store is a file", args: []string{"--store", "{policy}", "sessions"}, code: 1, want: "is a file, not a folder (or lies below one): pass --store DIR with a folder"},
		{name: "store below a file", args: []string{"--store", "{below}", "sessions"}, code: 1, want: "is a file, not a folder"},
		{name: "store is someone's project", args: []string{"--store", "{dir}", "sessions"}, code: 1, want: "holds other files"},

		// demo
		{name: "demo: extra argument", args: []string{"demo", "extra"}, code: 2, want: `unknown command "extra" for "scrim demo" (see: scrim demo --help)`},
		{name: "demo: unknown flag", args: []string{"demo", "--frob"}, code: 2, want: "unknown flag: --frob (see: scrim demo --help)"},

		// sessions, new, show, rm, rename
		{name: "sessions: extra argument", args: []string{"sessions", "extra"}, code: 2, want: `unknown command "extra" for "scrim sessions"`},
		{name: "sessions: bad format", args: []string{"sessions", "--format", "yaml"}, code: 2, want: "--format must be text or json"},
		{name: "new: no title", args: []string{"new"}, code: 2, want: `the title is empty; give one, e.g. "fix the parser"`},
		{name: "new: blank title", args: []string{"new", "--title", "  "}, code: 2, want: "the title is empty"},
		{name: "new: extra argument", args: []string{"new", "extra", "--title", "x"}, code: 2, want: `unknown command "extra" for "scrim new"`},
		{name: "new: title flag without value", args: []string{"new", "--title"}, code: 2, want: "flag needs an argument: --title"},
		{name: "new: workdir not a folder", args: []string{"new", "--title", "x", "--workdir", "{file:missing}"}, code: 2, want: "is not a folder"},
		{name: "show: no session", args: []string{"show"}, code: 2, want: "accepts 1 arg(s), received 0 (see: scrim show --help)"},
		{name: "show: two sessions", args: []string{"show", "{S}", "x"}, code: 2, want: "accepts 1 arg(s), received 2"},
		{name: "show: unknown session", args: []string{"show", "ffff"}, code: 1, want: `no session matches "ffff" (list them with: scrim sessions)`},
		{name: "show: ambiguous prefix", args: []string{"show", "aaaa"}, code: 1, want: "give more of the ID"},
		{name: "show: empty session ID", args: []string{"show", ""}, code: 1, want: "empty session ID (list them with: scrim sessions)"},
		{name: "show: bad format", args: []string{"show", "{S}", "--format", "csv"}, code: 2, want: "--format must be text or json"},
		{name: "rm: no session", args: []string{"rm"}, code: 2, want: "requires at least 1 arg(s)"},
		{name: "rm: unknown session", args: []string{"rm", "ffff"}, code: 1, want: `no session matches "ffff"`},
		{name: "rm: ambiguous prefix", args: []string{"rm", "aaaa"}, code: 1, want: "give more of the ID"},
		{name: "rename: nothing", args: []string{"rename"}, code: 2, want: "accepts 2 arg(s), received 0"},
		{name: "rename: no title", args: []string{"rename", "{S}"}, code: 2, want: "accepts 2 arg(s), received 1"},
		{name: "rename: three arguments", args: []string{"rename", "{S}", "a", "b"}, code: 2, want: "accepts 2 arg(s), received 3"},
		{name: "rename: unknown session", args: []string{"rename", "ffff", "t"}, code: 1, want: `no session matches "ffff"`},
		{name: "rename: ambiguous prefix", args: []string{"rename", "aaaa", "t"}, code: 1, want: "give more of the ID"},
		{name: "rename: blank title", args: []string{"rename", "{S}", " "}, code: 2, want: "the title is empty"},

		// policy
		{name: "policy: unknown subcommand", args: []string{"policy", "frob"}, code: 2, want: `unknown command "frob" for "scrim policy"`},
		{name: "policy check: extra argument", args: []string{"policy", "check", "extra"}, code: 2, want: `unknown command "extra"`},
		{name: "policy check: bad format", args: []string{"policy", "check", "--format", "yaml"}, code: 2, want: "unknown flag: --format"},
		{name: "policy explain: nothing", args: []string{"policy", "explain"}, code: 2, want: "--model"},
		{name: "policy explain: no path", args: []string{"policy", "explain", "--model", "demo/trusted"}, code: 2, want: "PATH"},
		{name: "policy explain: no model", args: []string{"policy", "explain", "/etc"}, code: 2, want: "--model"},
		{name: "policy explain: bad format", args: []string{"policy", "explain", "--model", "m", "/x", "--format", "yaml"}, code: 2, want: "--format must be text or json"},

		// tool
		{name: "policy: no subcommand", args: []string{"policy"}, code: 2, want: "scrim policy needs one of: check, explain (see: scrim policy --help)"},
		{name: "tool: no tool", args: []string{"tool", "--session", "{S}", "--model", "m"}, code: 2, want: "scrim tool needs one of: bash, glob, grep, read, webfetch"},
		{name: "tool: unknown tool", args: []string{"tool", "frob"}, code: 2, want: `unknown command "frob" for "scrim tool"; it takes one of: bash, glob, grep, read, webfetch (see: scrim tool --help)`},
		{name: "tool read: no path", args: []string{"tool", "read", "--session", "{S}", "--model", "m"}, code: 2, want: "accepts 1 arg(s), received 0"},
		{name: "tool read: two paths", args: []string{"tool", "read", "a", "b", "--session", "{S}", "--model", "m"}, code: 2, want: "accepts 1 arg(s), received 2"},
		{name: "tool read: no session", args: []string{"tool", "read", "x", "--model", "m"}, code: 2, want: "needs --session S and --model M"},
		{name: "tool read: no model", args: []string{"tool", "read", "x", "--session", "{S}"}, code: 2, want: "needs --session S and --model M"},
		{name: "tool read: unknown session", args: []string{"tool", "read", "x", "--session", "ffff", "--model", "m"}, code: 1, want: `no session matches "ffff" (list them with: scrim sessions)`},
		{name: "tool read: ambiguous prefix", args: []string{"tool", "read", "x", "--session", "aaaa", "--model", "m"}, code: 1, want: "give more of the ID"},
		{name: "tool read: bad offset", args: []string{"tool", "read", "x", "--offset", "-3", "--session", "{S}", "--model", "demo/trusted"}, code: 1, want: "offset and limit must be positive"},
		{name: "tool read: offset not a number", args: []string{"tool", "read", "x", "--offset", "two", "--session", "{S}", "--model", "m"}, code: 2, want: `invalid argument "two" for "--offset"`},
		{name: "tool grep: no pattern", args: []string{"tool", "grep", "--session", "{S}", "--model", "m"}, code: 2, want: "accepts between 1 and 2 arg(s), received 0"},
		{name: "tool grep: three arguments", args: []string{"tool", "grep", "a", "b", "c", "--session", "{S}", "--model", "m"}, code: 2, want: "received 3"},
		{name: "tool grep: bad regexp", args: []string{"tool", "grep", "(", "--session", "{S}", "--model", "demo/trusted"}, code: 1, want: "is not a valid Go RE2 regular expression"},
		{name: "tool glob: bad pattern", args: []string{"tool", "glob", "[", "--session", "{S}", "--model", "demo/trusted"}, code: 1, want: "is not a valid glob pattern"},
		{name: "tool bash: no command", args: []string{"tool", "bash", "--session", "{S}", "--model", "m"}, code: 2, want: "requires at least 1 arg(s)"},
		{name: "tool bash: bad timeout", args: []string{"tool", "bash", "true", "--timeout", "soon", "--session", "{S}", "--model", "m"}, code: 2, want: `invalid argument "soon" for "--timeout"`},
		{name: "tool webfetch: no URL", args: []string{"tool", "webfetch", "--session", "{S}", "--model", "m"}, code: 2, want: "accepts 1 arg(s), received 0"},
		{name: "tool webfetch: not a URL", args: []string{"tool", "webfetch", "not a url", "--session", "{S}", "--model", "demo/trusted"}, code: 1, want: "http"},
		{name: "tool read: bad format", args: []string{"tool", "read", "x", "--format", "yaml", "--session", "{S}", "--model", "m"}, code: 2, want: "--format must be text or json"},

		// redact
		{name: "redact: no session", args: []string{"redact", "--model", "m"}, code: 2, want: "accepts 1 arg(s), received 0"},
		{name: "redact: two sessions", args: []string{"redact", "{S}", "x", "--model", "m"}, code: 2, want: "accepts 1 arg(s), received 2"},
		{name: "redact: no model", args: []string{"redact", "{S}"}, code: 2, want: "needs --model M"},
		{name: "redact: unknown session", args: []string{"redact", "ffff", "--model", "m"}, code: 1, want: `no session matches "ffff"`},
		{name: "redact: ambiguous prefix", args: []string{"redact", "aaaa", "--model", "m"}, code: 1, want: "give more of the ID"},
		{name: "redact: empty session ID", args: []string{"redact", "", "--model", "m"}, code: 1, want: "empty session ID"},
		{name: "redact: session ID with a slash", args: []string{"redact", "aaaa/../x", "--model", "m"}, code: 1, want: `no session matches "aaaa/../x"`},
		{name: "redact: bad format", args: []string{"redact", "{S}", "--model", "m", "--format", "xml"}, code: 2, want: "--format must be text, json or request"},

		// send
		{name: "send: nothing", args: []string{"send"}, code: 2, want: "requires at least 1 arg(s)"},
		{name: "send: no prompt", args: []string{"send", "{S}", "--model", "demo/trusted"}, code: 2, want: "no prompt"},
		{name: "send: empty prompt", args: []string{"send", "{S}", "--model", "demo/trusted", "  "}, code: 2, want: "the prompt is empty"},
		{name: "send: empty prompt on stdin", args: []string{"send", "{S}", "--model", "demo/trusted", "-"}, stdin: "\n", code: 2, want: "the prompt on standard input is empty"},
		{name: "send: prompt and --continue", args: []string{"send", "{S}", "--continue", "hi"}, code: 2, want: "drop the prompt or --continue"},
		{name: "send: unknown session", args: []string{"send", "ffff", "--model", "demo/trusted", "hi"}, code: 1, want: `no session matches "ffff"`},
		{name: "send: ambiguous prefix", args: []string{"send", "aaaa", "--model", "demo/trusted", "hi"}, code: 1, want: "give more of the ID"},
		{name: "send: no model yet", args: []string{"send", "{T}", "hi"}, code: 2, want: "has no model yet: give --model provider/model (see: scrim models)\n"},
		{name: "send: model without provider", args: []string{"send", "{S}", "--model", "gpt", "hi"}, code: 1, want: "provider/model"},
		{name: "send: unknown provider", args: []string{"send", "{S}", "--model", "nosuch/model", "hi"}, code: 1, want: "nosuch"},

		// models
		{name: "models: extra argument", args: []string{"models", "extra"}, code: 2, want: `unknown command "extra"`},
		{name: "models: bad format", args: []string{"models", "--format", "csv"}, code: 2, want: "--format must be text or json"},
		{name: "models: unknown provider", args: []string{"models", "--provider", "nosuch"}, code: 1, want: `no models of provider "nosuch"`},
	}
	return append(rows, badFileRows()...)
}

// badFileRows runs every command that loads a policy or providers file with
// each hostile file.
func badFileRows() []inputRow {
	policyWant := map[string]string{
		"empty":   "policy file is empty; start from the built-in policy",
		"blank":   "policy file is empty; start from the built-in policy",
		"binary":  "policy file looks binary (NUL byte)",
		"huge":    "policy file is larger than 4 MiB; is this the right file?",
		"latin1":  ":1: policy file is not valid UTF-8 text; save it as UTF-8",
		"missing": "cannot read policy: no such file or directory",
		"dir":     "cannot read policy: is a directory",
	}
	providersWant := map[string]string{
		"empty":   "providers file is empty",
		"blank":   "providers file is empty",
		"binary":  "providers file looks binary (NUL byte)",
		"huge":    "providers file is larger than 1 MiB; is this the right file?",
		"latin1":  "providers file is not valid UTF-8",
		"missing": "cannot read providers file: no such file or directory",
		"dir":     "cannot read providers file: is a directory",
	}
	var rows []inputRow
	for _, bad := range badFiles {
		file := "{file:" + bad + "}"
		for _, cmd := range [][]string{
			{}, // the TUI: it loads the policy before it takes the screen
			{"policy", "check"},
			{"policy", "explain", "--model", "m", "/"},
			{"redact", "{S}", "--model", "m"},
			{"tool", "read", "x", "--session", "{S}", "--model", "m"},
			{"send", "{S}", "--model", "demo/trusted", "hi"},
			{"models"},
		} {
			rows = append(rows, inputRow{name: "policy " + bad + ": " + cmdName(cmd), args: append(append([]string{}, cmd...), "--policy", file), code: 1, want: policyWant[bad]})
		}
		for _, cmd := range [][]string{
			{},
			{"send", "{S}", "--model", "demo/trusted", "hi"},
			{"models"},
		} {
			rows = append(rows, inputRow{name: "providers " + bad + ": " + cmdName(cmd), args: append(append([]string{}, cmd...), "--providers", file), code: 1, want: providersWant[bad]})
		}
	}
	return rows
}

func cmdName(cmd []string) string {
	if len(cmd) == 0 {
		return "tui"
	}
	return cmd[0]
}

// inputFixture makes the store, the good policy and the bad files.
func inputFixture(t *testing.T) map[string]string {
	t.Helper()
	isolate(t)
	dir := t.TempDir()
	vars := map[string]string{"{store}": filepath.Join(dir, "store"), "{policy}": filepath.Join(dir, "policy.toml"), "{S}": inputSession, "{T}": inputFresh, "{dir}": dir, "{below}": filepath.Join(dir, "policy.toml", "store")}
	must(t, os.WriteFile(vars["{policy}"], []byte(inputPolicy), 0o644))
	st, err := session.Open(vars["{store}"])
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{inputSession, inputOther, inputFresh} {
		if _, err := st.Create(session.Header{ID: id, Title: "bad input", WorkDir: dir}); err != nil {
			t.Fatal(err)
		}
	}
	must(t, st.Close())
	for _, bad := range badFiles {
		path := filepath.Join(dir, bad+".toml")
		vars["{file:"+bad+"}"] = path
		switch bad {
		case "empty":
			must(t, os.WriteFile(path, nil, 0o644))
		case "blank":
			must(t, os.WriteFile(path, []byte("\n  \t\n\n"), 0o644))
		case "binary":
			must(t, os.WriteFile(path, []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00"), 0o644))
		case "huge":
			// 100 MB that takes no disk: a text line, then a sparse tail.
			f, err := os.Create(path)
			must(t, err)
			_, err = f.WriteString("# huge\n")
			must(t, err)
			must(t, f.Truncate(100<<20))
			must(t, f.Close())
		case "latin1":
			must(t, os.WriteFile(path, []byte("# caf\xe9\n[providers.caf\xe9]\n"), 0o644))
		case "dir":
			must(t, os.Mkdir(path, 0o755))
		}
	}
	return vars
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	vars := inputFixture(t)
	for _, row := range inputRows() {
		t.Run(row.name, func(t *testing.T) {
			args := []string{"--store", vars["{store}"], "--policy", vars["{policy}"]}
			for _, a := range row.args {
				if v, ok := vars[a]; ok {
					a = v
				}
				args = append(args, a)
			}
			_, stderr, code := scrim(t, row.stdin, args...)
			t.Logf("exit %d: %s", code, stderr) // go test -v: the messages the security notes quote
			checkOneLine(t, stderr)
			if code != row.code {
				t.Errorf("exit %d, want %d: %s", code, row.code, stderr)
			}
			if !strings.Contains(stderr, row.want) {
				t.Errorf("stderr %q lacks %q", stderr, row.want)
			}
		})
	}
}

// checkOneLine: exactly one line, scrim's, and no sign of a crash.
func checkOneLine(t *testing.T, stderr string) {
	t.Helper()
	if !strings.HasPrefix(stderr, "scrim: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("want one line starting with \"scrim: \", got %q", stderr)
	}
	for _, bad := range []string{"panic", "goroutine ", "internal error", ".go:"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr looks like a crash (%q): %s", bad, stderr)
		}
	}
}
