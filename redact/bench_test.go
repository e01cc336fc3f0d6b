//go:build unix

package redact

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"

	"github.com/scrim-dev/scrim/internal/codetext"
)

const (
	benchMessages = 100_000
	benchPaths    = 5_000
)

// benchPolicy has a 20-rule tier: 5 read and 15 deny patterns, like a real
// cloud tier.
func benchPolicy(b *testing.B, root string) *policy.Policy { return benchPolicyWith(b, root, "") }

// benchPolicyWith is benchPolicy with extra tier keys.
func benchPolicyWith(b *testing.B, root, keys string) *policy.Policy {
	read := []string{root + "/**", "~/src/**", "/tmp/**", "/opt/project/**", "/srv/**"}
	deny := []string{"**/.env", "**/.env.*", "**/*.pem", "**/*.key", "**/secrets/**", "**/id_rsa*",
		"~/.ssh/**", "~/.aws/**", "**/*.p12", "**/credentials.json", "**/*.tfstate", "**/.netrc",
		"**/private/**", "/etc/shadow", "**/*.keystore"}
	q := func(s []string) string { return `"` + strings.Join(s, `", "`) + `"` }
	text := fmt.Sprintf("default_tier = \"cloud\"\n[tiers.cloud]\nlabel = \"cloud\"\nread = [%s]\ndeny = [%s]\n%s", q(read), q(deny), keys)
	p, err := policy.Parse([]byte(text), filepath.Join(root, "policy.toml"))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// benchHistory makes n messages; every fifth is a tool result from one of
// benchPaths real files (one in ten of them under secrets/, so denied).
func benchHistory(b *testing.B, n int, tagged bool) ([]session.Message, string) {
	root, err := policy.Canonical(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	paths := make([]string, benchPaths)
	for i := range paths {
		dir := fmt.Sprintf("pkg%02d", i%50)
		if i%10 == 0 {
			dir = filepath.Join("secrets", dir)
		}
		paths[i] = filepath.Join(root, dir, fmt.Sprintf("file%04d.go", i))
		os.MkdirAll(filepath.Dir(paths[i]), 0o755)
		if err := os.WriteFile(paths[i], nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Let the files reach the disk now, so that writing them back does not
	// take a core from the calls being measured.
	syscall.Sync()
	now := time.Now()
	msgs := make([]session.Message, n)
	for i := range msgs {
		m := session.Message{ID: fmt.Sprint("s-", i+1), SessionID: "s", Seq: uint64(i + 1), Model: "anthropic/x", CreatedAt: now}
		switch {
		case i%5 == 4 && tagged:
			p := paths[(i/5*7919)%benchPaths]
			m.Role, m.Tool, m.ToolCallID = session.RoleTool, "read", "call"
			m.Parts = []session.Part{{Kind: session.PartText, Text: "     1\tpackage x\n", SourcePath: p}}
			m.Meta.SourcePaths = []string{p}
		case i%2 == 0:
			m.Role = session.RoleUser
			m.Parts = []session.Part{{Kind: session.PartText, Text: "please look at the parser"}}
		default:
			m.Role = session.RoleAssistant
			m.Parts = []session.Part{{Kind: session.PartText, Text: "looking"}}
		}
		msgs[i] = m
	}
	return msgs, root
}

func BenchmarkHistory(b *testing.B) {
	for _, tc := range []struct {
		name   string
		tagged bool
	}{{"tagged20pct", true}, {"noSourcePaths", false}} {
		b.Run(tc.name, func(b *testing.B) {
			msgs, root := benchHistory(b, benchMessages, tc.tagged)
			pol := benchPolicy(b, root)
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for b.Loop() {
				out, rep := History(msgs, "anthropic/x", pol)
				if len(out) != benchMessages || tc.tagged && rep.RedactedParts == 0 {
					b.Fatalf("%d messages, %d redacted", len(out), rep.RedactedParts)
				}
			}
		})
	}
}

// BenchmarkHistorySpans is the 20 %-tagged history of BenchmarkHistory for
// a tier with derived = "redact" and secrets = "redact", with the findings
// already scanned (a preview after the first: they are kept in the store).
// As in BenchmarkHistory, the denied files' content is one short line that
// allowed files hold too: nothing to fingerprint. distinctive gives each
// denied file a line and a token of its own, and has one message in fifty
// quote one of them, so the automaton is built and runs over every part.
func BenchmarkHistorySpans(b *testing.B) {
	for _, distinctive := range []bool{false, true} {
		name := "tagged20pct"
		if distinctive {
			name = "tagged20pct-quoted"
		}
		b.Run(name, func(b *testing.B) {
			msgs, root := benchHistory(b, benchMessages, true)
			if distinctive {
				var denied []int
				for i := range msgs {
					m := &msgs[i]
					if m.Role == session.RoleTool && strings.Contains(m.Meta.SourcePaths[0], "/secrets/") {
						m.Parts[0].Text = fmt.Sprintf("     1\tAPI_TOKEN=tok-%06d-SECRET\n     2\tconst endpoint = \"https://vault-%d.internal/v1\"\n", i, i)
						denied = append(denied, i)
					}
				}
				for i := 1; i < len(msgs); i += 50 {
					msgs[i].Parts = []session.Part{{Kind: session.PartText, Text: fmt.Sprintf("the token is tok-%06d-SECRET, see the config", denied[i%len(denied)])}}
				}
			}
			pol := benchPolicyWith(b, root, "derived = \"redact\"\nsecrets = \"redact\"\n")
			ctx := Context{Findings: secrets.ScanAll(msgs).Of}
			_, rep := HistoryWith(msgs, "anthropic/x", pol, ctx)
			if distinctive && rep.Derived == 0 {
				b.Fatal("nothing derived: the benchmark measures nothing")
			}
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for b.Loop() {
				out, rep := HistoryWith(msgs, "anthropic/x", pol, ctx)
				if len(out) != benchMessages || rep.RedactedParts == 0 {
					b.Fatalf("%d messages, %d redacted", len(out), rep.RedactedParts)
				}
			}
		})
	}
}

// BenchmarkPlainCopy is the baseline: copying the same slice of messages
// without redaction. shallow copies the messages only (their parts stay
// shared with the input); deep also gives every message its own parts and
// sourcePaths, the least any copy that a caller cannot write through needs.
func BenchmarkPlainCopy(b *testing.B) {
	msgs, _ := benchHistory(b, benchMessages, true)
	b.Run("shallow", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			out := append([]session.Message(nil), msgs...)
			if len(out) != benchMessages {
				b.Fatal(len(out))
			}
		}
	})
	b.Run("deep", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			out := make([]session.Message, len(msgs))
			for i := range msgs {
				out[i] = msgs[i]
				out[i].Parts = append([]session.Part(nil), msgs[i].Parts...)
				if msgs[i].Meta.SourcePaths != nil {
					out[i].Meta.SourcePaths = append([]string(nil), msgs[i].Meta.SourcePaths...)
				}
			}
		}
	})
}

// BenchmarkDecisions is the policy work inside a tagged History call: the
// 5,000 distinct paths noted and decided once each (in parallel, as History
// does), without the copying.
func BenchmarkDecisions(b *testing.B) {
	msgs, root := benchHistory(b, benchMessages, true)
	pol := benchPolicy(b, root)
	tier, _ := pol.TierFor("anthropic/x")
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		d := newDecisions(pol, tier)
		chunks := defaultLayout.split(msgs)
		each(chunks, (*chunk).scan)
		for _, c := range chunks {
			d.merge(c)
		}
		d.start()
		each(chunks, func(*chunk) { d.decideSpans() })
		if len(d.verdicts) != benchPaths {
			b.Fatal(len(d.verdicts))
		}
	}
}

// cpuPerOp starts measuring the process's CPU time (all threads, GC
// included) and returns the function that reports it per op: cpu-ns/op,
// the part of it spent in the kernel (sys-ns/op) and the page faults taken
// (faults/op), which is where a history's fresh copy shows on a VM. On a
// machine shared with other builds, wall time per op swings with the load;
// CPU time much less.
func cpuPerOp(b *testing.B) func() {
	var start syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &start)
	return func() {
		var end syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &end)
		used := end.Utime.Nano() + end.Stime.Nano() - start.Utime.Nano() - start.Stime.Nano()
		if b.N > 0 {
			b.ReportMetric(float64(used)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(end.Stime.Nano()-start.Stime.Nano())/float64(b.N), "sys-ns/op")
			b.ReportMetric(float64(end.Minflt-start.Minflt)/float64(b.N), "faults/op")
		}
	}
}

// BenchmarkGather: a whole gathering of a tier's fingerprints as the TUI
// makes it for a first count (tally.Contexts): 200,000 messages read in
// pieces of 4,096, every fifth a file read of 12 lines of code of its own,
// one in ten of them from a denied file, then the matcher made, dropping
// the candidates.
func BenchmarkGather(b *testing.B) {
	msgs, root := benchHistory(b, 200_000, true)
	for i := range msgs {
		m := &msgs[i]
		if m.Role != session.RoleTool {
			continue
		}
		var t strings.Builder
		for l := 1; l <= 12; l++ {
			fmt.Fprintf(&t, "%6d\tfunc step%d_%d(x int) int { return x*%d + %d }\n", l, i, l, l, i%97)
		}
		m.Parts[0].Text = t.String()
	}
	pol := benchPolicyWith(b, root, `derived = "redact"`)
	var fps int
	var done time.Duration
	for b.Loop() {
		g := NewDerivedBuilder("cloud/x", pol)
		g.Remember()
		g.CheckLate(true)
		for at := 0; at < len(msgs); at += 4096 {
			g.Add(msgs[at:min(at+4096, len(msgs))])
		}
		if err := g.Settle(readSeqs(msgs)); err != nil {
			b.Fatal(err)
		}
		if g.Stale() {
			for at := 0; at < len(msgs); at += 4096 {
				g.Recheck(msgs[at:min(at+4096, len(msgs))], at+4096 >= len(msgs))
			}
		}
		start := time.Now()
		d := g.DoneDropping()
		d.win.ready(&d.fpSet) // filed at the first search
		done += time.Since(start)
		fps = len(d.fps)
	}
	b.ReportMetric(float64(fps), "fingerprints")
	b.ReportMetric(float64(done.Microseconds())/1000/float64(b.N), "matcher-ms")
}

// BenchmarkMatcher: the index of a set of fingerprints the size of the UI
// benchmark's million-message session's (millionSet), which the TUI's first
// count waits for.
func BenchmarkMatcher(b *testing.B) {
	set := millionSet()
	for b.Loop() {
		newWindows(&set, nil)
	}
}

// BenchmarkMatcherSearch: that set searched for in what the session sends
// beside it, as its count does: 20,000 reads of 12 lines shaped like the
// withheld ones (their own numbers), an answer after each, and one in
// twenty a withheld line quoted (found: 2,000, the line and its word).
func BenchmarkMatcherSearch(b *testing.B) {
	set := millionSet()
	w := newWindows(&set, nil)
	var texts []string
	size := 0
	for i := range 20_000 {
		n := 2 + 10*i
		var t strings.Builder
		for l := 1; l <= 12; l++ {
			fmt.Fprintf(&t, "%6d\tfunc step%d_%d(x int) int { return x*%d + %d }\n", l, n, l, l, n%97)
		}
		texts = append(texts, t.String(), fmt.Sprintf("Step %d: the file defines small arithmetic helpers.\nNothing in it touches the network or the disk.\nNext I will search for callers.", n))
		if i%20 == 0 {
			n := 7 + 10*i
			texts = append(texts, fmt.Sprintf("func step%d_%d(x int) int { return x*%d + %d }", n, 3, 3, n%97))
		}
	}
	for _, s := range texts {
		size += len(s)
	}
	b.SetBytes(int64(size))
	found := 0
	for b.Loop() {
		found = 0
		for _, s := range texts {
			w.each(s, &set, func(int, int, int32) bool { found++; return true })
		}
	}
	if found != 2000 {
		b.Fatalf("found %d, want 2000", found)
	}
}

// millionSet is 2.15M fingerprints: a line of code and a word of it from
// each line of 100,000 withheld reads of 12 lines.
func millionSet() fpSet {
	var texts []string
	for i := range 100_000 {
		for l := 1; l <= 12; l++ {
			n := 7 + 10*i
			texts = append(texts, fmt.Sprintf("func step%d_%d(x int) int { return x*%d + %d }", n, l, l, n%97), fmt.Sprintf("step%d_%d", n, l))
		}
	}
	return listOf(texts).fpSet
}

// BenchmarkMatcherSearchVocabulary: the search of the CLI benchmark
// session's shape, where the window search is mostly windows that are
// filed and found but belong to other lines: 100,000 messages, every fifth
// a read of 0.3-2.5 KB of codetext.Text (one in ten denied), the others
// 0.1-0.7 KB of it; the fingerprints gathered as a first preview gathers
// them, then searched for in every text that is sent.
func BenchmarkMatcherSearchVocabulary(b *testing.B) {
	msgs, root := benchHistory(b, 100_000, true)
	r := rand.New(rand.NewPCG(1, 7))
	for i := range msgs {
		m := &msgs[i]
		if m.Role == session.RoleTool {
			m.Parts[0].Text = codetext.Text(r, 300+r.IntN(2200))
		} else {
			m.Parts[0].Text = codetext.Text(r, 100+r.IntN(600))
		}
	}
	pol := benchPolicyWith(b, root, `derived = "redact"`)
	g := NewDerivedBuilder("cloud/x", pol)
	g.Add(msgs)
	d := g.Done()
	var texts []string
	size := 0
	for i := range msgs {
		m := &msgs[i]
		if m.Role == session.RoleTool && strings.Contains(m.Meta.SourcePaths[0], "/secrets/") {
			continue
		}
		texts = append(texts, m.Parts[0].Text)
		size += len(m.Parts[0].Text)
	}
	b.SetBytes(int64(size))
	found := 0
	for b.Loop() {
		found = 0
		for _, s := range texts {
			d.win.each(s, &d.fpSet, func(int, int, int32) bool { found++; return true })
		}
	}
	b.ReportMetric(float64(len(d.fps)), "fingerprints")
	b.ReportMetric(float64(found), "found")
}

// BenchmarkFiling: what the one core that files a gathering's candidates
// does (AddPrepared: filing, then checking the readable reads against them
// on every core) for 200,000 reads of 12 lines of their own, every other
// one withheld (2.4M candidates, lines and words, as the UI benchmark's
// million-message session withholds), in pieces of 4,096 prepared
// beforehand; told the Seqs to come (Expect) or not.
func BenchmarkFiling(b *testing.B) {
	msgs, root := benchHistory(b, 200_000, false)
	for i := range msgs {
		p := filepath.Join(root, "src", fmt.Sprintf("f%d.go", i))
		if i%2 == 0 {
			p = filepath.Join(root, "secrets", fmt.Sprintf("f%d.go", i))
		}
		var t strings.Builder
		for l := 1; l <= 12; l++ {
			fmt.Fprintf(&t, "%6d\tfunc step%d_%d(x int) int { return x*%d + %d }\n", l, i, l, l, i%97)
		}
		msgs[i].Role, msgs[i].Tool, msgs[i].Meta.SourcePaths = session.RoleTool, "read", []string{p}
		msgs[i].Parts = []session.Part{{Kind: session.PartToolResult, Text: t.String(), SourcePath: p}}
	}
	pol := benchPolicyWith(b, root, `derived = "redact"`)
	for _, expect := range []bool{false, true} {
		b.Run(fmt.Sprintf("expect=%v", expect), func(b *testing.B) {
			var filing time.Duration
			for b.Loop() {
				g := NewDerivedBuilder("cloud/x", pol)
				if expect {
					g.Expect(1, uint64(len(msgs)))
				}
				var ps []*Prepared
				for at := 0; at < len(msgs); at += 4096 {
					ps = append(ps, g.Prepare(msgs[at:min(at+4096, len(msgs))]))
				}
				start := time.Now()
				for _, p := range ps {
					g.AddPrepared(p)
				}
				filing += time.Since(start)
			}
			b.ReportMetric(float64(filing.Milliseconds())/float64(b.N), "filing-ms")
		})
	}
}

// BenchmarkCut: the cutting of texts into the pieces a gathering looks up
// (eachCandidate, as content the tier may read is checked), on reads of
// the UI benchmark session's shape and the answers after them.
func BenchmarkCut(b *testing.B) {
	var texts []string
	size := 0
	for i := range 2000 {
		var t strings.Builder
		for l := 1; l <= 12; l++ {
			fmt.Fprintf(&t, "%6d\tfunc step%d_%d(x int) int { return x*%d + %d }\n", l, 100000+i, l, l, i%97)
		}
		texts = append(texts, t.String(), fmt.Sprintf("Step %d: the file defines small arithmetic helpers.\nNothing in it touches the network or the disk.\nNext I will search for callers.", i))
	}
	for _, s := range texts {
		size += len(s)
	}
	b.SetBytes(int64(size))
	n := 0
	for b.Loop() {
		for _, s := range texts {
			eachCandidate(s, func(p string) { n += len(p) })
		}
	}
}
