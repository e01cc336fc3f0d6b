//go:build unix

package owned

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// deadPID is the ID of a process that has exited: the owner a kill leaves.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestRemoveOrphans: a folder whose owner is gone is removed; one this
// process claimed, one with no owner noted and one of another prefix stay.
// The parent's name is no pattern.
func TestRemoveOrphans(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "tmp [x]*")
	dead := strconv.Itoa(deadPID(t))
	for _, name := range []string{"scrim-x-dead", "scrim-x-live", "scrim-x-kept", "other-dead"} {
		d := filepath.Join(parent, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "db"), []byte("what the agent read"), 0o600); err != nil {
			t.Fatal(err)
		}
		switch name {
		case "scrim-x-live":
			if err := Claim(d, ".owner"); err != nil {
				t.Fatal(err)
			}
		case "scrim-x-dead", "other-dead":
			if err := os.WriteFile(filepath.Join(d, ".owner"), []byte(dead), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	RemoveOrphans(parent, "scrim-x-", ".owner")
	es, _ := os.ReadDir(parent)
	var left []string
	for _, e := range es {
		left = append(left, e.Name())
	}
	if want := []string{"other-dead", "scrim-x-kept", "scrim-x-live"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
