//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
)

// TestFIFOIsRefusedAtOnce: opening a FIFO that no one writes to blocks
// forever unless the open does not wait. A hostile tree must not be able to
// hang a tool run (and with it the runner or the TUI).
func TestFIFOIsRefusedAtOnce(t *testing.T) {
	root := tempTree(t, map[string]string{"a.txt": "x\n", "pipe-link": "->pipe"})
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	env := Env{Policy: policytest.Policy(t, policytest.Tiers), Model: "trusted/x", WorkDir: root}
	for _, path := range []string{"pipe", "pipe-link"} {
		read, _ := Lookup("read")
		m := read.Run(context.Background(), env, json.RawMessage(`{"path":"`+path+`"}`)).Message
		if !m.IsError || !strings.Contains(m.Text(), "not a regular file") {
			t.Errorf("read %s: %q, want a not-a-regular-file error", path, m.Text())
		}
	}
}
