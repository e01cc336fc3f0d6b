//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// The hostile tree of the adversarial path suite. The workspace's own name
// holds glob characters and a space, so that the policy has to escape them
// and a careless matcher would read them as a pattern.
const advWorkspace = "ws [1] {a,b} *?"

// advSecrets are the texts that must never reach the limited model, by file
// (relative to the workspace). Each is distinct so that a row can say which
// one the trusted model read.
var advSecrets = map[string]string{
	"secrets/key.txt":        "SECRET-key-5b1f",
	"secrets/sub/deep.txt":   "SECRET-deep-0c9e",
	"secrets/[abc].txt":      "SECRET-brackets-77d2",
	"secrets/*.txt":          "SECRET-star-3a40",
	"secrets/?.txt":          "SECRET-question-e81b",
	"secrets/{a,b}.txt":      "SECRET-braces-19fc",
	"secrets/with space.txt": "SECRET-space-6d03",
	"secrets/new\nline.txt":  "SECRET-newline-a2c7",
	"secrets/\xff\xfe.txt":   "SECRET-nonutf8-4e95",
	".env":                   "SECRET-env-root-b0d6",
	"app/.env":               "SECRET-env-app-58aa",
	"\xffdir/.env":           "SECRET-env-nonutf8-c3f1",
	"public/[x] {y} *?/.env": "SECRET-env-meta-90be",
}

// advPublic are files the limited tier may read.
var advPublic = map[string]string{
	"public/readme.txt":        "PUBLIC-readme",
	"public/[x] {y} *?/a.txt":  "PUBLIC-meta",
	"public/secrets.txt":       "PUBLIC-named-secrets",
	"public/[secrets]/x.txt":   "PUBLIC-bracket-secrets",
	"app/main.go":              "PUBLIC-main",
	"public/.envrc":            "PUBLIC-envrc",
	"public/new\nline ok.txt":  "PUBLIC-newline",
	"public/non-utf8-\xff.txt": "PUBLIC-nonutf8",
}

// advLinks are symlinks: name → target, relative targets as written.
var advLinks = [][2]string{
	{"link-file", "secrets/key.txt"},
	{"link-abs", "{ws}/secrets/key.txt"},
	{"link-dir", "secrets"},
	{"chain1", "chain2"},
	{"chain2", "chain3"},
	{"chain3", "link-dir/../secrets/key.txt"},
	{"chaindir", "link-dir"},
	{"loop1", "loop2"},
	{"loop2", "loop1"},
	{"mirror", "."},
	{"public/up", ".."},
	{"secrets/inner", "../public"},
	{"env-link", "app/.env"},
	{"public/looks-public.txt", "../secrets/[abc].txt"},
	{"public/dotdot", "../secrets/sub"},
}

const advPolicy = `default_tier = "limited"

[tiers.trusted]
label = "trusted"
read  = ["/**"]
tools = ["read", "grep", "glob", "bash", "webfetch"]

[tiers.limited]
label = "limited"
read  = ['{wsglob}/**']
deny  = ['{wsglob}/secrets/**', "**/.env"]

[[models]]
match = "demo/trusted"
tier  = "trusted"

[[models]]
match = "fault/trusted"
tier  = "trusted"

[[models]]
match = "demo/limited"
tier  = "limited"
`

// advFixture is one row's world: a fresh tree, policy, store and session.
type advFixture struct {
	root, ws, out, store, policy, session string
	// secrets are all texts the limited model must never see; vars are
	// extra {name} replacements a row's setup defines (long paths).
	secrets []string
	vars    map[string]string
}

func newAdvFixture(t *testing.T) *advFixture {
	t.Helper()
	isolate(t)
	root, err := policy.Canonical(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &advFixture{root: root, ws: filepath.Join(root, advWorkspace), out: filepath.Join(root, "outside"), store: filepath.Join(root, "store")}
	f.vars = map[string]string{}
	for rel, text := range advSecrets {
		f.write(t, rel, text+"\n")
		f.secrets = append(f.secrets, text)
	}
	for rel, text := range advPublic {
		f.write(t, rel, text+"\n")
	}
	for _, l := range advLinks {
		f.link(t, l[0], l[1])
	}
	mkdirs(t, f.out)
	if err := os.Symlink(f.ws, filepath.Join(f.out, "alias")); err != nil {
		t.Fatal(err)
	}
	f.policy = filepath.Join(root, "policy.toml")
	pol := strings.ReplaceAll(advPolicy, "{wsglob}", escapeGlob(f.ws))
	if err := os.WriteFile(f.policy, []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := scrim(t, "", "--store", f.store, "new", "--title", "adversarial", "--workdir", f.ws)
	if code != exitOK {
		t.Fatalf("scrim new: exit %d: %s", code, stderr)
	}
	f.session = strings.TrimSpace(out)
	return f
}

func (f *advFixture) path(rel string) string {
	return filepath.Join(f.ws, rel)
}

func (f *advFixture) write(t *testing.T, rel, text string) {
	t.Helper()
	p := f.path(rel)
	mkdirs(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *advFixture) link(t *testing.T, rel, target string) {
	t.Helper()
	p := f.path(rel)
	mkdirs(t, filepath.Dir(p))
	if err := os.Symlink(f.expand(target), p); err != nil {
		t.Fatal(err)
	}
}

// expand replaces {ws}, {out} and the row's vars in an argument.
func (f *advFixture) expand(s string) string {
	pairs := []string{"{ws}", f.ws, "{wsglob}", escapeGlob(f.ws), "{out}", f.out}
	for k, v := range f.vars {
		pairs = append(pairs, "{"+k+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// replaceWithLink swaps rel (a file or folder) for a symlink to target.
func (f *advFixture) replaceWithLink(t *testing.T, rel, target string) {
	t.Helper()
	if err := os.RemoveAll(f.path(rel)); err != nil {
		t.Fatal(err)
	}
	f.link(t, rel, target)
}

func mkdirs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// escapeGlob writes a path into a policy pattern literally.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if strings.IndexByte(`*?[]{}\`, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// tool runs `scrim tool ARGS` for model; {ws} and {out} in args are expanded.
func (f *advFixture) tool(t *testing.T, model string, args []string) (string, string, int) {
	t.Helper()
	// The flags go right after the tool's name: a "--" in args ends them.
	full := []string{"--store", f.store, "--policy", f.policy, "tool", args[0], "--session", f.session, "--model", model}
	for _, a := range args[1:] {
		full = append(full, f.expand(a))
	}
	return scrim(t, "", full...)
}

// redactDoc is `scrim redact --format json` decoded.
type redactDoc struct {
	Tier     redact.Tier       `json:"tier"`
	Messages []session.Message `json:"messages"`
	Report   redact.Report     `json:"report"`
	raw      string
}

func (f *advFixture) redact(t *testing.T, model string) redactDoc {
	t.Helper()
	out, stderr, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", f.session, "--model", model, "--format", "json")
	if code != exitOK {
		t.Fatalf("redact --model %s: exit %d: %s", model, code, stderr)
	}
	var doc redactDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("redact output is not JSON: %v\n%s", err, out)
	}
	doc.raw = out
	return doc
}

// placeholders lists the paths of the placeholders in a redacted history,
// each checked to be exactly the contract text for label.
func (d redactDoc) placeholders(t *testing.T, label string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, m := range d.Messages {
		for _, p := range m.Parts {
			if !p.Redacted {
				continue
			}
			if want := redact.Placeholder(p.SourcePath, label); p.Text != want {
				t.Errorf("placeholder %q, want %q", p.Text, want)
			}
			out[p.SourcePath] = true
		}
	}
	return out
}

// storedText is everything a session holds, as JSON.
func (f *advFixture) storedText(t *testing.T) string {
	t.Helper()
	st, err := session.Open(f.store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, bad, err := st.Messages(f.session)
	if err != nil || len(bad) > 0 {
		t.Fatalf("load session: %v %v", bad, err)
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mkdirDeep creates under base a chain of folders named by repeating c
// (each name n bytes) until the full path is at least length bytes long, and
// returns the path of the last one. It works relative to open folders, so
// the chain can go deeper than PATH_MAX, which no path-based call reaches.
func mkdirDeep(t *testing.T, base string, c byte, n, length int) string {
	t.Helper()
	fd, err := unix.Open(base, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat(string(c), n)
	path := base
	for len(path) < length {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
		path += "/" + name
	}
	unix.Close(fd)
	return path
}

// writeDeep writes file name with text in folder dir, which may be deeper
// than PATH_MAX: it is reached one component at a time.
func writeDeep(t *testing.T, dir, name, text string) {
	t.Helper()
	fd, err := unix.Open("/", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, comp := range strings.Split(strings.Trim(dir, "/"), "/") {
		next, err := unix.Openat(fd, comp, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	defer unix.Close(fd)
	file, err := unix.Openat(fd, name, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(file)
	if _, err := unix.Write(file, []byte(text)); err != nil {
		t.Fatal(err)
	}
}
