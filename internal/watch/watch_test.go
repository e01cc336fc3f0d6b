package watch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/codex"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// running is a watcher started on a test's store, with the events it sent.
type running struct {
	st     *session.Store
	mu     sync.Mutex
	events []Event
}

// start runs a watcher of roots (all Claude Code) on st with a short
// debounce, stopped when t ends.
func start(t *testing.T, st *session.Store, roots ...string) *running {
	t.Helper()
	var rs []Root
	for _, r := range roots {
		rs = append(rs, Root{Agent: claude.Agent, Dir: r, Factory: claude.New})
	}
	w := New(st, rs)
	w.Debounce, w.MaxWait = 30*time.Millisecond, 300*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{st: st}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		w.Run(ctx)
	}()
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

func (r *running) finished() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.events {
		if ev.Finished {
			n++
		}
	}
	return n
}

func (r *running) errs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		if ev.Err != nil {
			out = append(out, ev.Err.Error())
		}
	}
	return out
}

// dump renders every session of st: its title, origin and messages (role,
// tool, parts, sourcePaths, note, and the text), sorted by title; IDs are
// left out, as two imports make different ones.
func dump(t *testing.T, st *session.Store) string {
	t.Helper()
	hs, _, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hs {
		msgs, bad, err := st.Messages(h.ID)
		if err != nil || len(bad) > 0 {
			t.Fatalf("messages of %s: %v %v", h.ID, err, bad)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "session %q %s %s (%d)\n", h.Title, h.Origin, h.WorkDir, h.Count)
		for i := range msgs {
			fmt.Fprintf(&b, "  #%d %s\n", msgs[i].Seq, importtest.Describe(&msgs[i]))
			for _, p := range msgs[i].Parts {
				fmt.Fprintf(&b, "    %q\n", p.Text)
			}
		}
		out = append(out, b.String())
	}
	sort.Strings(out)
	return strings.Join(out, "")
}

// oneShot is dump of a fresh store that imported file whole.
func oneShot(t *testing.T, file string) string {
	t.Helper()
	st := importtest.Store(t)
	if _, err := importers.Import(st, claude.Agent, file, claude.New); err != nil {
		t.Fatal(err)
	}
	return dump(t, st)
}

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func appendTo(t *testing.T, file string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// A transcript written line by line while the watcher runs, some lines in
// two writes, ends in the store exactly as a one-shot import of the whole
// file makes it: the same sessions, messages in the same order, the same
// sourcePaths and text.
func TestLineByLineMatchesOneShotImport(t *testing.T) {
	fixture, err := os.ReadFile("../../session/importers/claude/testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "projects")
	if err := os.MkdirAll(filepath.Join(root, "-home-dev-shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	r := start(t, st, root)
	file := filepath.Join(root, "-home-dev-shop", "1111-aaaa.jsonl")
	lines := bytes.SplitAfter(fixture, []byte("\n"))
	for i, l := range lines {
		if i%3 == 1 && len(l) > 10 {
			appendTo(t, file, l[:len(l)/2]) // half a line: left for the next pass
			time.Sleep(50 * time.Millisecond)
			l = l[len(l)/2:]
		}
		appendTo(t, file, l)
		time.Sleep(time.Duration(5+(i*37)%60) * time.Millisecond)
	}
	want := oneShot(t, file)
	var got string
	eventually(t, "the watched import to match the one-shot import", func() bool {
		got = dump(t, st)
		return got == want
	})
	if n := r.finished(); n < 3 {
		t.Errorf("only %d passes: the file was not imported as it grew", n)
	}
	if errs := r.errs(); len(errs) > 0 {
		t.Errorf("errors: %q", errs)
	}
	if !strings.Contains(got, "Fixing the checkout test") || !strings.Contains(got, "paths=[/home/dev/shop/src/cart.go]") {
		t.Fatalf("unexpected import:\n%s", got)
	}
}

// A half-written last line is imported only once it is whole.
func TestHalfWrittenLineWaits(t *testing.T) {
	root := t.TempDir()
	var buf bytes.Buffer
	if _, err := importtest.WriteClaude(&buf, 1, importtest.ClaudeOptions{SessionID: "half"}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(buf.Bytes(), []byte("\n"))
	file := filepath.Join(root, "half.jsonl")
	st := importtest.Store(t)
	r := start(t, st, root)
	appendTo(t, file, bytes.Join(lines[:2], nil))
	wantTwo := oneShot(t, file) // the same file, as it is now, into another store
	var got string
	defer func() {
		if t.Failed() {
			t.Logf("got:\n%s\nwant:\n%s\nevents %+v", got, wantTwo, r.events)
		}
	}()
	eventually(t, "the first two lines", func() bool { got = dump(t, st); return got == wantTwo })

	passes := r.finished()
	third := lines[2]
	appendTo(t, file, third[:len(third)-40])
	eventually(t, "a pass over the half-written line", func() bool { return r.finished() > passes })
	if got := dump(t, st); got != wantTwo {
		t.Fatalf("a half-written line was imported:\n%s", got)
	}
	appendTo(t, file, third[len(third)-40:])
	want := oneShot(t, file)
	eventually(t, "the line once whole", func() bool { return dump(t, st) == want })
	// The third line is the turn's Read call: it revises message #2.
	if !strings.Contains(want, "call:r0:Read") || strings.Contains(wantTwo, "call:r0:Read") {
		t.Fatalf("the third line should add the Read call:\n%s", want)
	}
}

// Folders created after the watcher started are watched, and so are roots
// that did not exist when it started.
func TestNewFoldersAreWatched(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "projects")
	later := filepath.Join(base, "not", "yet", "sessions") // does not exist at start
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(file, id string) {
		t.Helper()
		var buf bytes.Buffer
		if _, err := importtest.WriteClaude(&buf, 1, importtest.ClaudeOptions{SessionID: id}); err != nil {
			t.Fatal(err)
		}
		appendTo(t, file, buf.Bytes())
	}
	s := importtest.Store(t)
	titles := func() string {
		hs, _, _ := s.List()
		var ts []string
		for _, h := range hs {
			ts = append(ts, h.Title)
		}
		sort.Strings(ts)
		return strings.Join(ts, " | ")
	}
	// Already there: imported at start (catch-up), which also shows the
	// watcher is running.
	write(filepath.Join(root, "seed.jsonl"), "seed")
	r := start(t, s, root, later)
	eventually(t, "the transcript already there", func() bool { return strings.Count(titles(), "Step") == 1 })

	sub := filepath.Join(root, "-home-dev-new", "deeper")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(sub, "new.jsonl"), "new")
	eventually(t, "the transcript in a new subfolder", func() bool { return strings.Count(titles(), "Step") == 2 })

	if err := os.MkdirAll(filepath.Join(later, "2025", "06"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(later, "2025", "06", "late.jsonl"), "late")
	eventually(t, "the transcript in a root that appeared", func() bool { return strings.Count(titles(), "Step") == 3 })
	if errs := r.errs(); len(errs) > 0 {
		t.Errorf("errors: %q", errs)
	}
}

// A Codex rollout written in pieces into a Codex root ends as a one-shot
// import of it makes it.
func TestCodexRollout(t *testing.T) {
	var buf bytes.Buffer
	if _, err := importtest.WriteCodexRollout(&buf, 64<<10); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "sessions")
	day := filepath.Join(root, "2025", "09", "01")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	w := New(st, []Root{{Agent: codex.Agent, Dir: root, Factory: codex.New}})
	w.Debounce = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); w.Run(ctx) }()
	go func() {
		for range w.Events() {
		}
	}()
	defer func() { cancel(); <-stopped }()
	file := filepath.Join(day, "rollout-2025-09-01T10-00-00-big.jsonl")
	data := buf.Bytes()
	for _, part := range [][]byte{data[:len(data)/3], data[len(data)/3 : 2*len(data)/3], data[2*len(data)/3:]} {
		appendTo(t, file, part) // the cuts fall inside lines
		time.Sleep(60 * time.Millisecond)
	}
	one := importtest.Store(t)
	if _, err := importers.Import(one, codex.Agent, file, codex.New); err != nil {
		t.Fatal(err)
	}
	want := dump(t, one)
	eventually(t, "the rollout to match its one-shot import", func() bool { return dump(t, st) == want })
}

// A root removed while watched is watched again when it comes back.
func TestRootRemovedAndMadeAgain(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "projects")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	start(t, st, root)
	write := func(name, id string) {
		t.Helper()
		var buf bytes.Buffer
		if _, err := importtest.WriteClaude(&buf, 1, importtest.ClaudeOptions{SessionID: id}); err != nil {
			t.Fatal(err)
		}
		appendTo(t, filepath.Join(root, name), buf.Bytes())
	}
	sessions := func() int { hs, _, _ := st.List(); return len(hs) }
	write("one.jsonl", "one")
	eventually(t, "the first transcript", func() bool { return sessions() == 1 })
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	// The watcher learns of the removal asynchronously: make the folder
	// again until a transcript written in it is imported.
	eventually(t, "a transcript in the folder made again", func() bool {
		os.MkdirAll(root, 0o755)
		if _, err := os.Stat(filepath.Join(root, "two.jsonl")); err != nil {
			write("two.jsonl", "two")
		}
		return sessions() == 2
	})
}

// A root that is a symbolic link to a folder (dotfiles set-ups link
// ~/.claude) is watched through the link.
func TestRootIsALink(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "projects")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	var buf bytes.Buffer
	if _, err := importtest.WriteClaude(&buf, 1, importtest.ClaudeOptions{SessionID: "old"}); err != nil {
		t.Fatal(err)
	}
	appendTo(t, filepath.Join(real, "proj", "old.jsonl"), buf.Bytes())
	st := importtest.Store(t)
	start(t, st, link)
	sessions := func() int { hs, _, _ := st.List(); return len(hs) }
	eventually(t, "the transcript already there", func() bool { return sessions() == 1 })
	appendTo(t, filepath.Join(link, "proj", "new.jsonl"), bytes.ReplaceAll(buf.Bytes(), []byte(`"old"`), []byte(`"new"`)))
	eventually(t, "a transcript written through the link", func() bool { return sessions() == 2 })
}
