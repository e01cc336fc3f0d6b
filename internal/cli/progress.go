package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"
)

const (
	// frameInterval keeps redraws to about ten a second: more is flicker
	// and terminal traffic (over ssh too) for nothing a person can read.
	frameInterval = 100 * time.Millisecond
	// The bar's width, with its percentage: it takes what the numbers leave
	// of the line, up to maxBarWidth; below minBarWidth it is not drawn.
	maxBarWidth = 50
	minBarWidth = 20
)

// Erasing a line: back to its start, then clear to its end. Nothing else is
// sent to the terminal, so a frame never moves the cursor off its line.
const (
	lineStart = "\r"
	clearEOL  = "\x1b[K"
)

// importProgress is the progress bar of an import of many files, or of one
// long one, on a terminal: one line, redrawn in place, in place of the
// summary lines that would scroll by. Lines printed meanwhile (--verbose, errors) go above it.
// A nil *importProgress draws nothing, and its println is a plain Fprintln,
// so that the import prints the same way with and without a bar.
type importProgress struct {
	mu    sync.Mutex
	tty   io.Writer  // the terminal the bar is drawn on
	width func() int // its width, asked at each frame: it may be resized
	now   func() time.Time
	bar   progress.Model

	sizes        []int64 // of each file, stated up front
	read         []int64 // of each file, read so far (fileRead)
	done, failed int
	bytes, total int64

	began, drawnAt time.Time
	frame          string // the frame on the terminal's last line, "" for none
	shown, closed  bool   // between show and close, frames are drawn
	final          bool   // the import is over: the time taken, not left

	stop     chan struct{}
	stopOnce sync.Once
	ticking  sync.WaitGroup
	restore  func() error // the terminal's mode as it was, if set
}

// progressTerminal is stdout when it is a terminal that can redraw a line:
// the bar then stands for the summary lines stdout would carry. Checking
// stdout, not stderr, keeps the bar out of `scrim import … > log`, and it
// is drawn on stdout too, the terminal known to be there (stderr may be
// redirected on its own).
func (a *app) progressTerminal() (*os.File, bool) {
	f, ok := a.stdout.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) || a.getenv("TERM") == "dumb" {
		return nil, false
	}
	return f, true
}

// newImportProgress makes the bar for files of the given sizes, drawn on
// tty, and starts its clock. start begins the redraws.
func newImportProgress(tty io.Writer, width func() int, now func() time.Time, profile termenv.Profile, sizes []int64) *importProgress {
	p := &importProgress{
		tty: tty, width: width, now: now, sizes: sizes, read: make([]int64, len(sizes)),
		bar:   progress.New(progress.WithDefaultGradient(), progress.WithColorProfile(profile)),
		began: now(),
		stop:  make(chan struct{}),
	}
	for _, s := range sizes {
		p.total += s
	}
	return p
}

// newTerminalProgress is the bar for an import on terminal f, its colours
// as f and the environment allow: none under NO_COLOR (https://no-color.org).
// It is nil, and the import prints its lines, where f cannot take the
// escape sequences that redraw a line (an old Windows console).
func (a *app) newTerminalProgress(f *os.File, sizes []int64) *importProgress {
	out := termenv.NewOutput(f, termenv.WithEnvironment(lookupEnviron(a.lookupEnv)))
	restore, err := termenv.EnableVirtualTerminalProcessing(out)
	if err != nil {
		return nil
	}
	width := func() int {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			return w
		}
		return 80
	}
	p := newImportProgress(f, width, a.now, out.EnvColorProfile(), sizes)
	p.restore = restore
	return p
}

// fileSizes are the files' sizes in bytes, 0 for one that cannot be
// stated (its import will say why).
func fileSizes(files []string) []int64 {
	sizes := make([]int64, len(files))
	for i, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			sizes[i] = fi.Size()
		}
	}
	return sizes
}

// show draws the first frame.
func (p *importProgress) show() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shown = true
	p.draw(true)
}

// start shows the bar and then redraws it on a ticker, so that the rate
// and time left move on while a big file holds the count still.
func (p *importProgress) start() {
	if p == nil {
		return
	}
	p.show()
	p.ticking.Add(1)
	go func() {
		defer p.ticking.Done()
		t := time.NewTicker(frameInterval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.draw(false)
				p.mu.Unlock()
			}
		}
	}()
}

// fileDone counts file i as done (or failed) and redraws, if a frame is due.
func (p *importProgress) fileDone(i int, failed bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if failed {
		p.failed++
	}
	p.bytes += max(p.sizes[i]-p.read[i], 0)
	p.draw(false)
}

// fileRead counts n more bytes of file i read, before it is done, and
// redraws, if a frame is due: the bar moves while one long transcript is
// imported.
func (p *importProgress) fileRead(i int, n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n = min(n, p.sizes[i]-p.read[i]); n > 0 { // a file grown since it was stated counts as its size
		p.read[i] += n
		p.bytes += n
		p.draw(false)
	}
}

// println writes line to w on a line of its own above the bar: the bar is
// erased, the line written, the bar drawn again below it.
func (p *importProgress) println(w io.Writer, line string) {
	if p == nil {
		fmt.Fprintln(w, line)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frame == "" {
		fmt.Fprintln(w, line)
		return
	}
	if w == p.tty {
		// One write: the bar never blinks out.
		io.WriteString(p.tty, lineStart+clearEOL+line+"\n"+lineStart+p.frame+clearEOL)
		return
	}
	io.WriteString(p.tty, lineStart+clearEOL)
	fmt.Fprintln(w, line)
	io.WriteString(p.tty, lineStart+p.frame+clearEOL)
}

// finish draws the final frame, with the time the import took, and leaves
// it on screen: the total line printed next goes below it.
func (p *importProgress) finish() {
	if p == nil {
		return
	}
	p.halt()
	p.mu.Lock()
	p.final = true
	p.draw(true)
	p.mu.Unlock()
	p.close()
}

// close stops the redraws and ends the bar's line, leaving the last frame
// on screen, so that whatever is printed next (an error) starts a line of
// its own. It is safe to call more than once.
func (p *importProgress) close() {
	if p == nil {
		return
	}
	p.halt()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frame != "" {
		io.WriteString(p.tty, "\n")
		p.frame = ""
	}
	if !p.closed && p.restore != nil {
		p.restore()
	}
	p.closed = true
}

// halt stops the ticker and waits for it, so that no frame is drawn after.
func (p *importProgress) halt() {
	p.stopOnce.Do(func() { close(p.stop) })
	p.ticking.Wait()
}

// draw writes the current frame, if one is due (force, or frameInterval
// since the last) and it differs from what is on screen. p.mu is held.
func (p *importProgress) draw(force bool) {
	if !p.shown || p.closed {
		return
	}
	now := p.now()
	if !force && now.Sub(p.drawnAt) < frameInterval {
		return
	}
	frame := p.view(p.width(), now)
	p.drawnAt = now
	if frame == p.frame {
		return
	}
	p.frame = frame
	io.WriteString(p.tty, lineStart+frame+clearEOL)
}

// view is the bar's line at width columns and time now, e.g.
//
//	██████████░░░░░░░░░░  50%  100/200 files  12.5/25.0 MB  8.3 MB/s  ETA 2s
//
// It stays a column short of the width, so that the terminal never wraps
// it (a wrapped line could not be redrawn in place). Where the line is
// narrow, the rate goes first, then the MB, then the bar, then the time.
func (p *importProgress) view(width int, now time.Time) string {
	width--
	elapsed := now.Sub(p.began)
	// Numbers are padded to the widths they reach, so that the bar keeps its
	// width and the fields their places as they grow.
	n := len(p.sizes)
	files := fmt.Sprintf("%*d/%d files", len(strconv.Itoa(n)), p.done, n)
	if p.failed > 0 {
		files += fmt.Sprintf(" (%d failed)", p.failed)
	}
	mb := megabytes(p.bytes, p.total)
	rate, eta := "--", "ETA --"
	if secs := elapsed.Seconds(); secs > 0 && p.bytes > 0 {
		perSec := float64(p.bytes) / secs
		rate = decimal(perSec / 1e6)
		eta = "ETA " + clock(time.Duration(float64(p.total-p.bytes)/perSec*float64(time.Second)))
	}
	if p.final {
		eta = "took " + took(elapsed)
	}
	rate = fmt.Sprintf("%4s MB/s", rate)
	eta = fmt.Sprintf("%-10s", eta)
	percent := 1.0
	switch {
	case p.total > 0:
		percent = float64(p.bytes) / float64(p.total)
	case n > 0:
		percent = float64(p.done) / float64(n)
	}
	for _, parts := range [][]string{{files, mb, rate, eta}, {files, mb, eta}, {files, eta}} {
		text := strings.Join(parts, "  ")
		if w := min(maxBarWidth, width-ansi.StringWidth(text)-2); w >= minBarWidth {
			bar := p.bar
			bar.Width = w
			return bar.ViewAs(percent) + "  " + strings.TrimRight(text, " ")
		}
	}
	text := fmt.Sprintf("%.0f%%  %s", percent*100, files)
	if full := text + "  " + strings.TrimRight(eta, " "); ansi.StringWidth(full) <= width {
		return full
	}
	return ansi.Truncate(text, width, "…")
}

// megabytes is done/total MB, both as precise as total needs and done
// padded to total's width.
func megabytes(done, total int64) string {
	prec := 1
	if total >= 100e6 {
		prec = 0
	}
	t := strconv.FormatFloat(float64(total)/1e6, 'f', prec, 64)
	return fmt.Sprintf("%*s/%s MB", len(t), strconv.FormatFloat(float64(done)/1e6, 'f', prec, 64), t)
}

// decimal is x with one decimal below 100, none above, as a rate reads.
func decimal(x float64) string {
	if x >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// clock is a time left, rounded up to whole seconds: 42s, 3m05s, 1h02m.
func clock(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
}

// took is a time taken: tenths of a second for a short one.
func took(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return clock(d.Round(time.Second))
}

// lookupEnviron gives termenv the app's environment, not the process's:
// NO_COLOR and TERM are read where every other variable is.
type lookupEnviron func(string) (string, bool)

func (l lookupEnviron) Getenv(k string) string {
	v, _ := l(k)
	return v
}

func (l lookupEnviron) Environ() []string { return nil }
