package tools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scrim-dev/scrim/internal/policytest"
)

const raceSecret = "RACE-SECRET-71c2"

// swapper keeps exchanging path and alt (atomically, renameat2
// RENAME_EXCHANGE) until stop is called: a hostile process racing a tool
// between its decision and its open.
func swapper(t *testing.T, path, alt string) (stop func()) {
	t.Helper()
	exchange := func() error {
		return unix.Renameat2(unix.AT_FDCWD, path, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE)
	}
	if err := exchange(); err != nil {
		t.Skipf("this file system cannot exchange names atomically: %v", err)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !done.Load() {
			exchange()
		}
	})
	return func() { done.Store(true); wg.Wait() }
}

// TestNoLeakWhileThePathChanges races the read, grep and glob tools of the
// limited model against a file that flips between public content and a
// symlink to a secret. Whatever the timing, the secret must never be
// returned, and content must never carry a path it did not come from.
func TestNoLeakWhileThePathChanges(t *testing.T) {
	root := tempTree(t, map[string]string{
		"secrets/flip": raceSecret + "\n",
		"pub/flip":     "public\n",
		"pub/.alt":     "->../secrets/flip",
		"box/flip":     "public\n",
		".altbox":      "->secrets",
	})
	env := Env{Policy: policytest.Policy(t, policytest.Tiers), Model: "limited/x", WorkDir: root}
	cases := []struct{ name, tool, input, path, alt string }{
		{"read, file swapped", "read", `{"path":"pub/flip"}`, "pub/flip", "pub/.alt"},
		{"grep, file swapped", "grep", `{"pattern":"SECRET|public","path":"pub"}`, "pub/flip", "pub/.alt"},
		{"glob, file swapped", "glob", `{"pattern":"*","path":"pub","content":true}`, "pub/flip", "pub/.alt"},
		{"read, folder swapped", "read", `{"path":"box/flip"}`, "box", ".altbox"},
		{"grep, folder swapped", "grep", `{"pattern":"SECRET|public","path":"box/flip"}`, "box", ".altbox"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stop := swapper(t, filepath.Join(root, c.path), filepath.Join(root, c.alt))
			defer stop()
			tool, _ := Lookup(c.tool)
			leaks, public := 0, 0
			for range 3000 {
				m := tool.Run(context.Background(), env, json.RawMessage(c.input)).Message
				text := m.Text()
				if strings.Contains(text, raceSecret) {
					leaks++
				}
				if strings.Contains(text, "public") {
					public++
				}
				for _, p := range m.Parts {
					if p.SourcePath != "" && strings.Contains(p.SourcePath, "secrets") {
						t.Fatalf("content attributed to a denied path: %+v", p)
					}
				}
			}
			if leaks > 0 {
				t.Fatalf("BYPASS: %d of 3000 runs returned the secret", leaks)
			}
			if public == 0 {
				t.Fatalf("no run read the public file: the race never ran")
			}
		})
	}
}
