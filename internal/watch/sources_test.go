package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session/importers/crush"
	"github.com/scrim-dev/scrim/session/importers/gemini"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// runRoots runs a watcher of roots on a fresh store until t ends.
func runRoots(t *testing.T, roots ...Root) *running {
	t.Helper()
	st := importtest.Store(t)
	w := New(st, roots)
	w.Debounce, w.MaxWait = 20*time.Millisecond, 200*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{st: st}
	stopped := make(chan struct{})
	go func() { defer close(stopped); w.Run(ctx) }()
	go func() {
		for ev := range w.Events() {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-stopped })
	return r
}

// messages is how many messages the store holds in all.
func (r *running) messages(t *testing.T) uint64 {
	hs, _, err := r.st.List()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, h := range hs {
		n += h.Count
	}
	return n
}

// A Gemini CLI session, rewritten whole on every turn, is imported as it
// grows, into the same session.
func TestGeminiSessionRewritten(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tmp")
	chats := filepath.Join(root, "9f1c", "chats")
	if err := os.MkdirAll(chats, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runRoots(t, Root{Agent: gemini.Agent, Dir: root, Source: &gemini.Source, Match: gemini.Match})
	file := filepath.Join(chats, "session-2025-10-01T10-00-x.json")
	msgs := `{"id":"u1","type":"user","content":"hello"}`
	for i, more := range []string{"", `,{"id":"g1","type":"gemini","content":"hi"}`} {
		msgs += more
		doc := `{"sessionId":"x","projectHash":"p","messages":[` + msgs + `]}`
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		want := uint64(i + 1)
		eventually(t, "the session to be imported", func() bool { return r.messages(t) == want })
	}
	if hs, _, _ := r.st.List(); len(hs) != 1 {
		t.Errorf("%d sessions, want the one", len(hs))
	}
}

// A Crush database is imported when its WAL is written: Crush keeps it
// open, and new rows reach only the -wal file.
func TestCrushDatabaseWAL(t *testing.T) {
	root := t.TempDir()
	db := filepath.Join(root, "app", ".crush", "crush.db")
	w := importtest.SQLite(t, db, importtest.Stmt{SQL: `
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts BLOB NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
INSERT INTO sessions VALUES ('s1', NULL, 'hello', 1, 1);`})
	r := runRoots(t, Root{Agent: crush.Agent, Dir: root, Source: &crush.Source, Match: crush.Match})
	for i := 1; i <= 2; i++ {
		if _, err := w.Exec("INSERT INTO messages VALUES (?, 's1', 'user', ?, NULL, ?, ?)", i, `[{"type":"text","data":{"text":"hi"}}]`, i, i); err != nil {
			t.Fatal(err)
		}
		want := uint64(i)
		eventually(t, "the new row to be imported", func() bool { return r.messages(t) == want })
	}
}
