package policy

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// treePolicy is the policy of TestDecideTree, in the tree's root; its
// relative patterns are relative to that root.
const treePolicy = `
default_tier = "t"
[tiers.t]
label = "tree"
read  = ["allowed/**", "proj/**", "phys/**", "elsewhere/**", "~/src/**", "$PROJ/**", "${PROJ}2/**", "loop/**"]
deny  = ["denied/**", "**/.env", "phys/hidden/**", "~/vault/**", "allowed/\\[literal\\].txt"]
`

func TestDecideTree(t *testing.T) {
	root := tempRoot(t)
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("PROJ", filepath.Join(root, "proj-env"))
	build(t, root,
		"allowed/ok.txt",
		"allowed/[a]*{b}.txt",
		"allowed/[literal].txt",
		"allowed/l.txt",
		"allowed/link-to-denied -> ../denied",
		"allowed/file-link -> ../denied/secret.txt",
		"allowed/abs-link -> "+filepath.Join(root, "denied"),
		"denied/secret.txt",
		"denied/{x}[y]*.txt",
		"proj/.env",
		"proj/a/b/c/.env",
		"proj/.envx",
		"proj/a/.env.d/f",
		"phys/alias -> hidden/inner",
		"phys/hidden/inner/",
		"phys/hidden/x.txt",
		"phys/x.txt",
		"elsewhere/sub/",
		"elsewhere/denied/x",
		"allowed2 -> elsewhere/sub",
		"home/src -> ../realsrc",
		"realsrc/main.go",
		"home/vault -> ../realvault",
		"realvault/key",
		"proj-env/f",
		"proj-env2/f",
		"loop/a -> b",
		"loop/b -> a",
		"loop/self -> self",
	)
	p := writePolicy(t, root, treePolicy)
	tier := p.Tiers["t"]
	r := func(s string) string { return filepath.Join(root, s) }
	tests := []struct {
		name    string
		path    string // raw: not joined, so that ".." reaches Decide unchanged
		allowed bool
		pattern string // deciding pattern; "" for none
		via     bool   // decided on the canonical path
	}{
		{"plain file under an allowed folder", r("allowed/ok.txt"), true, "allowed/**", false},
		{"dir/** matches dir itself", r("allowed"), true, "allowed/**", false},
		{"dir/** matches a denied dir itself", r("denied"), false, "denied/**", false},
		{"symlinked folder in allowed pointing into denied", r("allowed/link-to-denied/secret.txt"), false, "denied/**", true},
		{"symlinked file in allowed pointing into denied", r("allowed/file-link"), false, "denied/**", true},
		{"absolute symlink into denied", r("allowed/abs-link/secret.txt"), false, "denied/**", true},
		{"missing file behind a symlink into denied", r("allowed/link-to-denied/new.txt"), false, "denied/**", true},
		{"allowed/../denied/x", r("allowed") + "/../denied/secret.txt", false, "denied/**", false},
		{"allowed2/../denied/x with allowed2 a symlink: lexical form denies", r("allowed2") + "/../denied/secret.txt", false, "denied/**", false},
		{"physical ..: lexically allowed, physically denied", r("phys/alias") + "/../x.txt", false, "phys/hidden/**", true},
		{"lexical .. without symlink stays allowed", r("phys/hidden") + "/../x.txt", true, "phys/**", false},
		{"**/.env at top", r("proj/.env"), false, "**/.env", false},
		{"**/.env deep", r("proj/a/b/c/.env"), false, "**/.env", false},
		{"**/.env missing file deep", r("proj/q/r/.env"), false, "**/.env", false},
		{".envx is not .env", r("proj/.envx"), true, "proj/**", false},
		{".env as a folder name is not .env/**", r("proj/a/.env.d/f"), true, "proj/**", false},
		{"missing file under allowed", r("allowed/not/yet/there.txt"), true, "allowed/**", false},
		{"missing file under denied", r("denied/not-there.txt"), false, "denied/**", false},
		{"missing folder then .. back into a symlink", r("allowed/missing") + "/../link-to-denied/secret.txt", false, "denied/**", true},
		{"glob characters in an allowed file name", r("allowed/[a]*{b}.txt"), true, "allowed/**", false},
		{"glob characters in a denied file name", r("denied/{x}[y]*.txt"), false, "denied/**", false},
		{"escaped pattern matches its literal name", r("allowed/[literal].txt"), false, `allowed/\[literal\].txt`, false},
		{"escaped pattern is not a class", r("allowed/l.txt"), true, "allowed/**", false},
		{"~ pattern through a symlinked prefix, path as given", r("home/src/main.go"), true, "~/src/**", false},
		{"~ pattern through a symlinked prefix, canonical path", r("realsrc/main.go"), true, "~/src/**", false},
		{"deny with a symlinked prefix, canonical path", r("realvault/key"), false, "~/vault/**", false},
		{"deny with a symlinked prefix, path as given", r("home/vault/key"), false, "~/vault/**", false},
		{"$VAR pattern", r("proj-env/f"), true, "$PROJ/**", false},
		{"${VAR} pattern", r("proj-env2/f"), true, "${PROJ}2/**", false},
		{"outside every read pattern", r("home"), false, "", false},
		{"symlink loop", r("loop/a/x"), false, "", false},
		{"self loop", r("loop/self"), false, "", false},
		{"relative path, nothing matches from cwd", "relative/x", false, "", false},
		{"empty path", "", false, "", false},
		{"NUL in path", r("allowed/a\x00b"), false, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := p.Decide(tier, tc.path)
			if d.Allowed != tc.allowed || d.Pattern != tc.pattern || d.ViaCanonical != tc.via {
				t.Fatalf("Decide(%q) = allowed %v by %q (via canonical %v), want %v by %q (via %v); reason %q",
					tc.path, d.Allowed, d.Pattern, d.ViaCanonical, tc.allowed, tc.pattern, tc.via, d.Reason)
			}
			if d.Pattern != "" && d.Line != 6 && d.Line != 5 {
				t.Fatalf("pattern line %d, want the read (5) or deny (6) line", d.Line)
			}
		})
	}
	t.Run("loop reason says why", func(t *testing.T) {
		d := p.Decide(tier, r("loop/a/x"))
		if !strings.Contains(d.Reason, "too many levels of symbolic links") {
			t.Fatalf("reason %q", d.Reason)
		}
	})
	t.Run("relative path is decided from the working folder", func(t *testing.T) {
		t.Chdir(r("allowed"))
		for path, want := range map[string]bool{"ok.txt": true, "link-to-denied/secret.txt": false, "../denied/secret.txt": false} {
			if d := p.Decide(tier, path); d.Allowed != want {
				t.Errorf("Decide(%q) from allowed/ = %v (%s), want %v", path, d.Allowed, d.Reason, want)
			}
		}
	})
}

// TestRelativePatternsAreRelativeToThePolicyFile loads one policy from
// another working folder: its patterns must not follow the cwd.
func TestRelativePatternsAreRelativeToThePolicyFile(t *testing.T) {
	root := tempRoot(t)
	build(t, root, "conf/work/f", "other/work/f", "conf/sibling/g")
	t.Chdir(filepath.Join(root, "other"))
	p := writePolicy(t, filepath.Join(root, "conf"), `
default_tier = "t"
[tiers.t]
label = "t"
read = ["work/**", "./work/**", "../conf/sibling/"]
`)
	tier := p.Tiers["t"]
	for _, tc := range []struct {
		path string
		want bool
	}{
		{filepath.Join(root, "conf/work/f"), true},
		{filepath.Join(root, "conf/sibling/g"), true},
		{filepath.Join(root, "conf/sibling"), true},
		{filepath.Join(root, "other/work/f"), false},
		{"work/f", false}, // cwd is other/
	} {
		if d := p.Decide(tier, tc.path); d.Allowed != tc.want {
			t.Errorf("Decide(%q) = %v (%s), want %v", tc.path, d.Allowed, d.Reason, tc.want)
		}
	}
}

// TestMetaCharactersInExpansions: a home folder, a variable's value or the
// policy's folder are paths, never globs.
func TestMetaCharactersInExpansions(t *testing.T) {
	root := tempRoot(t)
	home := filepath.Join(root, "home[1]{a,b}*")
	polDir := filepath.Join(root, "pol[x]")
	build(t, root, "home[1]{a,b}*/secret/k", "home1a/secret/k", "homea/secret/k",
		"pol[x]/sub/f", "polx/sub/f", "v[1]/f", "v1/f", "home[1]{a,b}*/ln -> ../v[1]")
	t.Setenv("HOME", home)
	t.Setenv("V", filepath.Join(root, "v[1]"))
	p := writePolicy(t, polDir, `
default_tier = "t"
[tiers.t]
label = "t"
read = ["sub/**", "$V/**", "~/ln/**", "~/secret/**"]
deny = ["~/secret/k"]
`)
	tier := p.Tiers["t"]
	for _, tc := range []struct {
		rel  string
		want bool
	}{
		{"home[1]{a,b}*/secret/k", false},
		{"home[1]{a,b}*/secret/other", true},
		{"home1a/secret/k", false}, // not matched by any read pattern either
		{"homea/secret/k", false},
		{"pol[x]/sub/f", true},
		{"polx/sub/f", false},
		{"v[1]/f", true},
		{"v1/f", false},
		{"home[1]{a,b}*/ln/f", true}, // via the canonical form of ~/ln
	} {
		if d := p.Decide(tier, filepath.Join(root, tc.rel)); d.Allowed != tc.want {
			t.Errorf("Decide(%s) = %v (%s), want %v", tc.rel, d.Allowed, d.Reason, tc.want)
		}
	}
	// The negative cases above must fail for the right reason: no pattern
	// matched, not an error.
	if d := p.Decide(tier, filepath.Join(root, "home1a/secret/k")); d.Reason != "no read pattern matches" {
		t.Errorf("reason %q", d.Reason)
	}
}

func TestDenyBeatsReadInAnyOrder(t *testing.T) {
	root := tempRoot(t)
	build(t, root, "a/secret/k", "a/ok")
	for _, text := range []string{
		"[tiers.t]\nlabel = \"t\"\nread = [\"a/**\"]\ndeny = [\"**/secret/**\"]\n",
		"[tiers.t]\nlabel = \"t\"\ndeny = [\"**/secret/**\"]\nread = [\"a/**\"]\n",
		"[tiers.t]\nlabel = \"t\"\ndeny = [\"a/secret/k\"]\nread = [\"a/secret/k\", \"a/**\"]\n",
	} {
		p := writePolicy(t, root, "default_tier = \"t\"\n"+text)
		d := p.Decide(p.Tiers["t"], filepath.Join(root, "a/secret/k"))
		if d.Allowed || d.Kind != "deny" {
			t.Errorf("policy %q: a/secret/k allowed=%v kind=%q, want denied by deny", text, d.Allowed, d.Kind)
		}
		if d := p.Decide(p.Tiers["t"], filepath.Join(root, "a/ok")); !d.Allowed {
			t.Errorf("policy %q: a/ok denied (%s)", text, d.Reason)
		}
	}
}

func TestTierForFirstMatchWins(t *testing.T) {
	p, err := Parse([]byte(`
default_tier = "none"
[tiers.local]
label = "local"
read = ["/**"]
[tiers.cloud]
label = "cloud"
read = ["/tmp/**"]
[tiers.special]
label = "special"
[tiers.none]
label = "none"

[[models]]
match = "anthropic/claude-opus-*"
tier = "special"
[[models]]
match = "anthropic/*"
tier = "cloud"
[[models]]
match = "anthropic/**"
tier = "local"
[[models]]
match = "ollama/**"
tier = "local"
`), "/p/policy.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model, tier, rule string
		line              int
	}{
		{"anthropic/claude-opus-4", "special", "anthropic/claude-opus-*", 14},
		{"anthropic/claude-sonnet-4-5", "cloud", "anthropic/*", 17},
		{"anthropic/eu/claude", "local", "anthropic/**", 20},
		{"ollama/llama3.1:8b", "local", "ollama/**", 23},
		{"Anthropic/claude", "none", "default", 2}, // case matters: fail closed
		{"mystery/model", "none", "default", 2},
		{"", "none", "default", 2},
	} {
		tier, rule := p.TierFor(tc.model)
		e := p.Explain(tc.model, "/tmp/x")
		if tier.Name != tc.tier || e.Tier != tier || e.Rule != tc.rule || e.RuleLine != tc.line {
			t.Errorf("%q: tier %s rule %q line %d, want %s %q %d", tc.model, tier.Name, e.Rule, e.RuleLine, tc.tier, tc.rule, tc.line)
		}
		if (rule == nil) != (tc.rule == "default") {
			t.Errorf("%q: rule %v", tc.model, rule)
		}
	}
}

func TestDecideNilTierIsDenied(t *testing.T) {
	p := &Policy{}
	if d := p.Decide(nil, "/tmp"); d.Allowed {
		t.Fatal("a nil tier allowed a read")
	}
}

// TestDecideConcurrent: one policy is shared by tools, redaction and the UI.
func TestDecideConcurrent(t *testing.T) {
	root := tempRoot(t)
	build(t, root, "a/x", "a/.env")
	p := writePolicy(t, root, "default_tier = \"t\"\n[tiers.t]\nlabel = \"t\"\nread = [\"a/**\"]\ndeny = [\"**/.env\"]\n")
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if !p.Allowed("any", filepath.Join(root, "a/x")) || p.Allowed("any", filepath.Join(root, "a/.env")) {
					errs <- "wrong decision under concurrency"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if n := p.DecisionCount(); n != 8*200*2 {
		t.Fatalf("DecisionCount = %d, want %d", n, 8*200*2)
	}
}

func TestExplainNamesEverything(t *testing.T) {
	root := tempRoot(t)
	build(t, root, "src/a.go", "src/.env", "link -> src")
	p := writePolicy(t, root, `default_tier = "none"
[tiers.cloud]
label = "Cloud tier"
read = ["src/**"]
deny = ["**/.env"]
[tiers.none]
label = "none"
[[models]]
match = "anthropic/**"
tier = "cloud"
`)
	e := p.Explain("anthropic/claude", filepath.Join(root, "link/.env"))
	d := e.Decision
	if e.Rule != "anthropic/**" || e.RuleLine != 8 || e.Tier.Label != "Cloud tier" {
		t.Fatalf("rule %q line %d tier %q", e.Rule, e.RuleLine, e.Tier.Label)
	}
	if d.Allowed || d.Pattern != "**/.env" || d.Kind != "deny" || d.Line != 5 {
		t.Fatalf("decision %+v", d)
	}
	if d.Path != filepath.Join(root, "link/.env") || d.Canonical != filepath.Join(root, "src/.env") {
		t.Fatalf("path %q canonical %q", d.Path, d.Canonical)
	}
	if _, err := os.Stat(d.Canonical); err != nil {
		t.Fatalf("canonical path does not exist: %v", err)
	}
}
