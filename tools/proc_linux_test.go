package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// grep and glob --content over /proc/self/fd return nothing of a file that
// was deleted while held open: its link cannot be resolved, so it is
// denied for every tier, the one that reads everything included.
func TestProcFDOfDeletedFiles(t *testing.T) {
	root := tempTree(t, map[string]string{".env": "TOKEN=PROC-SECRET\n", "key.pem": "PROC-SECRET-PEM\n"})
	var held []*os.File
	for _, name := range []string{".env", "key.pem"} {
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
		defer f.Close()
		os.Remove(filepath.Join(root, name))
	}
	env := envFor(t, "trusted/m", root)
	for _, run := range []struct {
		tool string
		in   map[string]any
	}{
		{"grep", map[string]any{"pattern": "PROC-SECRET", "path": "/proc/self/fd"}},
		{"glob", map[string]any{"pattern": "*", "path": "/proc/self/fd", "content": true}},
		{"read", map[string]any{"path": "/proc/self/fd/" + itoa(int(held[0].Fd()))}},
	} {
		m := runTool(t, run.tool, env, run.in).Message
		if strings.Contains(m.Text(), "TOKEN=PROC-SECRET") || strings.Contains(m.Text(), "PROC-SECRET-PEM") {
			t.Fatalf("%s returned the deleted file's content: %q", run.tool, m.Text())
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
