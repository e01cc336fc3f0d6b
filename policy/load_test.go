package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// okTiers is a valid tiers section for cases that break something else.
const okTiers = `
[tiers.cloud]
label = "cloud"
read = ["/**"]
`

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name string
		text string
		line int
		want string // substring of the message
	}{
		{"unknown key in a tier table", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\ndney = [\"/x\"]\n", 4, `unknown key "dney" in tier "cloud" (did you mean "deny"?`},
		{"unknown key as a dotted key", "default_tier = \"cloud\"\ntiers.cloud.label = \"c\"\n\ntiers.cloud.dney = [\"/x\"]\n", 4, `unknown key "dney" in tier "cloud"`},
		{"unknown key in an inline table", "default_tier = \"cloud\"\n[tiers]\ncloud = { label = \"c\",\n  dney = [\"/x\"] }\n", 4, `unknown key "dney" in tier "cloud"`},
		{"unknown key at the top", "defualt_tier = \"cloud\"\n" + okTiers, 1, `unknown key "defualt_tier" at the top level (did you mean "default_tier"?`},
		{"unknown key in the second model rule", "default_tier = \"cloud\"\n" + okTiers + "[[models]]\nmatch = \"a/**\"\ntier = \"cloud\"\n[[models]]\nmatch = \"b/**\"\nteir = \"cloud\"\n", 11, `unknown key "teir" in model rule 2`},
		{"unknown tier sub-table", "default_tier = \"cloud\"\n" + okTiers + "[tiers.cloud.extra]\nx = 1\n", 6, `unknown key "extra" in tier "cloud"`},
		{"invalid glob in a multi-line array", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\n# \"/bad/[\" was here\nread = [\n  \"/ok/**\",\n  \"/ok2/**\", \"/bad/[\",\n  \"/after/**\",\n]\n", 7, `read pattern "/bad/[": invalid glob`},
		{"invalid glob after a string holding a bracket", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c]\"\ndeny = [\"/a]\", 'b\\\\',\n\"{x\"]\nread = []\n", 5, `deny pattern "{x": invalid glob`},
		{"invalid glob in a model match", "default_tier = \"cloud\"\n" + okTiers + "\n[[models]]\nmatch = \"anthropic/[\"\ntier = \"cloud\"\n", 8, `match "anthropic/[": invalid glob`},
		{"tier referenced but undefined", "default_tier = \"cloud\"\n" + okTiers + "[[models]]\nmatch = \"a/**\"\ntier = \"clod\"\n", 8, `tier "clod" is not defined (did you mean "cloud"?) (tiers: cloud)`},
		{"undefined tier in an inline model list", "default_tier = \"cloud\"\nmodels = [\n  { match = \"a/**\", tier = \"cloud\" },\n  { match = \"b/**\",\n    tier = \"nope\" },\n]\n" + okTiers, 5, `model rule 2 ("b/**"): tier "nope" is not defined`},
		{"duplicate tier", "default_tier = \"cloud\"\n" + okTiers + "\n[tiers.cloud]\nlabel = \"again\"\n", 7, `duplicate tier "cloud" (first defined on line 3)`},
		{"duplicate tier in inline tables", "default_tier = \"a\"\n[tiers]\na = { label = \"x\" }\nb = { label = \"y\" }\na = { label = \"z\" }\n", 5, `duplicate tier "a" (first defined on line 3)`},
		{"duplicate tier: dotted keys then a header", "default_tier = \"a\"\ntiers.a.label = \"x\"\n[tiers.a]\nread = []\n", 3, `duplicate tier "a" (first defined on line 2)`},
		{"missing default_tier", "# my policy\n" + okTiers, 1, "default_tier is missing"},
		{"unknown default_tier", "\n\ndefault_tier = \"clowd\"\n" + okTiers, 3, `default_tier "clowd" is not a defined tier (did you mean "cloud"?)`},
		{"default_tier not a string", "default_tier = 3\n" + okTiers, 1, "default_tier must be a string"},
		{"empty label", "default_tier = \"cloud\"\n[tiers.cloud]\nread = []\nlabel = \"\"\n", 4, `tier "cloud": label "" is empty`},
		{"blank label", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"   \"\n", 3, `label "   " is empty`},
		{"missing label", "default_tier = \"cloud\"\n\n[tiers.cloud]\nread = []\n", 3, `tier "cloud" has no label`},
		{"label with a newline", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"two\\nlines\"\n", 3, "must be one line of printable text"},
		{"label not a string", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = 5\n", 3, "label must be a string"},
		{"no tiers", "default_tier = \"cloud\"\n", 1, "no tiers defined"},
		{"empty tiers table", "default_tier = \"cloud\"\n\n[tiers]\n", 3, "no tiers defined"},
		{"tiers not a table", "default_tier = \"cloud\"\ntiers = [\"cloud\"]\n", 2, "tiers must be tables"},
		{"tier not a table", "default_tier = \"cloud\"\n[tiers]\ncloud = \"yes\"\n", 3, `tier "cloud" must be a table`},
		{"read not an array", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\nread = \"/**\"\n", 4, "read must be an array"},
		{"pattern not a string", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\nread = [\n\"/a\",\n5,\n]\n", 6, "read patterns must be strings (element 2 is not)"},
		{"empty pattern", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\ndeny = [\"/a\", \"\"]\n", 4, `deny pattern "": empty pattern`},
		{"unset variable in a pattern", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\nread = [\n  \"$SCRIM_TEST_UNSET_VAR/**\",\n]\n", 5, "environment variable $SCRIM_TEST_UNSET_VAR is not set"},
		{"empty variable in a pattern", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\nread = [\"$SCRIM_TEST_EMPTY_VAR/**\"]\n", 4, "$SCRIM_TEST_EMPTY_VAR is empty"},
		{"~user pattern", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\nread = [\"~bob/x\"]\n", 4, "~user is not supported"},
		{"models not tables", "default_tier = \"cloud\"\nmodels = [\"a/**\"]\n" + okTiers, 2, "models must be [[models]] tables"},
		{"model rule without match", "default_tier = \"cloud\"\n" + okTiers + "\n[[models]]\ntier = \"cloud\"\n", 7, "model rule 1 has no match"},
		{"model rule without tier", "default_tier = \"cloud\"\n" + okTiers + "\n[[models]]\nmatch = \"x/**\"\n", 7, `model rule 1 ("x/**") has no tier`},
		{"unknown tool", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\ntools = [\n  \"read\",\n  \"bsh\",\n]\n", 6, `unknown tool "bsh" (did you mean "bash"?) (the tools: read, grep, glob, bash, webfetch)`},
		{"tools not an array", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\ntools = \"bash\"\n", 4, "tools must be an array of tool names"},
		{"tool listed twice", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\ntools = [\"read\", \"read\"]\n", 4, `tool "read" is listed twice`},
		{"unknown_source value", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\n\nunknown_source = \"hide\"\n", 5, `unknown_source must be "send" or "withhold", not "hide"`},
		{"derived value", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\nderived = true\n", 4, `derived must be "send" or "redact", not true`},
		{"secrets value", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\nsecrets = \"yes\"\n", 4, `secrets must be "send" or "redact", not "yes"`},
		{"misspelt tier key", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\ntool = [\"read\"]\n", 4, `unknown key "tool" in tier "cloud" (did you mean "tools"?`},
		{"TOML syntax error", "default_tier = \"cloud\"\n" + okTiers + "read = [\"/a\"\n", 6, "invalid TOML"},
		{"duplicate key", "default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"c\"\nlabel = \"d\"\n", 4, "invalid TOML"},
		{"CRLF line endings", "default_tier = \"cloud\"\r\n[tiers.cloud]\r\nlabel = \"c\"\r\ndney = []\r\n", 4, `unknown key "dney"`},
		{"byte order mark", "\uFEFFdefault_tier = \"nope\"\n" + okTiers, 1, `default_tier "nope"`},
		{"not UTF-8", "default_tier = \"cloud\"\n" + okTiers[:1] + "[tiers.cloud]\nlabel = \"caf\xe9\"\n", 4, "not valid UTF-8"},
		{"empty file", "", 1, "policy file is empty"},
		{"whitespace only", "\n  \n\t\n", 1, "policy file is empty"},
		{"comments only", "# nothing yet\n", 1, "no tiers defined"},
		{"misspelt default_tier is not also missing", "defaulttier = \"cloud\"\n" + okTiers, 1, `unknown key "defaulttier" at the top level (did you mean "default_tier"?`},
		{"binary file", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 3, "looks binary"},
		{"UTF-16 text", "\xff\xfed\x00e\x00f\x00", 1, "looks binary"},
	}
	t.Setenv("SCRIM_TEST_EMPTY_VAR", "")
	dir := tempRoot(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".toml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := Load(path)
			if p != nil {
				t.Fatalf("a bad policy loaded: %+v", p)
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want a *LoadError, got %v", err)
			}
			prefix := fmt.Sprintf("%s:%d: ", path, tc.line)
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(le.Msg, tc.want) {
				t.Fatalf("error\n  %s\nwant prefix %q and %q", err, prefix, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestLoadReportsEveryProblemInLineOrder(t *testing.T) {
	text := `default_tier = "nope"
[tiers.a]
label = ""
read = ["/[", "/ok"]
[[models]]
match = "x/**"
tier = "b"
`
	_, err := Parse([]byte(text), "/p.toml")
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("got %v", err)
	}
	var got []string
	for _, e := range le.All() {
		got = append(got, fmt.Sprintf("%d %s", e.Line, strings.SplitN(e.Msg, ":", 2)[0]))
	}
	want := []string{
		`1 default_tier "nope" is not a defined tier (tiers`,
		`3 tier "a"`,
		`4 tier "a"`,
		`7 model rule 1 ("x/**")`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasSuffix(err.Error(), "(and 3 more problems)") {
		t.Fatalf("Error() = %q", err)
	}
}

func TestLoadFileProblems(t *testing.T) {
	dir := tempRoot(t)
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, make([]byte, maxPolicySize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "missing.toml"): "cannot read policy: no such file or directory",
		dir:                                "cannot read policy: is a directory",
		big:                                "larger than 4 MiB",
	} {
		p, err := Load(path)
		if p != nil || err == nil || !strings.HasPrefix(err.Error(), path+":1: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, %v; want %q", path, p, err, want)
		}
	}
}

func TestParseEmbeddedNameInErrors(t *testing.T) {
	_, err := Parse([]byte("default_tier = \"x\"\n[tiers.x]\nlabel = \"x\"\nread = [\"rel/**\"]\n"), EmbeddedName)
	if err == nil || !strings.HasPrefix(err.Error(), EmbeddedName+":4: ") || !strings.Contains(err.Error(), "relative pattern") {
		t.Fatalf("got %v", err)
	}
}

func TestResolveLookupOrder(t *testing.T) {
	dir := tempRoot(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("HOME", dir)
	t.Setenv("SCRIM_POLICY", "")
	write := func(path, label string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		text := fmt.Sprintf("default_tier = \"t\"\n[tiers.t]\nlabel = %q\n", label)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	embedded := []byte("default_tier = \"t\"\n[tiers.t]\nlabel = \"embedded\"\n")
	check := func(flag, wantLabel, wantSource string) {
		t.Helper()
		p, err := Resolve(flag, embedded)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Tiers["t"].Label; got != wantLabel || p.Source != wantSource {
			t.Fatalf("label %q source %q, want %q %q", got, p.Source, wantLabel, wantSource)
		}
	}
	check("", "embedded", "built-in")
	userPath, ok := UserPolicyPath()
	if !ok || userPath != filepath.Join(dir, "config/scrim/policy.toml") {
		t.Fatalf("UserPolicyPath = %q, %v", userPath, ok)
	}
	write(userPath, "user")
	check("", "user", "user config")
	t.Setenv("SCRIM_POLICY", write(filepath.Join(dir, "env.toml"), "env"))
	check("", "env", "$SCRIM_POLICY")
	check(write(filepath.Join(dir, "flag.toml"), "flag"), "flag", "--policy")

	// A named file that is missing is an error, never the default.
	t.Setenv("SCRIM_POLICY", filepath.Join(dir, "gone.toml"))
	if p, err := Resolve("", embedded); err == nil {
		t.Fatalf("missing $SCRIM_POLICY loaded %q", p.File)
	}
	if p, err := Resolve(filepath.Join(dir, "gone.toml"), embedded); err == nil {
		t.Fatalf("missing --policy loaded %q", p.File)
	}
	// A broken user config is an error too, not a silent fall-back.
	t.Setenv("SCRIM_POLICY", "")
	if err := os.WriteFile(userPath, []byte("default_tier = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve("", embedded); err == nil || !strings.HasPrefix(err.Error(), userPath+":1: ") {
		t.Fatalf("broken user policy: %v", err)
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"label", "read", "deny"}
	for in, want := range map[string]string{
		"dney": "deny", "deyn": "deny", "lable": "label", "raed": "read", "reads": "read",
		"denied": "", "x": "", "colour": "",
	} {
		got := suggest(in, keys)
		if want == "" && got != "" || want != "" && got != fmt.Sprintf(" (did you mean %q?)", want) {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// The tier keys beyond paths: defaults, and what a policy sets.
func TestTierKeys(t *testing.T) {
	p, err := Parse([]byte(`
default_tier = "plain"
[tiers.plain]
label = "plain"
read = ["/**"]
[tiers.strict]
label = "strict"
read = ["/**"]
tools = ["read", "bash"]
unknown_source = "withhold"
derived = "redact"
secrets = "redact"
[tiers.none]
label = "none"
read = []
tools = []
`), filepath.Join(t.TempDir(), "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	plain, strict, none := p.Tiers["plain"], p.Tiers["strict"], p.Tiers["none"]
	if fmt.Sprint(plain.Tools) != "[read grep glob]" || plain.ToolsLine != 0 || plain.WithholdsUnknown() || plain.RedactsDerived() || plain.RedactsSecrets() {
		t.Errorf("defaults: %+v", plain)
	}
	if fmt.Sprint(strict.Tools) != "[read bash]" || strict.ToolsLine != 9 || !strict.Offers("bash") || strict.Offers("grep") ||
		!strict.WithholdsUnknown() || !strict.RedactsDerived() || !strict.RedactsSecrets() || strict.Keys["secrets"] != 12 {
		t.Errorf("strict: %+v", strict)
	}
	if len(none.Tools) != 0 || none.Tools == nil || none.Offers("read") {
		t.Errorf("none: %+v", none)
	}
}
