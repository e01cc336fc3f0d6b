package policy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// teamPolicy has a tier that reads everything but what the team files deny,
// and one that does not look at them.
const teamPolicy = `
default_tier = "team"
[tiers.team]
label = "team"
read = ["/**"]
deny = ["**/scrim-denied/**"]
deny_files = ["*"]

[tiers.plain]
label = "plain"
read = ["/**"]
`

func writeText(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// teamEnv is a lookup with HOME set to home and nothing else.
func teamEnv(home string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == "HOME" {
			return home, true
		}
		return "", false
	}
}

func loadTeamPolicy(t *testing.T, root string) *Policy {
	t.Helper()
	p, err := ParseEnv([]byte(teamPolicy), filepath.Join(root, "policy.toml"), teamEnv(filepath.Join(root, "home")))
	if err != nil {
		t.Fatal(err)
	}
	p.team.recheck = 0 // every decision looks again: the tests change files
	return p
}

// TestTeamFormats decides paths in a real tree of team files the way each
// format's documentation says. The doc column names the sentence followed.
func TestTeamFormats(t *testing.T) {
	root := tempRoot(t)
	home := filepath.Join(root, "home")
	gi := "https://git-scm.com/docs/gitignore"
	build(t, root,
		// A repository with Cursor's ignore files (gitignore syntax).
		"cur/.git/", "cur/secrets/ok.txt", "cur/secrets/key.txt", "cur/x.pem", "cur/public.pem", "cur/X.PEM",
		"cur/build/out.txt", "cur/app/build/out.txt", "cur/app/keep.pem", "cur/app/y.pem", "cur/app/local.txt",
		"cur/app/notes/secrets", "cur/docs/private/a.md", "cur/docs/public.md", "cur/main.go",
		"cur/logs/debug.log", "cur/logs/keep.log", "cur/a/b/deep/foo.tmp",
		// Gemini Code Assist's .aiexclude: no negation, an empty file denies all below it.
		"gem/.git/", "gem/apikeys.txt", "gem/deep/apikeys.txt", "gem/top.key", "gem/deep/top.key",
		"gem/sub/any.go", "gem/sub/deeper/x.go", "gem/main.go",
		// Windsurf's global ~/.codeium/.codeiumignore, relative to each repository.
		"wind/.git/", "wind/x.secret", "wind/config/prod.yaml", "wind/sub/config/prod.yaml", "wind/ok.go",
		// Claude Code settings, project and user level.
		"cla/.git/", "cla/.env", "cla/sub/.env", "cla/private/a.txt", "cla/sub/private/a.txt", "cla/vendor/v.go",
		"cla/local-only.txt", "cla/infra/main.tfvars", "cla/conf/local.json", "cla/main.go",
		"home/notes/todo.txt", "home/notes/todo.md",
		"other/.git/", "other/conf/local.json", "other/conf/shared.json",
	)
	writeText(t, filepath.Join(root, "cur/.cursorignore"), strings.Join([]string{
		"# secrets and keys", // 1
		"secrets/",           // 2
		"!secrets/ok.txt",    // 3: cannot re-include: its folder is excluded
		"*.pem",              // 4
		"!public.pem",        // 5
		"/build",             // 6: anchored at this folder
		"docs/private/**",    // 7
		"logs/*.log",         // 8
		"!logs/keep.log",     // 9
		"a/**/*.tmp",         // 10
		"",
	}, "\n"))
	writeText(t, filepath.Join(root, "cur/app/.cursorignore"), "!keep.pem\nlocal.txt\n")
	writeText(t, filepath.Join(root, "gem/.aiexclude"), "apikeys.txt\n/top.key\n!apikeys.txt\n")
	writeText(t, filepath.Join(root, "gem/sub/.aiexclude"), "")
	writeText(t, filepath.Join(home, ".codeium/.codeiumignore"), "*.secret\r\n/config/prod.yaml\r\n")
	writeText(t, filepath.Join(root, "cla/.claude/settings.json"), `{
  "permissions": {
    "allow": ["Read(./.env)"],
    "deny": [
      "Read(./.env)",
      "Read(/private/**)",
      "Read(//`+root+`/cla/vendor/**)",
      "Bash(rm:*)",
      "Read(~/notes/*.txt)"
    ]
  }
}
`)
	writeText(t, filepath.Join(root, "cla/.claude/settings.local.json"), `{"permissions": {"deny": ["Read(./local-only.txt)"]}}`)
	writeText(t, filepath.Join(home, ".claude/settings.json"), `{
  "permissions": {
    "deny": ["Read(**/*.tfvars)", "Read(./conf/local.json)"]
  }
}`)
	p := loadTeamPolicy(t, root)
	team, plain := p.Tiers["team"], p.Tiers["plain"]

	cases := []struct {
		path string
		file string // team file that denies it, with its line; "" = allowed
		doc  string
	}{
		{"cur/main.go", "", gi + ": a path no pattern matches is not ignored"},
		{"cur/secrets/key.txt", "cur/.cursorignore:2", gi + `: "frotz/" matches a directory frotz and paths underneath it`},
		{"cur/secrets/ok.txt", "cur/.cursorignore:2", gi + ": it is not possible to re-include a file if a parent directory of that file is excluded"},
		{"cur/x.pem", "cur/.cursorignore:4", gi + ": a pattern with no slash matches at any level below the .gitignore"},
		{"cur/public.pem", "", gi + ": ! negates: a matching file excluded by a previous pattern becomes included again"},
		{"cur/X.PEM", "", "cursor.com/docs (ignore files): .gitignore syntax, which is case-sensitive; no format here documents otherwise"},
		{"cur/build/out.txt", "cur/.cursorignore:6", gi + ": a leading slash anchors the pattern to the directory of the file"},
		{"cur/app/build/out.txt", "", gi + `: "/build" does not match "app/build"`},
		{"cur/app/keep.pem", "", gi + ": patterns in a lower-level file override those in higher-level files"},
		{"cur/app/y.pem", "cur/.cursorignore:4", gi + ": a parent folder's file still applies below it"},
		{"cur/app/local.txt", "cur/app/.cursorignore:2", gi + ": each folder's file is read for the paths below it"},
		{"cur/app/notes/secrets", "", gi + `: "foo/" will not match a regular file foo`},
		{"cur/docs/private/a.md", "cur/.cursorignore:7", gi + `: a trailing "/**" matches everything inside`},
		{"cur/docs/public.md", "", gi + `: "docs/private/**" matches only inside docs/private`},
		{"cur/logs/debug.log", "cur/.cursorignore:8", gi + ": a slash in the middle anchors the pattern; * does not match a slash"},
		{"cur/logs/keep.log", "", gi + ": a later negation re-includes a file whose folder is not excluded"},
		{"cur/a/b/deep/foo.tmp", "cur/.cursorignore:10", gi + `: "a/**/b" matches zero or more directories`},

		{"gem/apikeys.txt", "gem/.aiexclude:1", "cloud.google.com/gemini/docs/codeassist/create-aiexclude-file: apikeys.txt blocks files of that name at or below the folder"},
		{"gem/deep/apikeys.txt", "gem/.aiexclude:1", "create-aiexclude-file: apikeys.txt blocks it in every sub-directory too; ! negation is not supported"},
		{"gem/top.key", "gem/.aiexclude:2", "create-aiexclude-file: /apikeys.txt blocks the file in the same directory only"},
		{"gem/deep/top.key", "", "create-aiexclude-file: ... but not in any subdirectory"},
		{"gem/sub/any.go", "gem/sub/.aiexclude", "create-aiexclude-file: an empty .aiexclude blocks all files in its directory and all sub-directories"},
		{"gem/sub/deeper/x.go", "gem/sub/.aiexclude", "create-aiexclude-file: same as a file that contains **/*"},
		{"gem/main.go", "", "create-aiexclude-file: files no line matches are shared"},

		{"wind/x.secret", "home/.codeium/.codeiumignore:1", "docs.windsurf.com (Cascade ignore): a global .codeiumignore in ~/.codeium applies to every repository"},
		{"wind/config/prod.yaml", "home/.codeium/.codeiumignore:2", "docs.windsurf.com: gitignore syntax; a global file's anchored pattern is relative to the repository root"},
		{"wind/sub/config/prod.yaml", "", gi + ": an anchored pattern does not match deeper"},
		{"wind/ok.go", "", "no line matches"},

		{"cla/.env", "cla/.claude/settings.json:5", "code.claude.com/docs/en/permissions: Read(./path) is relative to the current directory (the project's)"},
		{"cla/private/a.txt", "cla/.claude/settings.json:6", "code.claude.com/docs/en/permissions: Read(/path) is relative to the settings file's project"},
		{"cla/sub/private/a.txt", "", "permissions: Read and Edit rules follow the gitignore specification: /private is anchored"},
		{"cla/vendor/v.go", "cla/.claude/settings.json:7", "permissions: Read(//path) is an absolute path from the filesystem root"},
		{"cla/main.go", "", "permissions: Bash(...) and allow rules deny no read"},
		{"cla/local-only.txt", "cla/.claude/settings.local.json:1", "settings: .claude/settings.local.json is read with the project's settings"},
		{"cla/infra/main.tfvars", "home/.claude/settings.json:3", "settings: ~/.claude/settings.json applies in every project"},
		{"other/conf/local.json", "home/.claude/settings.json:3", "permissions: ./path in user settings is relative to the working folder: each path's repository root"},
		{"other/conf/shared.json", "", "no rule matches"},
		{"home/notes/todo.txt", "cla/.claude/settings.json", "not decided here: a project's ~ rule governs paths inside that project only (see docs/policy.md)"},
	}
	for _, c := range cases {
		path := filepath.Join(root, c.path)
		d := p.Decide(team, path)
		if c.path == "home/notes/todo.txt" {
			// A project's ~/ rule is found only for paths inside the project.
			if !d.Allowed {
				t.Errorf("%s: denied (%s), want allowed: the rule lives in a project's settings", c.path, d.Reason)
			}
			continue
		}
		if want := c.file == ""; d.Allowed != want {
			t.Errorf("%s: allowed=%v (%s), want allowed=%v\n\tper %s", c.path, d.Allowed, d.Reason, want, c.doc)
			continue
		}
		if !p.Decide(plain, path).Allowed {
			t.Errorf("%s: denied for a tier without deny_files", c.path)
		}
		if c.file == "" {
			continue
		}
		file, line, _ := strings.Cut(c.file, ":")
		if d.File != filepath.Join(root, file) {
			t.Errorf("%s: decided by %q, want %s (%s)", c.path, d.File, file, c.doc)
		}
		if line != "" && line != strconv.Itoa(d.Line) {
			t.Errorf("%s: decided by line %d (%s), want line %s", c.path, d.Line, d.Pattern, line)
		}
		if !strings.HasPrefix(d.Reason, "denied by "+d.File) || d.Kind != "deny" {
			t.Errorf("%s: reason %q kind %q, want it to name %s", c.path, d.Reason, d.Kind, d.File)
		}
	}
}

// TestTeamFilesFailClosed: a team file that cannot be read or parsed, or a
// line that cannot be translated exactly, denies what the file governs,
// with a reason; a tier without deny_files is not affected.
func TestTeamFilesFailClosed(t *testing.T) {
	root := tempRoot(t)
	build(t, root,
		"unread/.git/", "unread/.cursorignore/", "unread/a.go", // a folder where the file should be: cannot be read
		"badjson/.git/", "badjson/b.go",
		"untr/.git/", "untr/sub/c.go", "untr/d.go",
		"outside/e.go",
	)
	writeText(t, filepath.Join(root, "badjson/.claude/settings.json"), `{"permissions": {"deny": ["Read(./x)"],}}`)
	writeText(t, filepath.Join(root, "untr/sub/.aiignore"), "ok.txt\n[[:alpha:]]*.go\n")
	p := loadTeamPolicy(t, root)
	team, plain := p.Tiers["team"], p.Tiers["plain"]
	for _, c := range []struct{ path, reason string }{
		{"unread/a.go", "cannot read " + filepath.Join(root, "unread/.cursorignore")},
		{"badjson/b.go", "cannot parse " + filepath.Join(root, "badjson/.claude/settings.json")},
		{"untr/sub/c.go", "a line scrim cannot translate exactly denies everything below " + filepath.Join(root, "untr/sub")},
	} {
		d := p.Decide(team, filepath.Join(root, c.path))
		if d.Allowed || !strings.Contains(d.Reason, c.reason) || !strings.Contains(d.Reason, "fail closed") {
			t.Errorf("%s: allowed=%v reason %q, want denied with %q (fail closed)", c.path, d.Allowed, d.Reason, c.reason)
		}
		if !p.Decide(plain, filepath.Join(root, c.path)).Allowed {
			t.Errorf("%s: denied for a tier without deny_files", c.path)
		}
	}
	for _, ok := range []string{"untr/d.go", "outside/e.go"} {
		if d := p.Decide(team, filepath.Join(root, ok)); !d.Allowed {
			t.Errorf("%s: denied (%s); the broken files do not govern it", ok, d.Reason)
		}
	}
	r := p.TeamFiles(filepath.Join(root, "untr/sub"))
	if r.Root != filepath.Join(root, "untr") || len(r.Files) != 1 {
		t.Fatalf("report for untr/sub: root %q, %d files, want the repository and its .aiignore", r.Root, len(r.Files))
	}
	if n := r.Files[0].Notes; len(n) != 1 || n[0].Line != 2 || !strings.Contains(n[0].Why, "POSIX") || !strings.Contains(n[0].Treated, "fail closed") {
		t.Errorf("notes %+v, want line 2 with why (POSIX classes) and how it was treated", n)
	}

	if os.Geteuid() != 0 { // root reads everything
		build(t, root, "locked/.git/", "locked/in/f.go")
		writeText(t, filepath.Join(root, "locked/.cursorignore"), "x\n")
		if err := os.Chmod(filepath.Join(root, "locked/.cursorignore"), 0); err != nil {
			t.Fatal(err)
		}
		if d := p.Decide(team, filepath.Join(root, "locked/in/f.go")); d.Allowed || !strings.Contains(d.Reason, "permission denied") {
			t.Errorf("an unreadable .cursorignore: allowed=%v (%s), want denied naming the error", d.Allowed, d.Reason)
		}
	}
}

// TestTeamFilesChange: an edited, added or removed team file changes the
// decisions once the folder is looked at again.
func TestTeamFilesChange(t *testing.T) {
	root := tempRoot(t)
	build(t, root, "r/.git/", "r/a.txt", "r/b.txt")
	p := loadTeamPolicy(t, root)
	now := time1
	p.team.recheck = recheckTeam
	p.team.now = func() time.Time { return now }
	team := p.Tiers["team"]
	a := filepath.Join(root, "r/a.txt")
	if !p.Decide(team, a).Allowed {
		t.Fatal("a.txt denied with no team file")
	}
	ignore := filepath.Join(root, "r/.cursorignore")
	writeText(t, ignore, "a.txt\n")
	if !p.Decide(team, a).Allowed {
		t.Fatal("the new file took effect before the folder was looked at again: the cache is not used")
	}
	now = now.Add(recheckTeam)
	if d := p.Decide(team, a); d.Allowed || d.File != ignore {
		t.Fatalf("a new .cursorignore: allowed=%v (%s), want denied by it", d.Allowed, d.Reason)
	}
	writeText(t, ignore, "b.txt\n") // same size: the stamp's mtime or inode tells
	os.Chtimes(ignore, time1, time1.Add(time.Hour))
	now = now.Add(recheckTeam)
	if !p.Decide(team, a).Allowed || p.Decide(team, filepath.Join(root, "r/b.txt")).Allowed {
		t.Fatal("an edited .cursorignore was not re-read")
	}
	os.Remove(ignore)
	now = now.Add(recheckTeam)
	if !p.Decide(team, filepath.Join(root, "r/b.txt")).Allowed {
		t.Fatal("a removed .cursorignore still denies")
	}
}

var time1 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestTeamFilesScrimDenyWins: a negation in a team file never re-allows what
// the policy's own deny patterns deny, and a symlink into a denied folder
// is denied by the file that governs its target.
func TestTeamFilesScrimDenyWins(t *testing.T) {
	root := tempRoot(t)
	build(t, root, "r/.git/", "r/scrim-denied/x.txt", "r/hidden/h.txt", "out/link -> ../r/hidden/h.txt")
	writeText(t, filepath.Join(root, "r/.cursorignore"), "*\n!scrim-denied/\n!scrim-denied/x.txt\n!.cursorignore\nhidden/\n")
	p := loadTeamPolicy(t, root)
	team := p.Tiers["team"]
	if d := p.Decide(team, filepath.Join(root, "r/scrim-denied/x.txt")); d.Allowed || d.File != "" || d.Pattern != "**/scrim-denied/**" {
		t.Errorf("scrim-denied/x.txt: allowed=%v by %q %q, want denied by the policy's deny pattern", d.Allowed, d.File, d.Pattern)
	}
	if d := p.Decide(team, filepath.Join(root, "out/link")); d.Allowed || !d.ViaCanonical || d.Line != 5 {
		t.Errorf("a link to r/hidden/h.txt: allowed=%v via canonical %v line %d (%s), want denied by line 5 on its resolved path", d.Allowed, d.ViaCanonical, d.Line, d.Reason)
	}
}

func TestDenyFilesKey(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{`[".cursorignre"]`, `unknown team file ".cursorignre" (did you mean ".cursorignore"?)`},
		{`[".aiexclude", ".aiexclude"]`, `".aiexclude" is listed twice`},
		{`".cursorignore"`, `deny_files must be an array of team file names`},
		{`[1]`, `deny_files must be strings`},
	} {
		_, err := Parse([]byte("default_tier = \"t\"\n[tiers.t]\nlabel = \"t\"\nread = [\"/**\"]\ndeny_files = "+c.value+"\n"), "/p/policy.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "policy.toml:5:") {
			t.Errorf("deny_files = %s: %v, want line 5 and %q", c.value, err, c.want)
		}
	}
	p, err := Parse([]byte("default_tier = \"t\"\n[tiers.t]\nlabel = \"t\"\nread = [\"/**\"]\ndeny_files = [\"*\", \".clineignore\"]\n"), "/p/policy.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Tiers["t"].DenyFiles; len(got) != len(TeamFormats) {
		t.Errorf(`"*" gave %d formats, want all %d`, len(got), len(TeamFormats))
	}
}

// TestEachTeamFormat: every format deny_files knows is found where its tool
// puts it, denies for a tier that names it, and is ignored by a tier that
// names another.
func TestEachTeamFormat(t *testing.T) {
	for i, f := range TeamFormats {
		t.Run(f.Name, func(t *testing.T) {
			root := tempRoot(t)
			home := filepath.Join(root, "home")
			build(t, root, "repo/.git/", "repo/sub/only.txt", "repo/sub/other.txt", "repo/g/global.txt")
			for j, name := range f.inDir {
				path := filepath.Join(root, "repo/sub", name)
				text := "only.txt\n"
				if f.syn == claudeSyntax {
					text = `{"permissions": {"deny": ["Read(only.txt)"]}}`
				}
				if j > 0 { // a second file of the same format: settings.local.json
					text = strings.Replace(text, "only.txt", "other.txt", 1)
				}
				writeText(t, path, text)
			}
			if len(f.home) > 0 {
				text := "/g/global.txt\n"
				if f.syn == claudeSyntax {
					text = `{"permissions": {"deny": ["Read(./g/global.txt)"]}}`
				}
				writeText(t, filepath.Join(home, f.home[0]), text)
			}
			other := TeamFormats[(i+1)%len(TeamFormats)].Name
			text := "default_tier = \"named\"\n[tiers.named]\nlabel = \"n\"\nread = [\"/**\"]\ndeny_files = [\"" + f.Name + "\"]\n" +
				"[tiers.other]\nlabel = \"o\"\nread = [\"/**\"]\ndeny_files = [\"" + other + "\"]\n"
			p, err := ParseEnv([]byte(text), filepath.Join(root, "policy.toml"), teamEnv(home))
			if err != nil {
				t.Fatal(err)
			}
			only := filepath.Join(root, "repo/sub/only.txt")
			if d := p.Decide(p.Tiers["named"], only); d.Allowed || d.File != filepath.Join(root, "repo/sub", f.inDir[0]) {
				t.Errorf("only.txt: allowed=%v by %q, want denied by %s", d.Allowed, d.File, f.inDir[0])
			}
			if d := p.Decide(p.Tiers["other"], only); !d.Allowed {
				t.Errorf("only.txt denied for a tier naming %s: %s", other, d.Reason)
			}
			if len(f.inDir) > 1 {
				if d := p.Decide(p.Tiers["named"], filepath.Join(root, "repo/sub/other.txt")); d.Allowed {
					t.Errorf("%s is not read", f.inDir[1])
				}
			}
			if len(f.home) > 0 {
				d := p.Decide(p.Tiers["named"], filepath.Join(root, "repo/g/global.txt"))
				if d.Allowed || d.File != filepath.Join(home, f.home[0]) {
					t.Errorf("the global %s does not deny g/global.txt: allowed=%v %s", f.home[0], d.Allowed, d.Reason)
				}
			}
		})
	}
}

// FuzzTeamFile: whatever a team file holds, deciding under it neither panics
// nor allows what the same file denied a moment ago.
func FuzzTeamFile(f *testing.F) {
	for _, s := range []string{"secrets/\n!secrets/ok\n", "[!a]*\n**x**\n\\\n[[:alpha:]]\n", "", "!\n/\n**\n", `{"permissions":{"deny":["Read(~/x)","Read(//a/**)","Read","Read(../y)"]}}`, "\xff\xfe*\r\n"} {
		f.Add(s)
	}
	root := tempRoot(f)
	build(f, root, "r/.git/", "r/a/b/c.txt", "r/secrets/ok", "r/x")
	p, err := ParseEnv([]byte(teamPolicy), filepath.Join(root, "policy.toml"), teamEnv(filepath.Join(root, "home")))
	if err != nil {
		f.Fatal(err)
	}
	p.team.recheck = 0
	paths := []string{"r/a/b/c.txt", "r/secrets/ok", "r/x", "r/a"}
	f.Fuzz(func(t *testing.T, text string) {
		for _, name := range []string{".cursorignore", ".aiexclude", ".claude/settings.json"} {
			path := filepath.Join(root, "r", name)
			writeText(t, path, text)
			for _, rel := range paths {
				first := p.Decide(p.Tiers["team"], filepath.Join(root, rel))
				if again := p.Decide(p.Tiers["team"], filepath.Join(root, rel)); again.Allowed != first.Allowed {
					t.Fatalf("%s under %s %q: %v then %v", rel, name, text, first.Allowed, again.Allowed)
				}
			}
			os.Remove(path)
		}
	})
}
