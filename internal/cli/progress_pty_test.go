//go:build linux

package cli

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of cols×rows: the terminal end, which
// scrim writes to, and the end a terminal emulator would read.
func openPTY(t *testing.T, cols, rows uint16) (tty, emulator *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("cannot unlock a pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("cannot name a pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("cannot open a pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return s, m
}

// runOnTerminal runs scrim with stdout on a pseudo-terminal of the given
// width and returns what reached the terminal and stderr.
func runOnTerminal(t *testing.T, cols uint16, env map[string]string, args ...string) (screen, stderr string, code int) {
	t.Helper()
	tty, emulator := openPTY(t, cols, 24)
	var got bytes.Buffer
	read := make(chan struct{})
	go func() {
		io.Copy(&got, emulator) // until the terminal end is closed
		close(read)
	}()
	look := lookup(t)
	clk := newFakeClock()
	var errb bytes.Buffer
	code = Main(args, Env{
		LookupEnv: func(k string) (string, bool) {
			if v, ok := env[k]; ok {
				return v, true
			}
			return look(k)
		},
		Stdin:  strings.NewReader(""),
		Stdout: tty,
		Stderr: &errb,
		Now:    func() time.Time { clk.advance(10 * time.Millisecond); return clk.now() },
	})
	tty.Close()
	<-read
	return got.String(), errb.String(), code
}

// TestImportProgressOnTerminal: on a terminal, an import of many files
// draws the bar on stdout in place of the summary lines, keeps its final
// frame and prints the total line below it; errors still go to stderr.
// NO_COLOR leaves the bar without colours; --verbose brings the summary
// lines back, above the bar.
func TestImportProgressOnTerminal(t *testing.T) {
	t.Parallel()
	isolate(t)
	root := writeTree(t, 6)
	total := regexp.MustCompile(`(?m)^6 files: \d+ messages?, \d+ tool results? tagged, \d+ unknown-source results?, \d+ skipped lines?\r?$`)
	final := regexp.MustCompile(`\r█+ 100%  7/7 files \(1 failed\)  [0-9.]+/[0-9.]+ MB  [ 0-9.]+ MB/s  took [0-9.]+s\x1b\[K\r?\n`)
	for _, tc := range []struct {
		name    string
		env     map[string]string
		verbose bool
	}{
		{"color", map[string]string{"TERM": "xterm-256color"}, false},
		{"NO_COLOR", map[string]string{"TERM": "xterm-256color", "NO_COLOR": "1"}, false},
		{"verbose", map[string]string{"TERM": "xterm-256color", "NO_COLOR": "1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"import", "claude", root, "--store", t.TempDir()}
			if tc.verbose {
				args = append(args, "--verbose")
			}
			screen, stderr, code := runOnTerminal(t, 100, tc.env, args...)
			if code != exitError || !strings.Contains(stderr, "binary.jsonl looks binary") {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			plain := regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(screen, "")
			if !final.MatchString(plain) || !total.MatchString(plain) || strings.Index(plain, "7/7 files") > strings.Index(plain, "6 files:") {
				t.Errorf("want the final frame, then the total line:\n%q", plain)
			}
			if colored := strings.Contains(screen, "\x1b[38;"); colored != (tc.env["NO_COLOR"] == "") {
				t.Errorf("colours on screen: %v, NO_COLOR=%q", colored, tc.env["NO_COLOR"])
			}
			if lines := strings.Count(screen, "→ session "); tc.verbose != (lines == 6) || !tc.verbose && lines != 0 {
				t.Errorf("%d summary lines on screen with --verbose=%v", lines, tc.verbose)
			}
		})
	}
	t.Run("one file", func(t *testing.T) {
		// One file has nothing to count: its summary line, as ever.
		screen, _, code := runOnTerminal(t, 100, map[string]string{"TERM": "xterm"}, "import", "claude", claudeFixture, "--store", t.TempDir())
		if code != 0 || strings.Contains(screen, "\x1b") || strings.Count(screen, "\n") != 1 || !strings.Contains(screen, "→ session ") {
			t.Errorf("exit %d, screen %q", code, screen)
		}
	})
	t.Run("TERM=dumb", func(t *testing.T) {
		screen, _, _ := runOnTerminal(t, 100, map[string]string{"TERM": "dumb"}, "import", "claude", root, "--store", t.TempDir())
		if strings.Contains(screen, "\x1b") || strings.Count(screen, "→ session ") != 6 {
			t.Errorf("a dumb terminal gets the lines, not a bar: %q", screen)
		}
	})
}

// TestImportProgressOfOneLongFile: one transcript of longImport bytes or
// more gets the bar on a terminal, below its summary line, which it still
// prints (there is no total line for one file). (Not parallel: it lowers
// longImport for the whole package.)
func TestImportProgressOfOneLongFile(t *testing.T) {
	isolate(t)
	defer func(n int64) { longImport = n }(longImport)
	longImport = 1
	screen, stderr, code := runOnTerminal(t, 100, map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, "import", "claude", claudeFixture, "--store", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	line, final := strings.Index(screen, "→ session "), regexp.MustCompile(`\r█+ 100%  1/1 files  [0-9.]+/[0-9.]+ MB  [ 0-9.]+ MB/s  took [0-9.]+s\x1b\[K\r?\n$`)
	if line < 0 || !final.MatchString(screen) || strings.LastIndex(screen, "1/1 files") < line {
		t.Errorf("want the summary line, then the bar's final frame:\n%q", screen)
	}
}
