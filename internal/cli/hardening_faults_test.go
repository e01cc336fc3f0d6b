//go:build linux

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// faultProvider is a loopback provider whose answer to each request is
// scripted, and that records what it was sent.
type faultProvider struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	file   string // providers.toml naming it "fault"
}

func newFaultProvider(t *testing.T, dir string, script func(i int, w http.ResponseWriter, r *http.Request)) *faultProvider {
	t.Helper()
	p := &faultProvider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		i := len(p.bodies)
		p.bodies = append(p.bodies, string(b))
		p.mu.Unlock()
		script(i, w, r)
	}))
	t.Cleanup(p.Close)
	p.file = filepath.Join(dir, "providers.toml")
	must(t, os.WriteFile(p.file, []byte(fmt.Sprintf("[providers.fault]\nbase_url = %q\n", p.URL+"/v1")), 0o644))
	return p
}

func (p *faultProvider) body(i int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= len(p.bodies) {
		return ""
	}
	return p.bodies[i]
}

// sseChunk writes one streamed chat-completions chunk.
func sseChunk(w http.ResponseWriter, delta map[string]any, finish any) {
	b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func sseAnswer(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	sseChunk(w, map[string]any{"role": "assistant", "content": text}, nil)
	sseChunk(w, map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// startScrim runs scrim as a real process and returns it with a channel that
// gets each line it prints.
func startScrim(t *testing.T, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := scrimProcess(t, args...)
	out, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, lines
}

func waitLine(t *testing.T, lines <-chan string, substr string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("scrim ended before printing %q", substr)
			}
			if strings.Contains(l, substr) {
				return
			}
		case <-timeout:
			t.Fatalf("gave up waiting for %q", substr)
		}
	}
}

// consistent reopens the store and checks the session: every record
// decodes and validates, the header counts them, Seq runs 1..n, and every
// tool result answers an earlier call. It returns the messages.
func consistent(t *testing.T, store, id string) []session.Message {
	t.Helper()
	st, err := session.Open(store)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	h, err := st.Get(id)
	must(t, err)
	msgs, bad, err := st.Messages(id)
	if err != nil || len(bad) > 0 {
		t.Fatalf("reload: %v, undecodable %v", err, bad)
	}
	if uint64(len(msgs)) != h.Count {
		t.Fatalf("header counts %d messages, %d stored", h.Count, len(msgs))
	}
	calls := map[string]bool{}
	for i := range msgs {
		m := &msgs[i]
		if m.Seq != uint64(i+1) {
			t.Fatalf("message %d has Seq %d", i+1, m.Seq)
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("message %d: %v", m.Seq, err)
		}
		for _, p := range m.Parts {
			if p.Kind == session.PartToolCall {
				calls[p.CallID] = true
			}
		}
		if m.Role == session.RoleTool && m.ToolCallID != "" && !calls[m.ToolCallID] {
			t.Fatalf("tool result %d answers unknown call %s", m.Seq, m.ToolCallID)
		}
	}
	return msgs
}

func roles(msgs []session.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role))
	}
	return strings.Join(out, ",")
}

// TestKillDuringSendStream: scrim is killed (SIGKILL) while the answer
// streams. Meanwhile a second scrim is refused with the in-use message.
// After: the prompt is stored, no half answer, and --continue works.
func TestKillDuringSendStream(t *testing.T) {
	t.Parallel()
	f := newAdvFixture(t)
	release := make(chan struct{})
	prov := newFaultProvider(t, f.root, func(i int, w http.ResponseWriter, r *http.Request) {
		if i > 0 {
			sseAnswer(w, "the whole answer")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sseChunk(w, map[string]any{"role": "assistant", "content": "half an ans\n"}, nil)
		select { // stall until the client dies
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	base := []string{"--store", f.store, "--policy", f.policy, "--providers", prov.file}
	cmd, lines := startScrim(t, append(base, "send", f.session, "--model", "fault/m", "hello")...)
	waitLine(t, lines, "half an ans")

	// The store is held: another scrim says so, in one line.
	_, stderr, code := scrim(t, "", append(base, "redact", f.session, "--model", "fault/m")...)
	t.Logf("exit %d: %s", code, stderr) // go test -v: the messages the security notes quote
	checkOneLine(t, stderr)
	if code != exitError || !strings.Contains(stderr, " is in use by another scrim process (pid ") {
		t.Fatalf("second scrim: exit %d, %q", code, stderr)
	}

	must(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	msgs := consistent(t, f.store, f.session)
	if roles(msgs) != "user" || msgs[0].Text() != "hello" {
		t.Fatalf("after the kill: %s %q", roles(msgs), msgs[0].Text())
	}
	out, stderr, code := scrim(t, "", append(base, "send", f.session, "--continue", "--model", "fault/m")...)
	if code != exitOK || !strings.Contains(out, "the whole answer") {
		t.Fatalf("--continue: exit %d, %q %q", code, out, stderr)
	}
	msgs = consistent(t, f.store, f.session)
	if roles(msgs) != "user,assistant" || msgs[1].Text() != "the whole answer" {
		t.Fatalf("after --continue: %s", roles(msgs))
	}
}

// TestKillDuringToolRun: scrim is killed while a tool the model asked for
// runs. The call is stored without a result; the next request pairs it with
// an error result, so the provider accepts it, and the turn goes on.
func TestKillDuringToolRun(t *testing.T) {
	t.Parallel()
	f := newAdvFixture(t)
	pidFile := filepath.Join(f.root, "tool.pid")
	input, _ := json.Marshal(map[string]string{"command": "echo $$ > " + strconv.Quote(pidFile) + "; exec sleep 120"})
	prov := newFaultProvider(t, f.root, func(i int, w http.ResponseWriter, r *http.Request) {
		if i > 0 {
			sseAnswer(w, "carried on")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sseChunk(w, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_slow", "type": "function",
			"function": map[string]any{"name": "bash", "arguments": string(input)}}}}, nil)
		sseChunk(w, map[string]any{}, "tool_calls")
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	base := []string{"--store", f.store, "--policy", f.policy, "--providers", prov.file}
	cmd, _ := startScrim(t, append(base, "send", f.session, "--model", "fault/trusted", "run it")...)
	var pid int
	waitFor(t, "the tool to start", func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	syscall.Kill(pid, syscall.SIGKILL) // the tool's own process, orphaned by the kill

	msgs := consistent(t, f.store, f.session)
	if roles(msgs) != "user,assistant" || msgs[1].Parts[0].CallID != "call_slow" {
		t.Fatalf("after the kill: %s", roles(msgs))
	}
	out, stderr, code := scrim(t, "", append(base, "send", f.session, "--continue", "--model", "fault/trusted")...)
	if code != exitOK || !strings.Contains(out, "carried on") {
		t.Fatalf("--continue: exit %d, %q %q", code, out, stderr)
	}
	if req := prov.body(1); !strings.Contains(req, `"tool_call_id":"call_slow"`) || !strings.Contains(req, "no result was recorded") {
		t.Fatalf("the unpaired call was not answered in the next request:\n%s", req)
	}
	consistent(t, f.store, f.session)
}

// storeWithHistory is a store on dir with a session holding a few tool
// results, and the history as JSON to compare with later.
func storeWithHistory(t *testing.T, f *advFixture) string {
	t.Helper()
	for _, args := range [][]string{{"read", "public/readme.txt"}, {"bash", "--", "echo", "hello"}} {
		if _, stderr, code := f.tool(t, "demo/trusted", args); code != exitOK {
			t.Fatalf("%v: %s", args, stderr)
		}
	}
	return f.storedText(t)
}

// TestFullDisk: a store on a small tmpfs filled to the brim. Badger writes
// through memory-mapped files; without the free-space check scrim died of
// SIGBUS with a Go trace. Now: one line, exit 1, and the store intact.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	f := newAdvFixture(t)
	mnt := filepath.Join(f.root, "small")
	mkdirs(t, mnt)
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m"); err != nil {
		t.Skipf("needs root to mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	f.store = filepath.Join(mnt, "store")
	st, err := session.Open(f.store)
	must(t, err)
	h, err := st.Create(session.Header{Title: "full", WorkDir: f.ws})
	must(t, err)
	must(t, st.Close())
	f.session = h.ID
	before := storeWithHistory(t, f)

	filler := filepath.Join(mnt, "filler")
	for _, leave := range []int64{0, 64 << 10, 4 << 20, 15 << 20} {
		t.Run(humanBytes(uint64(leave))+" free", func(t *testing.T) {
			fill(t, filler, leave)
			for _, args := range [][]string{
				{"tool", "bash", "--session", h.ID, "--model", "m", "--", "echo", "hi"},
				{"redact", h.ID, "--model", "m"},
			} {
				cmd := scrimProcess(t, append([]string{"--store", f.store, "--policy", f.policy}, args...)...)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				err := cmd.Run()
				t.Logf("exit %d: %s", cmd.ProcessState.ExitCode(), stderr.String())
				checkOneLine(t, stderr.String())
				if code := cmd.ProcessState.ExitCode(); code != exitError || !strings.Contains(stderr.String(), "is full") {
					t.Fatalf("%s: %v, exit %d, %q", args[0], err, code, stderr.String())
				}
			}
		})
	}
	must(t, os.Remove(filler))
	if after := f.storedText(t); after != before {
		t.Fatalf("the store changed:\nbefore %s\nafter  %s", before, after)
	}
	if _, stderr, code := f.tool(t, "demo/trusted", []string{"bash", "--", "echo", "again"}); code != exitOK {
		t.Fatalf("after space came back: %s", stderr)
	}
	consistent(t, f.store, f.session)
}

// fill grows (or shrinks) path until the disk has about leave bytes free.
func fill(t *testing.T, path string, leave int64) {
	t.Helper()
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	must(t, err)
	defer file.Close()
	fi, err := file.Stat()
	must(t, err)
	if free, _ := diskFree(filepath.Dir(path)); int64(free) > leave {
		_, err = file.WriteAt(make([]byte, int64(free)-leave), fi.Size())
	} else {
		err = file.Truncate(fi.Size() - (leave - int64(free)))
	}
	if err != nil && !strings.Contains(err.Error(), "no space left") {
		t.Fatal(err)
	}
}

// TestReadOnlyStore: the store folder cannot be written (a read-only bind
// mount as root, who ignores permissions; chmod otherwise).
func TestReadOnlyStore(t *testing.T) {
	t.Parallel()
	f := newAdvFixture(t)
	before := storeWithHistory(t, f)
	store := f.store
	want := "cannot be written (permission denied)"
	if os.Geteuid() == 0 {
		store = filepath.Join(f.root, "ro")
		mkdirs(t, store)
		if err := unix.Mount(f.store, store, "", unix.MS_BIND, ""); err != nil {
			t.Skipf("cannot bind-mount: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(store, unix.MNT_DETACH) })
		must(t, unix.Mount("", store, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""))
		want = "is on a read-only file system"
	} else {
		must(t, os.Chmod(f.store, 0o500))
		t.Cleanup(func() { os.Chmod(f.store, 0o700) })
	}
	for _, args := range [][]string{
		{"tool", "bash", "--session", f.session, "--model", "m", "--", "echo", "hi"},
		{"redact", f.session, "--model", "m"},
	} {
		_, stderr, code := scrim(t, "", append([]string{"--store", store, "--policy", f.policy}, args...)...)
		t.Logf("exit %d: %s", code, stderr)
		checkOneLine(t, stderr)
		if code != exitError || !strings.Contains(stderr, want) {
			t.Fatalf("%s: exit %d, %q", args[0], code, stderr)
		}
	}
	if os.Geteuid() != 0 {
		os.Chmod(f.store, 0o700)
	}
	if after := f.storedText(t); after != before {
		t.Fatalf("the store changed")
	}
}

// TestImportOntoSmallTmpfs: an import that outgrows a 40 MiB tmpfs (which
// passes the check at open) used to die of SIGBUS inside Badger, writing
// its value log through a map the disk could not back. Now it stops with the
// one "is full" line, and the store holds what it held.
func TestImportOntoSmallTmpfs(t *testing.T) {
	t.Parallel()
	isolate(t)
	mnt := filepath.Join(t.TempDir(), "small")
	mkdirs(t, mnt)
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=40m"); err != nil {
		t.Skipf("needs root to mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	store := filepath.Join(mnt, "store")
	src := t.TempDir()
	small, big := filepath.Join(src, "small.jsonl"), filepath.Join(src, "big.jsonl")
	for _, f := range []struct {
		path string
		size int64
	}{{small, 1 << 20}, {big, 90 << 20}} {
		w, err := os.Create(f.path)
		must(t, err)
		_, err = importtest.WriteClaudeTranscript(w, f.size)
		must(t, err)
		must(t, w.Close())
	}
	if out, stderr, code := scrim(t, "", "--store", store, "import", "claude", small); code != exitOK {
		t.Fatalf("small import: %s %s", out, stderr)
	}
	id := importedSession(t, store, small)
	before, _, _ := scrim(t, "", "--store", store, "show", id, "--format", "json")

	cmd := scrimProcess(t, "--store", store, "import", "claude", big)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitError || !strings.Contains(stderr.String(), "is full") ||
		strings.Contains(stderr.String(), "SIGBUS") || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("big import: exit %d, %q", code, stderr.String())
	}
	after, _, code := scrim(t, "", "--store", store, "show", id, "--format", "json")
	if code != exitOK || after != before {
		t.Fatalf("the session imported before changed or cannot be read (exit %d)", code)
	}
	list, _, _ := scrim(t, "", "--store", store, "sessions")
	if strings.Count(list, "\n") != 2 {
		t.Fatalf("sessions after the refused import:\n%s", list)
	}
}
