package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// fakeClock is a clock that moves only when told, so that a frame's rate
// and time left are the same on every run.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 9, 1, 10, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// scriptedImport is an import of 200 files of 50–250 KB (25 MB in all) as
// the bar sees it: one file done every 20 ms, files 7, 70 and 140 failing.
// It stops after upto files and returns the bar, its clock and what it
// drew. The ticker is not started: frames come from the files alone.
func scriptedImport(width int, profile termenv.Profile, upto int) (*importProgress, *fakeClock, *bytes.Buffer) {
	sizes := make([]int64, 200)
	for i := range sizes {
		sizes[i] = 50_000 + int64(i%5)*50_000
	}
	clk := newFakeClock()
	var tty bytes.Buffer
	p := newImportProgress(&tty, func() int { return width }, clk.now, profile, sizes)
	p.show()
	for i := range upto {
		clk.advance(20 * time.Millisecond)
		p.fileDone(i, i == 7 || i == 70 || i == 140)
	}
	return p, clk, &tty
}

// TestImportProgressFinalFrame: the frame left on screen when an import
// ends, in colour and under NO_COLOR, from a wide terminal to one too
// narrow for a bar.
func TestImportProgressFinalFrame(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		width   int
		profile termenv.Profile
	}{
		{"color_120", 120, termenv.TrueColor},
		{"nocolor_120", 120, termenv.Ascii},
		{"nocolor_80", 80, termenv.Ascii},
		{"nocolor_60", 60, termenv.Ascii},
		{"nocolor_40", 40, termenv.Ascii},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, tty := scriptedImport(tc.width, tc.profile, 200)
			p.finish()
			out := tty.String()
			last := out[strings.LastIndex(out, lineStart):]
			if !strings.HasSuffix(last, clearEOL+"\n") {
				t.Fatalf("the final frame does not end its line: %q", last)
			}
			frame := strings.TrimSuffix(strings.TrimPrefix(last, lineStart), clearEOL+"\n")
			if w := ansi.StringWidth(frame); w >= tc.width {
				t.Errorf("frame is %d columns wide on a terminal of %d: it would wrap", w, tc.width)
			}
			if tc.profile == termenv.Ascii && strings.Contains(frame, "\x1b") {
				t.Errorf("NO_COLOR frame has escape sequences: %q", frame)
			}
			golden.RequireEqual(t, last)
		})
	}
}

// TestImportProgressMidwayFrame: the rate and time left, part way.
func TestImportProgressMidwayFrame(t *testing.T) {
	t.Parallel()
	for _, width := range []int{120, 60} {
		t.Run(fmt.Sprintf("nocolor_%d", width), func(t *testing.T) {
			p, clk, _ := scriptedImport(width, termenv.Ascii, 80)
			frame := p.view(width, clk.now())
			golden.RequireEqual(t, frame+"\n")
		})
	}
}

// TestImportProgressRedrawsAtMostTenTimesASecond: 200 files in 4 s draw
// about 40 frames, not 200.
func TestImportProgressRedrawsAtMostTenTimesASecond(t *testing.T) {
	t.Parallel()
	p, _, tty := scriptedImport(120, termenv.Ascii, 200)
	p.finish()
	frames := strings.Count(tty.String(), lineStart)
	if frames < 30 || frames > 42 { // the first, one per 100 ms of 4 s, the final
		t.Errorf("%d frames for 4 s of import, want about 40", frames)
	}
}

// TestImportProgressLinesAbove: a line printed while the bar is up goes on
// a line of its own above it, on the bar's terminal or another stream, and
// the bar comes back below it.
func TestImportProgressLinesAbove(t *testing.T) {
	t.Parallel()
	p, _, tty := scriptedImport(120, termenv.Ascii, 10)
	frame := p.frame
	var stderr bytes.Buffer
	tty.Reset()
	p.println(tty, "a.jsonl: 3 messages")
	if want := lineStart + clearEOL + "a.jsonl: 3 messages\n" + lineStart + frame + clearEOL; tty.String() != want {
		t.Errorf("a line on the terminal:\n got %q\nwant %q", tty.String(), want)
	}
	tty.Reset()
	p.println(&stderr, "scrim: b.jsonl looks binary")
	if stderr.String() != "scrim: b.jsonl looks binary\n" {
		t.Errorf("stderr got %q", stderr.String())
	}
	if want := lineStart + clearEOL + lineStart + frame + clearEOL; tty.String() != want {
		t.Errorf("around a line on stderr, the terminal got %q, want %q", tty.String(), want)
	}
	// A nil bar (no terminal) prints the line as it is.
	var nilBar *importProgress
	var out bytes.Buffer
	nilBar.println(&out, "c.jsonl: 1 messages")
	nilBar.fileDone(0, false)
	nilBar.finish()
	if out.String() != "c.jsonl: 1 messages\n" {
		t.Errorf("without a bar: %q", out.String())
	}
}

// TestImportProgressOnlyOnATerminal: a buffer, a file and a pipe get no bar.
func TestImportProgressOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "file": f, "pipe": w} {
		a := &app{stdout: out, lookupEnv: func(string) (string, bool) { return "", false }}
		if _, ok := a.progressTerminal(); ok {
			t.Errorf("%s: taken for a terminal", name)
		}
	}
}

// writeTree writes n small transcripts and one binary file below a new
// folder, and returns the folder.
func writeTree(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	if _, err := importtest.WriteClaudeTree(root, importtest.TreeOptions{Files: n, Projects: 2, Median: 4000}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "binary.jsonl"), []byte("bin\x00ary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

var summaryLineRE = regexp.MustCompile(`^\S+\.jsonl: \d+ messages?, \d+ tool results? tagged, \d+ unknown-source results?, \d+ skipped lines?(, \d+ subagent sessions?)? → session [0-9a-f]{16}$`)

// TestImportWithoutTerminalPrintsEachFile: stdout that is not a terminal
// gets a summary line per file and the total line, nothing else; errors go
// to stderr one line each. --verbose prints the same.
func TestImportWithoutTerminalPrintsEachFile(t *testing.T) {
	t.Parallel()
	isolate(t)
	root := writeTree(t, 6)
	var outs [2]string
	for i, args := range [][]string{
		{"import", "claude", root, "--store", t.TempDir()},
		{"import", "--verbose", "claude", root, "--store", t.TempDir()},
	} {
		stdout, stderr, code := scrim(t, "", args...)
		if code != exitError {
			t.Fatalf("%v: exit %d, want %d for the binary file (stderr %q)", args, code, exitError, stderr)
		}
		if strings.ContainsAny(stdout+stderr, "\x1b\r") {
			t.Errorf("%v: escape sequences or carriage returns in the output: %q %q", args, stdout, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		if len(lines) != 7 {
			t.Fatalf("%v: %d lines, want 6 summaries and the total:\n%s", args, len(lines), stdout)
		}
		for _, l := range lines[:6] {
			if !summaryLineRE.MatchString(l) {
				t.Errorf("%v: not a summary line: %q", args, l)
			}
		}
		if !regexp.MustCompile(`^6 files: \d+ messages?, \d+ tool results? tagged, \d+ unknown-source results?, \d+ skipped lines?$`).MatchString(lines[6]) {
			t.Errorf("%v: total line %q", args, lines[6])
		}
		errs := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if len(errs) != 2 || !strings.Contains(errs[0], "binary.jsonl looks binary") ||
			errs[1] != "scrim: 1 of 7 files could not be imported (see above); fix or remove them and import again" {
			t.Errorf("%v: stderr %q", args, stderr)
		}
		outs[i] = sessionRE.ReplaceAllString(stdout, "→ session ID")
	}
	if outs[0] != outs[1] {
		t.Errorf("--verbose without a terminal differs:\n%s\nvs\n%s", outs[0], outs[1])
	}
}

// TestImportProgressWhileReading: the bytes read of a file move the bar
// before the file is done; the file done adds only what was not read (a
// resumed import reads from where it stopped), and a file that grew since
// it was stated counts as its stated size.
func TestImportProgressWhileReading(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var tty bytes.Buffer
	p := newImportProgress(&tty, func() int { return 120 }, clk.now, termenv.Ascii, []int64{10 << 20, 4 << 20})
	p.show()
	for range 4 {
		clk.advance(200 * time.Millisecond)
		p.fileRead(0, 2<<20)
	}
	if p.bytes != 8<<20 || !strings.Contains(p.frame, "0/2 files") || !strings.Contains(p.frame, " 8.4/14.7 MB") {
		t.Errorf("after 8 MiB of the first file read: %d bytes, frame %q", p.bytes, p.frame)
	}
	p.fileDone(0, false)
	p.fileRead(1, 3<<20)
	p.fileRead(1, 3<<20) // grown
	p.fileDone(1, false)
	if p.bytes != p.total || p.total != 14<<20 {
		t.Errorf("both done: %d of %d bytes", p.bytes, p.total)
	}
}
