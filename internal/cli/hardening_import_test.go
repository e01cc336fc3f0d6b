//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
)

// claudeTranscript writes a Claude Code transcript: a prompt, then one Read
// call and its result per turn.
type claudeTranscript struct {
	b   strings.Builder
	cwd string
	n   int
}

func newClaudeTranscript(cwd string) *claudeTranscript {
	c := &claudeTranscript{cwd: cwd}
	c.line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Look at the files."}})
	return c
}

func (c *claudeTranscript) line(v map[string]any) {
	c.n++
	v["cwd"], v["sessionId"], v["uuid"] = c.cwd, "s", fmt.Sprintf("u%d", c.n)
	v["timestamp"] = time.Date(2025, 1, 1, 0, 0, c.n%60, 0, time.UTC).Format(time.RFC3339)
	b, _ := json.Marshal(v)
	c.b.Write(b)
	c.b.WriteByte('\n')
}

func (c *claudeTranscript) read(path, content string) {
	id := fmt.Sprintf("toolu_%d", c.n)
	c.line(map[string]any{"type": "assistant", "message": map[string]any{"id": "m" + id, "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": "Read", "input": map[string]any{"file_path": path}}}}})
	c.line(map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "     1\t" + content}}}})
}

func (c *claudeTranscript) write(t *testing.T, path string) {
	t.Helper()
	must(t, os.WriteFile(path, []byte(c.b.String()), 0o644))
}

// TestAdversarialImport: transcripts name files the way an agent did, through
// links, "..", other spellings. Imported results are tagged with what the
// path resolves to on this machine, so the limited model gets placeholders.
func TestAdversarialImport(t *testing.T) {
	t.Parallel()
	f := newAdvFixture(t)
	tr := newClaudeTranscript(f.ws)
	reads := []struct{ path, secret, denied string }{
		{"secrets/key.txt", "secrets/key.txt", "secrets/key.txt"},
		{"link-file", "secrets/key.txt", "secrets/key.txt"},
		{f.ws + "/link-dir/sub/deep.txt", "secrets/sub/deep.txt", "secrets/sub/deep.txt"},
		// Physically dotdot/.. is secrets/: a lexical clean would say public/.
		{"public/dotdot/../key.txt", "secrets/key.txt", "secrets/key.txt"},
		{"mirror/secrets/[abc].txt", "secrets/[abc].txt", "secrets/[abc].txt"},
		{f.out + "/alias/secrets/*.txt", "secrets/*.txt", "secrets/*.txt"},
		{"chain1", "secrets/key.txt", "secrets/key.txt"},
		{"env-link", "app/.env", "app/.env"},
		{"public/looks-public.txt", "secrets/[abc].txt", "secrets/[abc].txt"},
	}
	for _, r := range reads {
		tr.read(r.path, advSecrets[r.secret])
	}
	tr.read(f.ws+"/secrets/deleted-since.txt", "SECRET-deleted-since")
	f.secrets = append(f.secrets, "SECRET-deleted-since")
	file := filepath.Join(f.root, "transcript.jsonl")
	tr.write(t, file)

	out, stderr, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "import", "claude", file)
	if code != exitOK {
		t.Fatalf("import: exit %d: %s %s", code, out, stderr)
	}
	id := importedSession(t, f.store, file)
	f.session = id
	doc := f.redact(t, "demo/limited")
	f.noSecret(t, "redact of the imported session for demo/limited", doc.raw)
	ph := doc.placeholders(t, "limited")
	for _, r := range append(reads, struct{ path, secret, denied string }{"", "", "secrets/deleted-since.txt"}) {
		if !ph[f.path(r.denied)] {
			t.Errorf("%s: no placeholder for %s; have %q", r.path, r.denied, keys(ph))
		}
	}
	full := f.redact(t, "demo/trusted")
	if !strings.Contains(full.raw, advSecrets["secrets/key.txt"]) {
		t.Fatalf("the trusted model does not see the imported content: the test proves nothing")
	}
}

// importedSession finds the session made from file: the file's own
// conversation where it has subagents (whose origins name it too).
func importedSession(t testing.TB, store, file string) string {
	t.Helper()
	st, err := session.Open(store)
	must(t, err)
	defer st.Close()
	hs, _, err := st.List()
	must(t, err)
	found := ""
	for _, h := range hs {
		if strings.HasSuffix(h.Origin, ": "+file) {
			return h.ID
		}
		if found == "" && strings.Contains(h.Origin, file) {
			found = h.ID
		}
	}
	if found != "" {
		return found
	}
	t.Fatalf("no session imported from %s in %+v", file, hs)
	return ""
}

// sessionsOf is how many sessions the store has and the message counts.
func sessionCounts(t *testing.T, store string) []uint64 {
	t.Helper()
	st, err := session.Open(store)
	must(t, err)
	defer st.Close()
	hs, bad, err := st.List()
	if err != nil || len(bad) > 0 {
		t.Fatalf("list: %v %v", err, bad)
	}
	var out []uint64
	for _, h := range hs {
		msgs, bad, err := st.Messages(h.ID)
		if err != nil || len(bad) > 0 || uint64(len(msgs)) != h.Count {
			t.Fatalf("session %s: %d messages stored, header says %d (%v %v)", h.ID, len(msgs), h.Count, err, bad)
		}
		out = append(out, h.Count)
	}
	return out
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// TestKillDuringImport: scrim import is killed (SIGKILL) while it streams a
// large transcript into the store. Reopened, the store holds either the
// whole file or none of it; importing again gives the whole file.
func TestKillDuringImport(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	tr := newClaudeTranscript(dir)
	page := strings.Repeat("a line of a source file that the agent read, long enough to be a real one\n", 50)
	for i := range 4000 {
		tr.read(fmt.Sprintf("%s/src/file%d.go", dir, i), page)
	}
	file := filepath.Join(dir, "big.jsonl")
	tr.write(t, file)

	ref := filepath.Join(dir, "reference")
	if _, stderr, code := scrim(t, "", "--store", ref, "import", "claude", file); code != exitOK {
		t.Fatalf("reference import: %s", stderr)
	}
	want := sessionCounts(t, ref)
	if len(want) != 1 {
		t.Fatalf("reference import made %d sessions", len(want))
	}

	killed := 0
	for _, at := range []int64{1 << 20, 4 << 20, 12 << 20} {
		store := filepath.Join(dir, fmt.Sprintf("store-%d", at))
		cmd := scrimProcess(t, "--store", store, "import", "claude", file)
		must(t, cmd.Start())
		deadline := time.Now().Add(120 * time.Second)
		for dirSize(store) < at && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
		}
		got := sessionCounts(t, store)
		if len(got) != 0 && (len(got) != 1 || got[0] != want[0]) {
			t.Fatalf("killed at %d bytes: sessions with %v messages, want none or %v", at, got, want)
		}
		if _, stderr, code := scrim(t, "", "--store", store, "import", "claude", file); code != exitOK {
			t.Fatalf("import again: %s", stderr)
		}
		if got := sessionCounts(t, store); len(got) != 1 || got[0] != want[0] {
			t.Fatalf("after importing again: %v, want %v", got, want)
		}
	}
	if killed == 0 {
		t.Fatal("every import finished before the kill: the test proves nothing; make the transcript larger")
	}
}
