//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// pathRow is one way of reaching (or seeming to reach) a file. The limited
// model runs args; the trusted model runs trusted (args if nil), which brings
// secrets into the history; then the tree may change (between) before the
// limited model's request is built.
type pathRow struct {
	name  string
	setup func(t *testing.T, f *advFixture)
	args  []string
	code  int      // limited model's exit code
	want  []string // in the limited model's output (allowed content, notes)

	trusted []string
	tcode   int      // trusted model's exit code
	got     []string // secrets the trusted model's run must return

	between func(t *testing.T, f *advFixture)
	denied  []string // paths (relative to the workspace, or with {vars}) redact must replace
	kept    []string // text redact must still send
}

const (
	deniedNote  = `read denied: trust tier "limited" does not have read access to `
	skippedNote = `that trust tier "limited" may not read]`
)

func pathRows() []pathRow {
	key := advSecrets["secrets/key.txt"]
	return []pathRow{
		// Symlinks into the denied folder.
		{name: "file symlink, relative target", args: []string{"read", "link-file"}, code: 3, want: []string{deniedNote}, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "file symlink, absolute target", args: []string{"read", "link-abs"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "folder symlink", args: []string{"read", "link-dir/key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "chain of file links through a folder link and ..", args: []string{"read", "chain1"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "chain of folder links", args: []string{"read", "chaindir/sub/deep.txt"}, code: 3, got: []string{advSecrets["secrets/sub/deep.txt"]}, denied: []string{"secrets/sub/deep.txt"}},
		{name: "link with a public name", args: []string{"read", "public/looks-public.txt"}, code: 3, got: []string{advSecrets["secrets/[abc].txt"]}, denied: []string{"secrets/[abc].txt"}},
		{name: "link to a denied .env", args: []string{"read", "env-link"}, code: 3, got: []string{advSecrets["app/.env"]}, denied: []string{"app/.env"}},
		{name: "link loop", args: []string{"read", "loop1"}, code: 3, want: []string{deniedNote}, tcode: 3},
		{name: "grep through a folder link", args: []string{"grep", "SECRET-", "link-dir"}, want: []string{skippedNote, "No matches"},
			got: []string{key, advSecrets["secrets/sub/deep.txt"], advSecrets["secrets/{a,b}.txt"]}, denied: []string{"secrets/key.txt", "secrets/sub/deep.txt", "secrets/{a,b}.txt", "secrets/\uFFFD\uFFFD.txt"}},
		{name: "grep of the whole tree (links, loops, mirrors)", args: []string{"grep", "-i", "secret-|public-", "."}, want: []string{skippedNote, "PUBLIC-readme", "PUBLIC-meta", "PUBLIC-nonutf8"},
			got: []string{key, advSecrets[".env"], advSecrets["secrets/new\nline.txt"]}, denied: []string{"secrets/key.txt", ".env", "app/.env", "secrets/new\nline.txt"}, kept: []string{"PUBLIC-readme", "PUBLIC-newline"}},
		{name: "glob --content of the whole tree", args: []string{"glob", "**", "--content"}, want: []string{skippedNote, "PUBLIC-main"},
			got: []string{key, advSecrets["public/[x] {y} *?/.env"], advSecrets["secrets/*.txt"]}, denied: []string{"secrets/key.txt", "public/[x] {y} *?/.env", "secrets/*.txt", "\uFFFDdir/.env"}, kept: []string{"PUBLIC-main"}},
		{name: "glob with an absolute pattern into the denied folder", args: []string{"glob", "{wsglob}/secrets/*.txt", "--content"}, want: []string{skippedNote},
			got: []string{advSecrets["secrets/?.txt"]}, denied: []string{"secrets/?.txt", "secrets/with space.txt"}},

		// Path spelling.
		{name: ".. out of a public folder", args: []string{"read", "public/../secrets/key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: ".. inside the denied folder", args: []string{"read", "secrets/sub/../key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "absolute with . and ..", args: []string{"read", "{ws}/public/./../secrets/./key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		// Tools clean paths lexically, then decide and open that same path:
		// "dotdot/.." is the public folder, where no key.txt exists.
		{name: ".. after a folder link is lexical", args: []string{"read", "public/dotdot/../key.txt"}, code: 1, want: []string{"does not exist"}, tcode: 1},
		{name: "double slashes", args: []string{"read", "secrets//key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "absolute with double slashes", args: []string{"read", "/{ws}//secrets///key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "trailing slash on a file", args: []string{"read", "secrets/key.txt/"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "grep a denied folder with trailing slashes", args: []string{"grep", "SECRET-", "secrets//sub/"}, want: []string{skippedNote},
			got: []string{advSecrets["secrets/sub/deep.txt"]}, denied: []string{"secrets/sub/deep.txt"}},
		{name: "glob a denied folder with a trailing slash", args: []string{"glob", "*", "secrets/", "--content"}, want: []string{skippedNote},
			got: []string{advSecrets["secrets/with space.txt"]}, denied: []string{"secrets/with space.txt"}},

		// The denied folder through a symlinked parent.
		{name: "parent links to the workspace", args: []string{"read", "mirror/secrets/key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "parent links, repeated", args: []string{"read", "mirror/mirror/mirror/secrets/sub/deep.txt"}, code: 3, got: []string{advSecrets["secrets/sub/deep.txt"]}, denied: []string{"secrets/sub/deep.txt"}},
		{name: "parent link to ..", args: []string{"read", "public/up/secrets/key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "workspace reached from outside", args: []string{"read", "{out}/alias/secrets/key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "/proc/self/root", args: []string{"read", "/proc/self/root{ws}/secrets/key.txt"}, code: 3, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "grep below a mirrored denied folder", args: []string{"grep", "SECRET-", "mirror/secrets"}, want: []string{skippedNote}, got: []string{key}, denied: []string{"secrets/key.txt"}},
		{name: "glob --content through a mirror", args: []string{"glob", "**/*.txt", "mirror", "--content"}, want: []string{skippedNote, "PUBLIC-readme"},
			got: []string{key}, denied: []string{"secrets/key.txt", "secrets/sub/deep.txt"}, kept: []string{"PUBLIC-readme"}},
		// A public file seen through a link inside the denied folder: the
		// tool refuses the path as given; in history the content carries its
		// canonical (public) path, so the limited model is sent it.
		{name: "public file through a link in the denied folder", args: []string{"read", "secrets/inner/readme.txt"}, code: 3, want: []string{deniedNote}, kept: []string{"PUBLIC-readme"}},

		// Names.
		{name: "name with [ ]", args: []string{"read", "secrets/[abc].txt"}, code: 3, got: []string{advSecrets["secrets/[abc].txt"]}, denied: []string{"secrets/[abc].txt"}},
		{name: "name with *", args: []string{"read", "secrets/*.txt"}, code: 3, got: []string{advSecrets["secrets/*.txt"]}, denied: []string{"secrets/*.txt"}},
		{name: "name with ?", args: []string{"read", "secrets/?.txt"}, code: 3, got: []string{advSecrets["secrets/?.txt"]}, denied: []string{"secrets/?.txt"}},
		{name: "name with { }", args: []string{"read", "secrets/{a,b}.txt"}, code: 3, got: []string{advSecrets["secrets/{a,b}.txt"]}, denied: []string{"secrets/{a,b}.txt"}},
		{name: "name with a space", args: []string{"read", "secrets/with space.txt"}, code: 3, got: []string{advSecrets["secrets/with space.txt"]}, denied: []string{"secrets/with space.txt"}},
		{name: "name with a newline", args: []string{"read", "secrets/new\nline.txt"}, code: 3, got: []string{advSecrets["secrets/new\nline.txt"]}, denied: []string{"secrets/new\nline.txt"}},
		// JSON cannot hold the raw bytes: the tool's input and the stored
		// sourcePath carry U+FFFD instead, which still matches the deny.
		{name: "non-UTF-8 name", args: []string{"read", "secrets/\xff\xfe.txt"}, code: 3,
			trusted: []string{"grep", "SECRET-nonutf8", "secrets"}, got: []string{advSecrets["secrets/\xff\xfe.txt"]}, denied: []string{"secrets/\uFFFD\uFFFD.txt"}},
		{name: "non-UTF-8 folder holding .env", args: []string{"grep", "SECRET-env", "."}, want: []string{skippedNote},
			got: []string{advSecrets["\xffdir/.env"]}, denied: []string{"\uFFFDdir/.env"}},
		{name: ".env below glob characters", args: []string{"read", "public/[x] {y} *?/.env"}, code: 3, got: []string{advSecrets["public/[x] {y} *?/.env"]}, denied: []string{"public/[x] {y} *?/.env"}},
		{name: "allowed: glob characters", args: []string{"read", "public/[x] {y} *?/a.txt"}, want: []string{"PUBLIC-meta"}, kept: []string{"PUBLIC-meta"}},
		{name: "allowed: named like the denied folder", args: []string{"read", "public/secrets.txt"}, want: []string{"PUBLIC-named-secrets"}, kept: []string{"PUBLIC-named-secrets"}},
		{name: "allowed: [secrets] folder", args: []string{"read", "public/[secrets]/x.txt"}, want: []string{"PUBLIC-bracket-secrets"}, kept: []string{"PUBLIC-bracket-secrets"}},
		{name: "allowed: .envrc", args: []string{"read", "public/.envrc"}, want: []string{"PUBLIC-envrc"}, kept: []string{"PUBLIC-envrc"}},
		{name: "allowed: newline in the name", args: []string{"read", "public/new\nline ok.txt"}, want: []string{"PUBLIC-newline"}, kept: []string{"PUBLIC-newline"}},

		// The tree changes between the read and the redaction.
		{name: "secret deleted", args: []string{"read", "secrets/key.txt"}, code: 3, got: []string{key},
			between: func(t *testing.T, f *advFixture) { must(t, os.Remove(f.path("secrets/key.txt"))) }, denied: []string{"secrets/key.txt"}},
		{name: "denied folder deleted", args: []string{"read", "secrets/sub/deep.txt"}, code: 3, got: []string{advSecrets["secrets/sub/deep.txt"]},
			between: func(t *testing.T, f *advFixture) { must(t, os.RemoveAll(f.path("secrets"))) }, denied: []string{"secrets/sub/deep.txt"}},
		{name: "secret replaced by a link to a public file", args: []string{"read", "secrets/key.txt"}, code: 3, got: []string{key},
			between: func(t *testing.T, f *advFixture) { f.replaceWithLink(t, "secrets/key.txt", "../public/readme.txt") }, denied: []string{"secrets/key.txt"}},
		{name: "denied folder replaced by a link to a public one", args: []string{"read", "secrets/key.txt"}, code: 3, got: []string{key},
			between: func(t *testing.T, f *advFixture) { f.replaceWithLink(t, "secrets", "public") }, denied: []string{"secrets/key.txt"}},
		{name: "link read, then removed", args: []string{"read", "link-file"}, code: 3, got: []string{key},
			between: func(t *testing.T, f *advFixture) { must(t, os.Remove(f.path("link-file"))) }, denied: []string{"secrets/key.txt"}},
		{name: "link read, then pointed at a public file", args: []string{"read", "link-file"}, code: 3, got: []string{key},
			between: func(t *testing.T, f *advFixture) { f.replaceWithLink(t, "link-file", "public/readme.txt") }, denied: []string{"secrets/key.txt"}},
		// Fail closed the other way: public content whose path now resolves
		// into the denied folder is withheld.
		{name: "public file replaced by a link into the denied folder", args: []string{"read", "public/readme.txt"}, want: []string{"PUBLIC-readme"},
			between: func(t *testing.T, f *advFixture) { f.replaceWithLink(t, "public/readme.txt", "../secrets/key.txt") }, denied: []string{"public/readme.txt"}},

		// Long paths.
		{name: "near PATH_MAX", setup: longSecret("near", 'n', 3990), args: []string{"read", "{near}/long.txt"}, code: 3,
			got: []string{"SECRET-long-near"}, denied: []string{"{near}/long.txt"}},
		{name: "deeper than PATH_MAX", setup: longSecret("deep", 'd', 4300), args: []string{"read", "{deep}/long.txt"}, code: 3, tcode: 3},
		{name: "grep above a folder deeper than PATH_MAX", setup: longSecret("deep", 'd', 4300), args: []string{"grep", "SECRET-long", "secrets"}, want: []string{"No matches"},
			trusted: []string{"grep", "SECRET-long", "secrets"}},
		{name: "short link to a folder deeper than PATH_MAX", setup: shortLinkToDeep, args: []string{"read", "short/long.txt"}, code: 3, want: []string{deniedNote}, tcode: 3},

		// Not a regular file: refused at once, never waited on.
		{name: "FIFO", setup: fifo, args: []string{"read", "public/pipe"}, code: 1, want: []string{"not a regular file"}, tcode: 1},
	}
}

func TestAdversarialPaths(t *testing.T) {
	t.Parallel()
	for _, row := range pathRows() {
		t.Run(row.name, func(t *testing.T) {
			if strings.Contains(strings.Join(row.args, " "), "/proc/") && runtime.GOOS != "linux" {
				t.Skip("no /proc here")
			}
			f := newAdvFixture(t)
			if row.setup != nil {
				row.setup(t, f)
			}
			row.check(t, f)
		})
	}
}

func (row pathRow) check(t *testing.T, f *advFixture) {
	// What the limited model's tools may read.
	out, errOut, code := f.tool(t, "demo/limited", row.args)
	if code != row.code {
		t.Fatalf("limited %q: exit %d, want %d\nstdout: %s\nstderr: %s", row.args, code, row.code, out, errOut)
	}
	f.noSecret(t, "limited tool output", out+errOut)
	for _, w := range row.want {
		if !strings.Contains(out, w) {
			t.Errorf("limited output lacks %q:\n%s", w, out)
		}
	}
	f.noSecret(t, "store after the limited run", f.storedText(t))

	// The trusted model brings secrets into the history.
	targs := row.trusted
	if targs == nil {
		targs = row.args
	}
	out, errOut, code = f.tool(t, "demo/trusted", targs)
	if code != row.tcode {
		t.Fatalf("trusted %q: exit %d, want %d\nstdout: %s\nstderr: %s", targs, code, row.tcode, out, errOut)
	}
	for _, s := range row.got {
		if !strings.Contains(out, s) {
			t.Fatalf("trusted output lacks %q, so the row proves nothing:\n%s", s, out)
		}
	}
	if row.between != nil {
		row.between(t, f)
	}

	// What the limited model would be sent.
	doc := f.redact(t, "demo/limited")
	f.noSecret(t, "redact --model demo/limited", doc.raw)
	if doc.Tier.Label != "limited" {
		t.Errorf("redact tier %+v, want label limited", doc.Tier)
	}
	ph := doc.placeholders(t, "limited")
	var reported []string
	for _, d := range doc.Report.DeniedPaths {
		reported = append(reported, d.Path)
	}
	for _, rel := range row.denied {
		p := f.expand(rel)
		if !filepath.IsAbs(p) {
			p = f.path(rel)
		}
		if !ph[p] || !slices.Contains(reported, p) {
			t.Errorf("no placeholder or report entry for %q; placeholders %q, report %q", p, keys(ph), reported)
		}
	}
	for _, k := range row.kept {
		if !strings.Contains(doc.raw, k) {
			t.Errorf("redact for limited lost allowed text %q", k)
		}
	}
	// The store still holds what the trusted model read.
	full := f.redact(t, "demo/trusted")
	for _, s := range row.got {
		if !strings.Contains(full.raw, s) {
			t.Errorf("redact for trusted lacks %q: redaction changed the store?", s)
		}
	}
}

func (f *advFixture) noSecret(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range f.secrets {
		if strings.Contains(text, s) {
			t.Fatalf("BYPASS: %s holds %q:\n%s", where, s, text)
		}
	}
}

// longSecret puts a secret in a chain of folders below secrets/ that is at
// least length bytes long, and names that folder {name}.
func longSecret(name string, c byte, length int) func(*testing.T, *advFixture) {
	return func(t *testing.T, f *advFixture) {
		dir := mkdirDeep(t, f.path("secrets"), c, 50, length)
		if n := len(dir + "/long.txt"); n < 4096 != (length < 4096) {
			t.Fatalf("%s: path of %d bytes is on the wrong side of PATH_MAX", name, n)
		}
		text := "SECRET-long-" + name
		writeDeep(t, dir, "long.txt", text+"\n")
		f.secrets = append(f.secrets, text)
		f.vars[name] = dir
	}
}

// shortLinkToDeep links short → a folder whose canonical path is longer than
// PATH_MAX, though the link and its target are each short enough.
func shortLinkToDeep(t *testing.T, f *advFixture) {
	// Names of 50 bytes let the target end just under the symlink limit.
	dir := mkdirDeep(t, f.path("secrets"), 's', 50, len(f.ws)+4040)
	writeDeep(t, dir, "long.txt", "SECRET-long-short\n")
	f.secrets = append(f.secrets, "SECRET-long-short")
	rel := strings.TrimPrefix(dir, f.ws+"/")
	if len(rel) >= 4096 {
		t.Fatalf("link target %d bytes: too long for a symlink", len(rel))
	}
	must(t, os.Symlink(rel, f.path("short")))
}

func fifo(t *testing.T, f *advFixture) {
	must(t, syscall.Mkfifo(f.path("public/pipe"), 0o644))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestHardLinkIsNotDetected pins a documented limit (README, Security notes):
// a hard link is the same file under a second name, and policy decides by
// name. A hard link to a secret placed in a readable folder is readable. If
// this test starts failing, scrim has learned to see hard links: update the
// security notes.
func TestHardLinkIsNotDetected(t *testing.T) {
	t.Parallel()
	f := newAdvFixture(t)
	must(t, os.Link(f.path("secrets/key.txt"), f.path("public/hard.txt")))
	out, _, code := f.tool(t, "demo/limited", []string{"read", "public/hard.txt"})
	if code != exitOK || !strings.Contains(out, advSecrets["secrets/key.txt"]) {
		t.Fatalf("exit %d, output %q: a hard link is now refused; update the security notes", code, out)
	}
}
