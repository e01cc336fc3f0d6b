//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/policy"
)

// The benchmarks run the same tool code in three modes:
//   - plain:    no tagging, no enforcement: the tool's own work;
//   - tagged:   plus policy.Canonical and the SourcePath attribution;
//   - enforced: the production Run: the tier's decision, whose canonical
//     form is reused as the tag (no second resolution).
//
// tagged − plain is the cost of tagging: the canonicalisation alone.

var benchModes = []struct {
	name string
	mode mode
}{
	{"plain", mode{}},
	{"tagged", mode{tag: true}},
	{"enforced", full},
}

func benchTree(b *testing.B, files int) string {
	m := map[string]string{}
	var body strings.Builder
	for i := range 200 {
		fmt.Fprintf(&body, "func f%d() { return compute(%d) }\n", i, i)
	}
	for i := range files {
		m[fmt.Sprintf("src/pkg%d/deep/file%d.go", i%10, i)] = body.String() + "// needle\n"
	}
	return tempTree(b, m)
}

func BenchmarkRead(b *testing.B) {
	root := benchTree(b, 1)
	env := Env{Policy: policytest.Policy(b, policytest.Tiers), Model: "trusted/m", WorkDir: root}
	input := json.RawMessage(`{"path":"src/pkg0/deep/file0.go"}`)
	for _, bm := range benchModes {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for b.Loop() {
				if r := (readTool{}).run(context.Background(), env, input, bm.mode); r.Message.IsError {
					b.Fatal(r.Message.Text())
				}
			}
		})
	}
}

func BenchmarkGrep(b *testing.B) {
	root := benchTree(b, 100)
	env := Env{Policy: policytest.Policy(b, policytest.Tiers), Model: "trusted/m", WorkDir: root}
	input := json.RawMessage(`{"pattern":"needle","max_matches":2000}`)
	for _, bm := range benchModes {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for b.Loop() {
				if r := (grepTool{}).run(context.Background(), env, input, bm.mode); len(r.Message.Parts) != 100 {
					b.Fatalf("%d parts", len(r.Message.Parts))
				}
			}
		})
	}
}

// BenchmarkCanonical is the cost of one canonicalisation of the benchmark's
// file path: the difference tagged − plain should be about this (per file).
func BenchmarkCanonical(b *testing.B) {
	root := benchTree(b, 1)
	path := filepath.Join(root, "src/pkg0/deep/file0.go")
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := policy.Canonical(path); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuPerOp starts measuring the process's CPU time and returns the function
// that reports it as cpu-ns/op (b.N is final once b.Loop is done). On a
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
		}
	}
}
