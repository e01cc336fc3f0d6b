package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// benchTier is a 20-rule tier shaped like the default cloud tier: two read
// patterns and eighteen deny patterns, most of them "**/x" (the expensive kind).
const benchTier = `
default_tier = "cloud"
[tiers.cloud]
label = "cloud"
read = ["proj*/**", "~/src/**"]
deny = [
  "~/.ssh/**", "~/.aws/**", "~/.config/gcloud/**", "~/.gnupg/**",
  "**/.env", "**/.env.*", "**/.envrc", "**/secrets/**", "**/.secrets/**",
  "**/*.pem", "**/*.key", "**/*.p12", "**/id_rsa*", "**/id_ed25519*",
  "**/*.tfstate", "**/.netrc", "**/*credentials*.json", "/etc/shadow*",
]
`

// benchRoot is made once per test binary: creating 10,000 files is slower
// than what is measured, and the benchmark framework calls each benchmark
// several times. TestMain removes it.
var benchRoot struct {
	once  sync.Once
	dir   string
	paths []string
	err   error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRoot.dir != "" {
		os.RemoveAll(benchRoot.dir)
	}
	os.Exit(code)
}

// benchTree gives the 20-rule policy and 10,000 distinct real files, 1 in 5
// of them a secret.
func benchTree(b *testing.B) (*Policy, []string) {
	b.Helper()
	benchRoot.once.Do(func() { benchRoot.dir, benchRoot.paths, benchRoot.err = makeBenchFiles() })
	if benchRoot.err != nil {
		b.Fatal(benchRoot.err)
	}
	root := benchRoot.dir
	b.Setenv("HOME", root)
	path := filepath.Join(root, "policy.toml")
	if err := os.WriteFile(path, []byte(benchTier), 0o644); err != nil {
		b.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	if n := len(p.Tiers["cloud"].Read) + len(p.Tiers["cloud"].Deny); n != 20 {
		b.Fatalf("tier has %d rules, want 20", n)
	}
	return p, benchRoot.paths
}

func makeBenchFiles() (string, []string, error) {
	tmp, err := os.MkdirTemp("", "scrim-policy-bench-")
	if err != nil {
		return "", nil, err
	}
	root, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return tmp, nil, err
	}
	names := []string{"main.go", "util.go", "README.md", ".env", "model.py", "view.tsx", "key.pem", "go.mod", "handler.go", "config.yaml"}
	var paths []string
	for i := 0; i < 10; i++ {
		for j := 0; j < 10; j++ {
			for k := 0; k < 10; k++ {
				dir := filepath.Join(root, fmt.Sprintf("proj%d/pkg%d/sub%d", i, j, k))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return root, nil, err
				}
				for _, n := range names {
					p := filepath.Join(dir, n)
					if err := os.WriteFile(p, nil, 0o644); err != nil {
						return root, nil, err
					}
					paths = append(paths, p)
				}
			}
		}
	}
	return root, paths, nil
}

func reportPerDecision(b *testing.B, start time.Time, perOp int) {
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*perOp), "ns/decision")
}

// BenchmarkDecide10k is the full decision: canonicalise (syscalls) and match
// both forms. One op decides all 10,000 paths.
func BenchmarkDecide10k(b *testing.B) {
	p, paths := benchTree(b)
	decideAll(b, p, paths, 2000) // .env and key.pem in every folder
}

// decideAll decides every path for the cloud tier once per op and checks
// how many were denied.
func decideAll(b *testing.B, p *Policy, paths []string, want int) {
	tier := p.Tiers["cloud"]
	denied := 0
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		denied = 0
		for _, path := range paths {
			if !p.Decide(tier, path).Allowed {
				denied++
			}
		}
	}
	reportPerDecision(b, start, len(paths))
	if denied != want {
		b.Fatalf("denied %d of %d, want %d", denied, len(paths), want)
	}
}

// BenchmarkCanonical10k is the syscall part alone.
func BenchmarkCanonical10k(b *testing.B) {
	_, paths := benchTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for _, path := range paths {
			if _, err := Canonical(path); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportPerDecision(b, start, len(paths))
}

// BenchmarkMatch10k is the matching part alone, on paths already canonical.
func BenchmarkMatch10k(b *testing.B) {
	p, paths := benchTree(b)
	tier := p.Tiers["cloud"]
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for _, path := range paths {
			tier.decide(path)
		}
	}
	reportPerDecision(b, start, len(paths))
}

// BenchmarkCanonicalWalk10k is the portable walk (one lstat per component),
// which Linux skips for existing paths.
func BenchmarkCanonicalWalk10k(b *testing.B) {
	_, paths := benchTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for _, path := range paths {
			links := 0
			if _, err := resolve(path, &links); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportPerDecision(b, start, len(paths))
}

// teamOnce adds, once, what a team has written to the benchmark tree: each
// project is a repository with a .cursorignore of the usual kind, and the
// home folder has Claude Code settings.
var teamOnce struct {
	once sync.Once
	err  error
}

const benchCursorignore = `# build output
node_modules/
dist/
*.log
/coverage
secrets.yaml
**/fixtures/private/**
pkg3/sub7/
!pkg3/sub7/README.md
`

func addTeamFiles(root string) error {
	for i := 0; i < 10; i++ {
		proj := filepath.Join(root, fmt.Sprintf("proj%d", i))
		if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(proj, ".cursorignore"), []byte(benchCursorignore), 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte(`{"permissions": {"deny": ["Read(**/*.tfstate)", "Bash(rm:*)"]}}`), 0o644)
}

// BenchmarkDecide10kDenyFiles is BenchmarkDecide10k for a tier with
// deny_files = ["*"]: every format looked up in each folder, a .cursorignore
// in each repository, Claude settings in the home folder.
func BenchmarkDecide10kDenyFiles(b *testing.B) {
	_, paths := benchTree(b)
	teamOnce.once.Do(func() { teamOnce.err = addTeamFiles(benchRoot.dir) })
	if teamOnce.err != nil {
		b.Fatal(teamOnce.err)
	}
	path := filepath.Join(benchRoot.dir, "policy-team.toml")
	if err := os.WriteFile(path, []byte(benchTier+"deny_files = [\"*\"]\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	decideAll(b, p, paths, 2080) // and pkg3/sub7's other 8 files in each project
}
