//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// BenchmarkScrollInTmux measures scrolling as a person sees it: the real
// scrim TUI runs in tmux at 160×45 on a large session, `k` goes in with
// send-keys, and a step ends when the pane shows the new position
// ("#N/total" in the status line). Both go through one tmux control-mode
// client, so the harness starts no process per sample: a harness that runs
// `tmux capture-pane` every 2 ms takes most of a core from the two it
// measures on, and its steps are its own as much as scrim's.
//
//   - count: from the first frame of a fresh copy of the store, while the
//     first whole-session count runs on every core.
//   - import: with the count done, while the TUI imports a 175 MB Claude
//     Code transcript that appears in the folder it watches.
//
// Reported: the steps taken while the work ran, their median, 99th
// percentile and slowest, and how many took over 50 ms (the target: none);
// each step over 50 ms is logged with when it came and the status line
// then (SCRIM_BENCH_SLOW_STEP, a duration, logs from another bound).
// The store is the CLI benchmarks' session (SCRIM_BENCH_MESSAGES, a
// million by default; SCRIM_BENCH_STORE keeps it) for the cloud tier, or a
// copy of SCRIM_BENCH_STORE_COPY, a folder that holds a store/ and a
// policy.toml as the UI benchmarks' TestMakeBigStore writes them, for
// demo/limited. SCRIM_BENCH_BIN names a scrim binary to run instead of
// this one.
func BenchmarkScrollInTmux(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("needs tmux")
	}
	src, pol, model := scrollStore(b)
	for _, during := range []string{"count", "import"} {
		b.Run(during, func(b *testing.B) {
			var steps []time.Duration
			stalled := 0
			for i := 0; i < b.N; i++ {
				s, n := scrollWhile(b, during, src, pol, model)
				steps, stalled = append(steps, s...), stalled+n
			}
			if len(steps) == 0 {
				b.Fatal("no step was taken while the work ran")
			}
			slices.Sort(steps)
			under, _ := slices.BinarySearch(steps, 50*time.Millisecond)
			over := len(steps) - under
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(float64(len(steps))/float64(b.N), "steps/op")
			b.ReportMetric(ms(steps[len(steps)/2]), "median-ms")
			b.ReportMetric(ms(steps[len(steps)*99/100]), "p99-ms")
			b.ReportMetric(ms(steps[len(steps)-1]), "slowest-ms")
			b.ReportMetric(float64(over), "over-50ms")
			b.ReportMetric(float64(stalled), "over-50ms-machine-stalled")
		})
	}
}

// scrollStore is the store the scroll benchmark copies, its policy and the
// model it shows the session for.
func scrollStore(b *testing.B) (store, policy, model string) {
	if from := os.Getenv("SCRIM_BENCH_STORE_COPY"); from != "" {
		return filepath.Join(from, "store"), filepath.Join(from, "policy.toml"), "demo/limited"
	}
	store, _ = bigStore(b, benchMessages(b))
	policy = filepath.Join(b.TempDir(), "policy.toml")
	if err := os.WriteFile(policy, []byte(bigPolicy), 0o644); err != nil {
		b.Fatal(err)
	}
	return store, policy, "anthropic/claude-sonnet-4-5"
}

// scrollWhile runs the TUI on a copy of src and steps up one message at a
// time while the work named by during runs; it returns those steps' times,
// and how many of those over 50 ms the machine stalled (machineStall).
func scrollWhile(b *testing.B, during, src, pol, model string) (steps []time.Duration, stalled int) {
	b.StopTimer()
	dir := b.TempDir()
	store := filepath.Join(dir, "store")
	if out, err := exec.Command("cp", "-R", src, store).CombinedOutput(); err != nil {
		b.Fatalf("copy the store: %v %s", err, out)
	}
	watched := filepath.Join(dir, "watched")
	if err := os.MkdirAll(filepath.Join(watched, "proj"), 0o755); err != nil {
		b.Fatal(err)
	}
	transcript := filepath.Join(dir, "transcript.jsonl")
	if during == "import" {
		writeTranscript(b, transcript, 175<<20)
	}
	tui := startInTmux(b, "--store", store, "--policy", pol, "--model", model, "--watch", "claude:"+watched)
	defer tui.close()
	b.StartTimer()

	sel := position(b, tui.pane())
	var busy func(pane string) bool
	switch during {
	case "count":
		busy = counting
	case "import":
		for counting(tui.pane()) {
			time.Sleep(50 * time.Millisecond)
		}
		sessions := sessionsShown(tui.pane())
		// The transcript appears whole, as a copied or restored file does.
		tmp := filepath.Join(watched, "proj", ".incoming")
		if out, err := exec.Command("cp", transcript, tmp).CombinedOutput(); err != nil {
			b.Fatalf("copy the transcript: %v %s", err, out)
		}
		if err := os.Rename(tmp, filepath.Join(watched, "proj", "5f0c1e2a-import.jsonl")); err != nil {
			b.Fatal(err)
		}
		busy = func(pane string) bool { return sessionsShown(pane) == sessions }
	}
	began := time.Now()
	late := watchLateness()
	defer late.stop()
	for idle := 0; idle < 5 && sel > 1; {
		time.Sleep(20 * time.Millisecond) // a fast key repeat
		at := time.Now()
		took, pane := tui.step("k")
		sel = position(b, pane)
		lag, cpu := late.most(at, at.Add(took))
		if busy(pane) {
			steps = append(steps, took)
			if took > 50*time.Millisecond && lag >= machineStall {
				stalled++
			}
			idle = 0
		} else {
			idle++
		}
		if took > slowStep {
			b.Logf("%s: step to #%d, %.1f s in, took %.1f ms (a 1 ms sleep of the harness meanwhile woke %.1f ms late, on processor %d); then: %s (at %s)",
				during, sel, time.Since(began).Seconds(), float64(took)/float64(time.Millisecond),
				float64(lag)/float64(time.Millisecond), cpu, statusLine(pane), at.Format("15:04:05.000"))
		}
	}
	return steps, stalled
}

// machineStall is how late the harness's own sleep wakes (lateness) for
// a slow step to be put down to the machine: a sleep of a millisecond on a
// thread pinned to a processor woke at most 12 ms late beside the first
// count on every core, or beside two sha256sum loops; 20-100 ms beside a
// program that only allocates and touches memory on two goroutines, and
// when another guest of the host takes the cores.
const machineStall = 20 * time.Millisecond

// lateness notes how late a 1 ms sleep of the harness wakes, on each
// processor (a watcher pinned to each): a slow step during which one woke
// late too is the machine's (another guest of the host taking a virtual
// processor, the host itself, a kernel that does not preempt a long call),
// not scrim's or tmux's alone. One watcher left to run anywhere tells only
// of the processor it happened to run on, most often the one scrim left
// free.
type lateness struct {
	mu    sync.Mutex
	late  []lateSleep // the sleeps that woke more than a millisecond late
	done  chan struct{}
	ended sync.WaitGroup
}

type lateSleep struct {
	began, woke time.Time
	cpu         int // -1: not pinned
}

func watchLateness() *lateness {
	l := &lateness{done: make(chan struct{})}
	cpus := eachCPU()
	if len(cpus) == 0 {
		cpus = []int{-1}
	}
	for _, cpu := range cpus {
		l.ended.Go(func() {
			if cpu >= 0 {
				pinTo(cpu)
			}
			for {
				select {
				case <-l.done:
					return
				default:
				}
				began := time.Now()
				time.Sleep(time.Millisecond)
				if woke := time.Now(); woke.Sub(began) > 2*time.Millisecond {
					l.mu.Lock()
					l.late = append(l.late, lateSleep{began, woke, cpu})
					l.mu.Unlock()
				}
			}
		})
	}
	return l
}

// most is the most that a sleep overlapping from..to woke late, and on
// which processor (-1: none late, or not pinned).
func (l *lateness) most(from, to time.Time) (most time.Duration, cpu int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cpu = -1
	for _, s := range l.late {
		if s.woke.After(from) && s.began.Before(to) {
			if d := s.woke.Sub(s.began) - time.Millisecond; d > most {
				most, cpu = d, s.cpu
			}
		}
	}
	return most, cpu
}

func (l *lateness) stop() { close(l.done); l.ended.Wait() }

// slowStep is the step time over which a step is logged.
var slowStep = 50 * time.Millisecond

func init() {
	if d, err := time.ParseDuration(os.Getenv("SCRIM_BENCH_SLOW_STEP")); err == nil {
		slowStep = d
	}
}

// statusLine is the screen's status line.
func statusLine(pane string) string {
	rows := strings.Split(strings.TrimRight(pane, "\n"), "\n")
	return strings.TrimSpace(rows[max(0, len(rows)-2)])
}

// counting reports whether the status line says the count is not whole.
func counting(pane string) bool {
	return strings.Contains(pane, "counting redactions") || strings.Contains(pane, "(counted ")
}

var sessionsLine = regexp.MustCompile(`(\d+) sessions?\b`)

// sessionsShown is the number of sessions the list says it holds.
func sessionsShown(pane string) string {
	return sessionsLine.FindString(pane)
}

// tmuxTUI is scrim running in a tmux server of its own, driven through a
// control-mode client.
type tmuxTUI struct {
	b      *testing.B
	in     io.Writer
	blocks chan []byte // each command's output
	close  func()      // ends tmux and scrim
}

var positionRe = regexp.MustCompile(`#(\d+)/(\d+)`)

// startInTmux starts scrim with args in a tmux window of 160×45 and waits
// for its first frame that shows a position.
func startInTmux(b *testing.B, args ...string) *tmuxTUI {
	cmd := benchScrim(b, args...)
	// The environment scrim would have, and the terminal tmux gives it.
	quote := func(ws ...string) (q []string) {
		for _, w := range ws {
			s, err := syntax.Quote(w, syntax.LangBash)
			if err != nil {
				b.Fatal(err)
			}
			q = append(q, s)
		}
		return q
	}
	words := append([]string{"exec", "env", "-i"}, quote(cmd.Env...)...)
	words = append(append(words, `TERM="$TERM"`), quote(append([]string{cmd.Path}, cmd.Args[1:]...)...)...)
	sock := "scrim-bench-" + strconv.Itoa(os.Getpid())
	tmux := func(args ...string) *exec.Cmd {
		return exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
	}
	if out, err := tmux("new-session", "-d", "-s", "t", "-x", "160", "-y", "45", strings.Join(words, " ")).CombinedOutput(); err != nil {
		b.Fatalf("tmux: %v %s", err, out)
	}
	ctl := tmux("-C", "attach", "-t", "t")
	in, err := ctl.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := ctl.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		b.Fatal(err)
	}
	t := &tmuxTUI{b: b, in: in, blocks: make(chan []byte, 1)}
	t.close = sync.OnceFunc(func() { // deferred by the caller, and here should it fail first
		tmux("kill-server").Run()
		ctl.Wait()
	})
	b.Cleanup(t.close)
	go t.read(out)
	for start := time.Now(); !positionRe.MatchString(t.pane()); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			b.Fatalf("no position on the screen after a minute:\n%s", t.pane())
		}
	}
	return t
}

// read hands the output of each command the client sent to run. Blocks
// whose %begin line ends in flags 0 answer commands of tmux's own (the
// attach, which may answer after the first command sent), and
// notifications between blocks (the pane's output among them) are
// dropped.
func (t *tmuxTUI) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var block []byte
	in, ours := false, false
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("%begin ")):
			block, in, ours = nil, true, bytes.HasSuffix(line, []byte(" 1"))
		case in && (bytes.HasPrefix(line, []byte("%end ")) || bytes.HasPrefix(line, []byte("%error "))):
			if ours {
				t.blocks <- block
			}
			in = false
		case in:
			block = append(append(block, line...), '\n')
		}
	}
	close(t.blocks)
}

// run runs one tmux command and returns its output.
func (t *tmuxTUI) run(cmd string) []byte {
	if _, err := io.WriteString(t.in, cmd+"\n"); err != nil {
		t.b.Fatal(err)
	}
	select {
	case out, ok := <-t.blocks:
		if !ok {
			t.b.Fatal("tmux's control client ended")
		}
		return out
	case <-time.After(10 * time.Second):
		t.b.Fatalf("tmux did not answer %q", cmd)
		return nil
	}
}

// pane is what the pane shows.
func (t *tmuxTUI) pane() string { return string(t.run("capture-pane -p -t t")) }

// position is the current message, from the status line.
func position(b *testing.B, pane string) int {
	m := positionRe.FindAllStringSubmatch(pane, -1)
	if m == nil {
		b.Fatalf("no position on the screen:\n%s", pane)
	}
	sel, _ := strconv.Atoi(m[len(m)-1][1])
	return sel
}

// step sends key and waits, looking every millisecond, until the stored
// side of the transcript has moved; it returns how long that took and the
// pane then. Only that column is compared: the status line, the session
// list's counts and the sent side also change while the work runs.
func (t *tmuxTUI) step(key string) (time.Duration, string) {
	before := storedSide(t.pane())
	start := time.Now()
	t.run("send-keys -t t " + key)
	for {
		pane := t.pane()
		if storedSide(pane) != before {
			return time.Since(start), pane
		}
		if time.Since(start) > 10*time.Second {
			t.b.Fatalf("%s did not move the transcript after 10 s:\n%s", key, pane)
		}
		time.Sleep(time.Millisecond)
	}
}

// storedSide is the middle column of the screen, the stored transcript:
// between the first two rules of the header row, on every row but the
// status and help lines.
func storedSide(pane string) string {
	rows := strings.Split(strings.TrimRight(pane, "\n"), "\n")
	if len(rows) < 4 {
		return pane
	}
	var rules []int
	for i, r := range []rune(rows[1]) {
		if r == '│' {
			rules = append(rules, i)
		}
	}
	if len(rules) < 2 {
		return pane
	}
	var b strings.Builder
	for _, row := range rows[2 : len(rows)-2] {
		r := []rune(row)
		b.WriteString(string(r[min(rules[0], len(r)):min(rules[1], len(r))]))
		b.WriteByte('\n')
	}
	return b.String()
}
