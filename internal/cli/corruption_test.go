//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scrim-dev/scrim/session"
)

// corruptStore builds a closed store with sessions whose messages are both
// small (kept in Badger's tables) and large (in its value log), and returns
// its folder and session IDs.
func corruptStore(t *testing.T) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	st, err := session.Open(dir)
	must(t, err)
	var ids []string
	for s := range 3 {
		h, err := st.Create(session.Header{Title: fmt.Sprintf("session %d", s)})
		must(t, err)
		var msgs []*session.Message
		for i := range 40 {
			text := fmt.Sprintf("message %d of session %d: continue with the parser", i, s)
			if i%5 == 0 {
				text += "\n" + strings.Repeat(fmt.Sprintf("line %d of a long tool result, to land in the value log\n", i), 40)
			}
			msgs = append(msgs, &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: text}}})
		}
		must(t, st.Append(h.ID, msgs...))
		ids = append(ids, h.ID)
	}
	must(t, st.Close())
	return dir, ids
}

// outputs runs, for each store in dirs, what a user runs to read a store —
// the list and each session — and returns each command's stdout, stderr
// and exit code, by store. The commands run one after the other in one
// scrim process (runCommands), a fresh Main each, which is much cheaper
// than a process each; a crash of the process gives every command not yet
// done the process's exit and stderr, which no check takes for a clean
// read, so a crash still fails the test (if less precisely).
//
// Under the race detector the test binary is several times slower to run:
// the process is then this test binary built without it (plainProcess).
func outputs(t *testing.T, dirs, ids []string) [][]string {
	t.Helper()
	cmds := append([][]string{{"sessions"}}, showArgs(ids)...)
	out := make([][]string, len(dirs))
	var args []string
	for _, dir := range dirs {
		for _, c := range cmds {
			if len(args) > 0 {
				args = append(args, "::")
			}
			args = append(append(args, "--store", dir), c...)
		}
	}
	cmd := plainProcess(t, args...)
	cmd.Env = append(cmd.Env, "SCRIM_TEST_MAIN=commands")
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(so.String()))
	for d := range dirs {
		for range cmds {
			var r commandResult
			if dec.Decode(&r) != nil {
				r = commandResult{Code: max(code, 1), Stderr: se.String()}
			}
			out[d] = append(out[d], fmt.Sprintf("%d\x00%s\x00%s", r.Code, r.Stdout, r.Stderr))
		}
	}
	return out
}

// flipBatch is how many flipped stores one process reads.
const flipBatch = 24

// plainProcess is scrimProcess, but when this test binary has the race
// detector, the process is this test binary built without it: for tests
// that run scrim hundreds of times or check only what a process writes. A
// test binary, not scrim: it runs many commands in one process
// (runCommands). With scrim itself, a process a command, the byte-flip
// test took 138 s of CI's 13 minutes. It is built once for the test run,
// into a folder TestMain removes.
func plainProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := scrimProcess(t, args...)
	if !raceEnabled {
		return cmd
	}
	plain.once.Do(func() {
		dir, err := os.MkdirTemp("", "scrim-plain-")
		if err != nil {
			plain.err = err
			return
		}
		plain.dir, plain.bin = dir, filepath.Join(dir, "cli.test")
		build := exec.Command("go", "test", "-c", "-o", plain.bin, "github.com/scrim-dev/scrim/internal/cli")
		build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
		if out, err := build.CombinedOutput(); err != nil {
			plain.err = fmt.Errorf("go test -c: %v\n%s", err, out)
		}
	})
	if plain.err != nil {
		t.Fatal(plain.err)
	}
	cmd.Path, cmd.Args = plain.bin, append([]string{plain.bin}, args...)
	return cmd
}

var plain struct {
	once     sync.Once
	dir, bin string
	err      error
}

func showArgs(ids []string) [][]string {
	var out [][]string
	for _, id := range ids {
		out = append(out, []string{"show", id})
	}
	return out
}

// TestByteFlipsAreReportedNeverSilent flips bytes all through each file of a
// store, one flip at a time, and reads the store the way a user does. For
// every flip, each command either prints exactly what it printed before,
// or fails with one line saying the store is damaged and naming scrim check:
// never changed text, never fewer messages without an error, never a
// panic's trace.
func TestByteFlipsAreReportedNeverSilent(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("flips a store's bytes a few hundred times")
	}
	pristine, ids := corruptStore(t)
	want := outputs(t, []string{pristine}, ids)[0]
	for _, w := range want {
		if !strings.HasPrefix(w, "0\x00") {
			t.Fatalf("the pristine store does not read: %q", w)
		}
	}
	files, _ := os.ReadDir(pristine)
	var names []string
	for _, f := range files {
		if f.Type().IsRegular() && !strings.HasSuffix(f.Name(), ".lock") && f.Name() != "LOCK" {
			names = append(names, f.Name())
		}
	}
	sort.Strings(names)
	// One subtest a file, side by side; the group returns when all are done.
	var flips, silent atomic.Int64
	t.Run("files", func(t *testing.T) {
		for _, name := range names {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				orig, err := os.ReadFile(filepath.Join(pristine, name))
				must(t, err)
				// Flips in batches: one process reads a batch's stores.
				places := flipPlaces(len(orig))
				for len(places) > 0 {
					batch := places[:min(flipBatch, len(places))]
					places = places[len(batch):]
					var dirs []string
					for _, at := range batch {
						flips.Add(1)
						dir := filepath.Join(t.TempDir(), "store")
						copyTree(t, pristine, dir)
						b := append([]byte(nil), orig...)
						b[at] ^= flipMask(at)
						must(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
						dirs = append(dirs, dir)
					}
					for f, got := range outputs(t, dirs, ids) {
						for k := range got {
							if got[k] == want[k] {
								continue
							}
							code, rest, _ := strings.Cut(got[k], "\x00")
							stdout, stderr, _ := strings.Cut(rest, "\x00")
							damaged := code != "0" && strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") == 0 &&
								strings.Contains(stderr, "is damaged") && strings.Contains(stderr, "scrim check")
							if !damaged {
								silent.Add(1)
								t.Errorf("%s byte %d of %d flipped: command %d: exit %s\nstdout %.300q\nstderr %.600q", name, batch[f], len(orig), k, code, stdout, stderr)
							}
						}
					}
				}
			})
		}
	})
	t.Logf("%d flips in %d files", flips.Load(), len(names))
	if n := silent.Load(); n > 0 {
		t.Fatalf("%d reads were neither the original output nor a one-line damaged error", n)
	}
}

// flipPlaces samples a file's bytes: all of a short file's first bytes (its
// header), then evenly through the rest.
func flipPlaces(n int) []int {
	var out []int
	for i := 0; i < min(n, 24); i++ {
		out = append(out, i)
	}
	const samples = 48
	for k := 1; k <= samples && n > 24; k++ {
		out = append(out, 24+(n-24)*k/(samples+1))
	}
	return out
}

// flipMask changes one bit, a letter's case on the way (continue → contiNue).
func flipMask(at int) byte {
	if at%2 == 0 {
		return 0x20
	}
	return 0x01
}

// TestCheckFindsDamageAndRepairCopiesWhatReads: scrim check says a whole
// store is whole; after one byte of one session's long message flips, it
// names that message, the session's show fails with the damaged line, and
// --repair copies the other sessions exactly and the damaged one with what
// reads, into a fresh store beside the old one, which is left as it was.
func TestCheckFindsDamageAndRepairCopiesWhatReads(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir, ids := corruptStore(t)
	out, stderr, code := scrim(t, "", "check", dir)
	if code != exitOK || !strings.Contains(out, "ok: every checksum matches") || !strings.Contains(out, "3 sessions, 120 messages read") {
		t.Fatalf("check of a whole store: exit %d\n%s%s", code, out, stderr)
	}
	var want []string
	for _, id := range ids {
		o, _, _ := scrim(t, "", "--store", dir, "show", id, "--format", "json")
		want = append(want, o)
	}

	// Flip a byte inside message 6 of session 1, a value in the value log.
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	flipped := false
	for _, v := range vlogs {
		b, _ := os.ReadFile(v)
		if i := strings.Index(string(b), "message 5 of session 1:"); i >= 0 {
			b[i+30] ^= 0x20
			must(t, os.WriteFile(v, b, 0o600))
			flipped = true
		}
	}
	if !flipped {
		t.Fatal("the long message is not in a value log")
	}
	out, _, code = scrim(t, "", "check", dir)
	if code == exitOK || !strings.Contains(out, "session "+ids[1]+" message 6") || !strings.Contains(out, "message 6 cannot be read") {
		t.Fatalf("check of the damaged store: exit %d\n%s", code, out)
	}
	_, stderr, code = scrim(t, "", "--store", dir, "show", ids[1])
	if code == exitOK || !strings.Contains(stderr, "is damaged") || !strings.Contains(stderr, "scrim check") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("show of the damaged session: exit %d %q", code, stderr)
	}

	before := dirBytes(t, dir)
	if out2, _, _ := scrim(t, "", "check", dir); out2 != out {
		t.Fatalf("a second check says otherwise:\n%s", out2)
	}
	out, stderr, code = scrim(t, "", "check", "--repair", dir)
	if code != exitOK || !strings.Contains(out, "2 sessions whole, 1 partly") {
		t.Fatalf("repair: exit %d\n%s%s", code, out, stderr)
	}
	if got := dirBytes(t, dir); got != before {
		t.Fatal("check or repair changed the damaged store")
	}
	repaired, _ := filepath.Glob(dir + ".repaired-*")
	if len(repaired) != 1 {
		t.Fatalf("repaired stores: %v", repaired)
	}
	for i, id := range ids {
		got, stderr, code := scrim(t, "", "--store", repaired[0], "show", id, "--format", "json")
		if code != exitOK {
			t.Fatalf("show %s in the repaired store: %s", id, stderr)
		}
		switch {
		case i != 1 && got != want[i]:
			t.Fatalf("session %d is not copied exactly:\n%s\nwant\n%s", i, got, want[i])
		case i == 1 && (!strings.Contains(got, "could not be read") || strings.Count(got, `"role":"user"`) != 39):
			t.Fatalf("the damaged session's copy:\n%.2000s", got)
		}
	}
	if out, _, code := scrim(t, "", "check", repaired[0]); code != exitOK {
		t.Fatalf("the repaired store does not check: %s", out)
	}
}

// dirBytes is every file of dir, for telling whether it changed.
func dirBytes(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == "scrim.lock" {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %d %x\n", e.Name(), len(data), data)
	}
	return b.String()
}
