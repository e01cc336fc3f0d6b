//go:build unix

package shellread

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// accuracyTree writes a workspace shaped like a real project — Go sources,
// docs, configs, an .env, keys — whose content lines each carry a token
// naming the file and line they are from ("q<file>x<line>"), so that any
// output line can be traced to its true file. It has the names that trip
// naive parsers: dashes followed by digits, spaces, a name that is a prefix
// of another, lines that look like grep output.
func accuracyTree(t *testing.T) (root string, files []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	names := []string{
		"src/api/server.go", "src/api/handler.go", "src/api/handler-v2.go", "src/api/routes-1-2.go",
		"src/store/db.go", "src/store/db_test.go", "src/store/cache.go", "src/auth/token.go",
		"src/auth/token_test.go", "cmd/app/main.go", "cmd/tool/main.go", "internal/util/strings.go",
		"docs/README.md", "docs/release-1-notes.md", "docs/design doc.md", "docs/api.md",
		"config.yaml", "config/app.yaml", "config/prod.json", ".env", ".env.local",
		"secrets/api.key", "secrets/deploy.pem", "scripts/deploy.sh", "Makefile", "go.mod",
		"README.md", "web/index.html", "web/app.js", "web/style.css", "notes/paths.txt",
	}
	words := []string{"handle", "Config", "token", "request", "cache", "Store", "deploy", "route", "user", "error"}
	for fi, name := range names {
		var b strings.Builder
		n := 20 + (fi*37)%60
		for ln := 1; ln <= n; ln++ {
			tok := fmt.Sprintf("q%dx%d", fi, ln)
			w := words[(fi+ln)%len(words)]
			switch {
			case ln%9 == 0:
				b.WriteString("}\n") // a line many files share: no token
			case name == "notes/paths.txt":
				// Content that looks like grep output naming other files.
				fmt.Fprintf(&b, "src/api/server.go:%d:%s %s\n", ln, w, tok)
			case strings.HasSuffix(name, ".go"):
				fmt.Fprintf(&b, "\tif err := %s%d(ctx); err != nil { return err } // %s\n", w, ln, tok)
			case strings.HasPrefix(name, ".env"):
				fmt.Fprintf(&b, "%s_%d=value-%s\n", strings.ToUpper(w), ln, tok)
			default:
				fmt.Fprintf(&b, "%s: line %d of %s about %s\n", tok, ln, filepath.Base(name), w)
			}
		}
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, names
}

// commandMix draws n commands in the proportions seen in 20 real Claude
// Code and Codex sessions: sed -n 44, nl | sed 29, grep 27, rg 24, head 18,
// cat 15, tail 3 (sqlite3 and PowerShell, which cannot run here, are in
// TestShellReadsImportRedacted).
func commandMix(r *rand.Rand, files []string, haveRG bool) []string {
	pick := func() string { return quote(files[r.IntN(len(files))]) }
	pat := func() string {
		return []string{"handle", "Config", "token", "request", "cache", "Store", "deploy", "route", "user", "error"}[r.IntN(10)]
	}
	dir := func() string { return []string{".", "src", "src/api", "docs", "config", "notes"}[r.IntN(6)] }
	rng := func() (int, int) { a := 1 + r.IntN(30); return a, a + r.IntN(40) }
	kinds := []struct {
		weight int
		make   func() string
	}{
		{44, func() string { a, b := rng(); return fmt.Sprintf("sed -n '%d,%dp' %s", a, b, pick()) }},
		{29, func() string { a, b := rng(); return fmt.Sprintf("nl -ba %s | sed -n '%d,%dp'", pick(), a, b) }},
		{27, func() string {
			return []string{
				"grep -n " + pat() + " " + pick(),
				"grep -rn " + pat() + " " + dir() + " | head -20",
				"grep -rni -A2 " + pat() + " " + dir(),
				"grep -rHn -B1 " + pat() + " " + dir() + " | head -30",
				"grep -rl " + pat() + " " + dir(),
				"grep -c " + pat() + " " + pick() + " " + pick(),
				"grep -rn -E '" + pat() + "|" + pat() + "' " + dir() + " | head",
				"grep -rn -F " + pat() + " . | head -15",
				"grep -rno " + pat() + " " + dir(),
				"grep -m 3 -rn " + pat() + " .",
				"grep -R -n -C1 " + pat() + " " + dir() + " | head -25",
			}[r.IntN(11)]
		}},
		{24, func() string {
			if !haveRG {
				return ""
			}
			return []string{
				"rg -n " + pat(),
				"rg -n -S " + pat() + " " + dir(),
				"rg -l " + pat(),
				"rg -c " + pat() + " " + dir(),
				"rg --heading -n " + pat() + " " + dir(),
				"rg -n -g '*.go' " + pat(),
				"rg -n -t go " + pat() + " src",
				"rg -n -C2 " + pat() + " " + dir() + " | head -40",
				"rg " + pat() + " " + dir(),
			}[r.IntN(9)]
		}},
		{18, func() string {
			if r.IntN(4) == 0 {
				return fmt.Sprintf("head -n %d %s %s", 5+r.IntN(20), pick(), pick())
			}
			return fmt.Sprintf("head -n %d %s", 5+r.IntN(40), pick())
		}},
		{15, func() string {
			if r.IntN(4) == 0 {
				return "cat " + pick() + " " + pick()
			}
			return "cat " + pick()
		}},
		{3, func() string { return fmt.Sprintf("tail -n %d %s", 5+r.IntN(20), pick()) }},
	}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	var out []string
	for len(out) < 400 {
		x := r.IntN(total)
		for _, k := range kinds {
			if x < k.weight {
				if c := k.make(); c != "" {
					if r.IntN(5) == 0 {
						c = "cd " + dir() + " && " + c // some run after a cd
					}
					out = append(out, c)
				}
				break
			}
			x -= k.weight
		}
	}
	return out
}

func quote(name string) string {
	if strings.ContainsAny(name, " ") {
		return "'" + name + "'"
	}
	return name
}

// TestAttributionAccuracy runs 400 commands, drawn in the mix real sessions
// show, for real on a real tree, and traces every byte of file content in
// their outputs to its true file: at least 95% of it must be attributed to
// that file, and no byte may be attributed to files that exclude its own.
func TestAttributionAccuracy(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	_, rgErr := exec.LookPath("rg")
	if rgErr != nil {
		t.Log("rg is not installed: its commands are left out of the mix")
	}
	root, files := accuracyTree(t)
	token := map[string]string{} // token → canonical file
	for fi, name := range files {
		for ln := 1; ln <= 200; ln++ {
			token[fmt.Sprintf("q%dx%d", fi, ln)] = filepath.Join(root, name)
		}
	}
	r := rand.New(rand.NewPCG(14, 1))
	var content, right, wrong, over, unattributed int
	perKind := map[string][2]int{}
	var wrongs []string
	for _, cmd := range commandMix(r, files, rgErr == nil) {
		c := exec.Command("bash", "-c", cmd)
		c.Dir = root
		outb, _ := c.CombinedOutput()
		out := string(outb)
		rd := Read(Command{Line: cmd, Dir: root}, out, nil)
		kind := strings.Fields(strings.TrimPrefix(cmd[strings.LastIndex(cmd, "&& ")+1:], "& "))[0]
		if strings.Contains(cmd, "nl -ba") {
			kind = "nl|sed"
		}
		off := 0
		for _, l := range lines(out) {
			truth := trueFile(l, token)
			start := off
			off += len(l)
			if truth == "" {
				continue // not file content: a separator, a count, a name
			}
			n := len(l)
			content += n
			k := perKind[kind]
			k[1] += n
			tags := tagsAt(rd, start)
			switch {
			case len(tags) == 0:
				unattributed += n
			case !contains(tags, truth):
				wrong += n
				wrongs = append(wrongs, fmt.Sprintf("%s: %q tagged %v, from %s (%s)", cmd, strings.TrimSpace(l), tags, truth, rd.Unknown))
			default:
				right += n
				k[0] += n
				if len(tags) > 1 {
					over += n
				}
			}
			perKind[kind] = k
		}
	}
	pct := func(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }
	var kinds []string
	for k := range perKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%-8s %6.2f%% of %d bytes attributed to their file", k, pct(perKind[k][0], perKind[k][1]), perKind[k][1])
	}
	t.Logf("file content in the outputs: %d bytes; attributed to the right file %.2f%%, of which %.2f%% also to other files read by the same command; unattributed (unknown source) %.2f%%; wrong %d bytes",
		content, pct(right, content), pct(over, content), pct(unattributed, content), wrong)
	for _, w := range wrongs {
		t.Error("wrong attribution: " + w)
	}
	if pct(right, content) < 95 {
		t.Errorf("%.2f%% of the file content is attributed to its file, want at least 95%%", pct(right, content))
	}
}

// trueFile is the file an output line's content comes from, by its token;
// "" for a line that holds no file content.
func trueFile(line string, token map[string]string) string {
	for i := 0; i < len(line); i++ {
		if line[i] != 'q' || i+1 >= len(line) || line[i+1] < '0' || line[i+1] > '9' {
			continue
		}
		j := i + 1
		for j < len(line) && (line[j] >= '0' && line[j] <= '9' || line[j] == 'x') {
			j++
		}
		if f, ok := token[line[i:j]]; ok {
			return f
		}
	}
	return ""
}

// tagsAt is what the reading attributes the output byte at off to.
func tagsAt(r Reading, off int) []string {
	if r.Unknown != "" {
		return nil
	}
	if r.Parts == nil {
		return r.Files
	}
	at := 0
	for _, p := range r.Parts {
		if off < at+len(p.Text) {
			return []string{p.File}
		}
		at += len(p.Text)
	}
	return nil
}
