//go:build unix

package cli

import (
	"github.com/scrim-dev/scrim/session"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReimportKeepsWhatScrimAdded is the case through the real
// process: import a Claude Code transcript, talk to a model in scrim (its
// prompt and answer are stored in the session), then the transcript is
// rewritten before what was imported (/rewind, compaction) and imported
// again. The session with scrim's messages is kept byte for byte, the
// transcript goes to a new session, and the import says so in one line.
func TestReimportKeepsWhatScrimAdded(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	store, file := filepath.Join(dir, "store"), filepath.Join(dir, "s.jsonl")
	line := func(uuid, text string) string {
		return `{"type":"user","cwd":"/w","sessionId":"s","message":{"role":"user","content":"` + text + `"},"uuid":"` + uuid + `","timestamp":"2025-01-01T00:00:00Z"}` + "\n"
	}
	must(t, os.WriteFile(file, []byte(line("u1", "first question")), 0o600))
	if out, stderr, code := scrim(t, "", "--store", store, "import", "claude", file); code != exitOK {
		t.Fatalf("import: %s %s", out, stderr)
	}
	id := importedSession(t, store, file)
	if out, stderr, code := scrim(t, "", "--store", store, "send", id, "--model", "demo/trusted", "asked in scrim"); code != exitOK {
		t.Fatalf("send: %s %s", out, stderr)
	}
	before, _, _ := scrim(t, "", "--store", store, "show", id, "--format", "json")

	must(t, os.WriteFile(file, []byte(line("u9", "rewound question")), 0o600))
	out, stderr, code := scrim(t, "", "--store", store, "import", "claude", file)
	if code != exitOK || strings.Count(out, "\n") != 1 {
		t.Fatalf("re-import: exit %d: %q %s", code, out, stderr)
	}
	if !strings.Contains(out, "changed since the last import; imported as a new session") ||
		!strings.Contains(out, id+", which has 2 messages added in scrim, is kept") {
		t.Fatalf("re-import line: %q", out)
	}
	after, _, code := scrim(t, "", "--store", store, "show", id, "--format", "json")
	if code != exitOK || after != before {
		t.Fatalf("the kept session changed:\n%s\nwant\n%s", after, before)
	}
	// The new session carries the transcript's times, the kept one the
	// send's: look for the one that is not id.
	st, err := session.Open(store)
	must(t, err)
	hs, _, err := st.List()
	st.Close()
	must(t, err)
	var others int
	for _, h := range hs {
		if strings.Contains(h.Origin, file) && h.ID != id {
			others++
		}
	}
	if others != 1 {
		t.Fatalf("the rewritten transcript went into %d new sessions, want 1: %+v", others, hs)
	}
	list, _, _ := scrim(t, "", "--store", store, "sessions")
	if strings.Count(list, "\n") != 3 { // header and two sessions
		t.Fatalf("sessions:\n%s", list)
	}
}
