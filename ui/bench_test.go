package ui

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/internal/memlimit"
	"github.com/scrim-dev/scrim/session"
)

// The benchmarks share one store with one 100,000-message session (or
// $SCRIM_BENCH_MESSAGES), built once per test binary run (it takes a while)
// and removed by TestMain.
var bigN = uint64(benchMessages())

func benchMessages() int {
	if n, err := strconv.Atoi(os.Getenv("SCRIM_BENCH_MESSAGES")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

var big struct {
	once sync.Once
	dir  string
	st   *session.Store
	sid  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if big.st != nil {
		big.st.Close()
	}
	if big.dir != "" {
		os.RemoveAll(big.dir)
	}
	os.Exit(code)
}

// bigStore opens the benchmarks' store, first building it in a child
// process (TestMakeBigStore): this process then holds only what opening
// and reading it costs, which is what the memory figures are about.
func bigStore(b *testing.B) (*session.Store, string) {
	big.once.Do(func() {
		dir, err := os.MkdirTemp("", "scrim-bench-")
		if err != nil {
			b.Fatal(err)
		}
		big.dir = dir
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMakeBigStore$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "SCRIM_BIG_STORE="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build the benchmark store: %v\n%s", err, out)
		}
		st, err := session.Open(filepath.Join(dir, "store"))
		if err != nil {
			b.Fatal(err)
		}
		hs, _, err := st.List()
		if err != nil || len(hs) != 1 || hs[0].Count != bigN {
			b.Fatalf("benchmark store: %v %v", hs, err)
		}
		big.st, big.sid = st, hs[0].ID
	})
	if big.st == nil {
		b.Fatal("the benchmark store could not be built")
	}
	return big.st, big.sid
}

// feed runs cmd as the program would (in another goroutine, not timed by
// the caller) and hands its results to Update, except the background
// counting, which the program runs beside the UI, not in front of it.
func feed(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			feed(m, c)
		}
	default:
		_, next := m.Update(msg)
		feed(m, next)
	}
}

// openBig opens the big session in a fresh program sized w×h and returns
// when the first frame is drawn.
func openBig(b *testing.B, model string) *Model {
	st, _ := bigStore(b)
	cfg := fixtureConfig(b, st, model)
	m := New(cfg)
	// Counting is held back (the program runs it beside the UI); countAll
	// runs it when a benchmark needs the counts.
	m.background = func(tea.Cmd) { m.counter.drop() }
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
	_, cmd := m.Update(m.Init()())
	feed(m, cmd)
	_ = m.View()
	return m
}

// countAll runs the whole-session count to the end as the program runs it
// beside the UI: every step on a goroutine of its own, as many at once as
// the counter starts (countWorkers), and each one that ends taken by Update,
// which starts the next at once; each is called after every result taken.
// (Run two at a time and waiting for both, as this did until 2026-12-05,
// a step that took longer held the other core idle.)
func countAll(m *Model, each func()) {
	saved := m.background
	defer func() { m.background = saved }()
	out := make(chan tea.Msg, 64)
	inFlight := 0 // commands started and not yet answered: only this goroutine counts
	start := func(cmd tea.Cmd) {
		if cmd != nil {
			inFlight++
			go func() { out <- cmd() }()
		}
	}
	m.background = start
	start(m.counter.next(m.c.ctxs, m.c.store, m.c.pol, m.c.model, m.countJobs()))
	for inFlight > 0 {
		msg := <-out
		inFlight--
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				start(c)
			}
		default:
			m.Update(msg) // starts what is due through m.background
			each()
		}
	}
}

// BenchmarkOpenToFirstFrame: list the store, open the 100,000-message
// session (header, last and first page, runner.Build of both), draw.
//
// The limited tier redacts derived content, so its sent side needs the
// fingerprints of the whole session, gathered by streaming it from the
// store. "stored" stops at the first frame the program draws: the stored
// side, and the sent side saying it is being computed (the gathering and
// the rebuild run beside the UI); "sent" runs everything to the frame with
// the sent side, gathering included.
func BenchmarkOpenToFirstFrame(b *testing.B) {
	bigStore(b)
	b.Run("stored", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			st, _ := bigStore(b)
			m := New(fixtureConfig(b, st, "demo/limited"))
			m.background = func(tea.Cmd) { m.counter.drop() }
			m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
			_, cmd := m.Update(m.Init()())
			shallow(m, cmd)
			if v := m.View(); m.tr.count != bigN || !strings.Contains(v, "Sent to demo/limited") || !strings.Contains(v, "#"+strconv.FormatUint(bigN, 10)) {
				b.Fatalf("the session did not open:\n%s", v)
			}
		}
	})
	b.Run("sent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := openBig(b, "demo/limited")
			if v := m.View(); m.tr.count != bigN || !strings.Contains(v, "Sent to demo/limited") || strings.Contains(v, "computing what") {
				b.Fatal("the session did not open")
			}
		}
	})
}

// shallow runs cmd and hands its results to Update, but not the commands
// those return: what the program has drawn once the session is open and
// before work it starts beside the UI (a rebuild) comes back.
func shallow(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			shallow(m, c)
		}
	default:
		if _, next := m.Update(msg); next != nil {
			if _, opened := msg.(openedMsg); !opened {
				shallow(m, next)
			}
		}
	}
}

// step times one key's Update and View; page loads it asks for run after
// the clock stops (the program runs them off the UI goroutine) and their
// results are handed to Update before the next step.
func step(b *testing.B, m *Model, k tea.KeyMsg, sp *spread) {
	sp.start()
	_, cmd := m.Update(k)
	_ = m.View()
	sp.stop()
	b.StopTimer()
	feed(m, cmd)
	b.StartTimer()
}

// spread keeps every timed step's wall time and, where the OS tells, the
// CPU time of the thread that ran it (the benchmark goroutine is locked to
// its thread), so a step that waited for a core on a loaded machine can be
// told from a step that worked long.
type spread struct {
	wall, cpu []time.Duration
	t0        time.Time
	c0        int64
}

func newSpread() *spread {
	runtime.LockOSThread()
	return &spread{}
}

func (s *spread) start() {
	s.c0, _ = threadCPU()
	s.t0 = time.Now()
}

func (s *spread) stop() {
	s.wall = append(s.wall, time.Since(s.t0))
	if c, ok := threadCPU(); ok {
		s.cpu = append(s.cpu, time.Duration(c-s.c0))
	}
}

// report adds the 99th percentile and the slowest of the timed steps: the
// speed targets are about every step, not the average.
func (s *spread) report(b *testing.B) {
	defer runtime.UnlockOSThread()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	if len(s.wall) > 0 {
		slices.Sort(s.wall)
		b.ReportMetric(ms(s.wall[len(s.wall)*99/100]), "p99-ms")
		b.ReportMetric(ms(s.wall[len(s.wall)-1]), "max-ms")
	}
	if len(s.cpu) > 0 {
		slices.Sort(s.cpu)
		b.ReportMetric(ms(s.cpu[len(s.cpu)-1]), "max-cpu-ms")
	}
}

// BenchmarkScroll: one scroll step (Update + View) on the open 100,000-
// message session, for each kind of step. worst-ms is the slowest step.
func BenchmarkScroll(b *testing.B) {
	for _, c := range []struct {
		name string
		keys []string // cycled
	}{
		{"j", []string{"j"}},
		{"k", []string{"k"}},
		{"pgdn", []string{"pgdown"}},
		{"pgup", []string{"pgup"}},
		{"n", []string{"n"}},
		{"top_bottom", []string{"g", "G"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := openBig(b, "demo/limited")
			if c.name == "n" {
				countAll(m, func() {})
			}
			if c.name == "j" || c.name == "pgdn" || c.name == "n" {
				feed(m, func() tea.Msg { return keyMsg("g") })
			}
			b.ReportAllocs()
			sp := newSpread()
			i := 0
			for b.Loop() {
				step(b, m, keyMsg(c.keys[i%len(c.keys)]), sp)
				i++
			}
			sp.report(b)
		})
	}
}

// BenchmarkFirstScrollAfterOpen: the first step after opening, and a jump
// to the top right after opening.
func BenchmarkFirstScrollAfterOpen(b *testing.B) {
	for _, k := range []string{"k", "g", "pgup"} {
		b.Run(k, func(b *testing.B) {
			bigStore(b)
			b.ReportAllocs()
			sp := newSpread()
			for b.Loop() {
				b.StopTimer()
				m := openBig(b, "demo/limited")
				b.StartTimer()
				step(b, m, keyMsg(k), sp)
			}
			sp.report(b)
		})
	}
}

// BenchmarkModelSwitch: from enter in the picker to the recomputed frame:
// Update, runner.Build of the loaded pages (in the Cmd), Update with the
// result, View.
func BenchmarkModelSwitch(b *testing.B) {
	m := openBig(b, "demo/limited")
	models := []string{"demo/trusted", "demo/limited"}
	b.ReportAllocs()
	sp := newSpread()
	i := 0
	for b.Loop() {
		b.StopTimer()
		m.picker = newPicker(m.c, modelItems(m.c, m.cfg.Models))
		for j, it := range m.picker.l.Items() {
			if it.(modelItem).id == models[i%2] {
				m.picker.l.Select(j)
			}
		}
		b.StartTimer()
		sp.start()
		_, cmd := m.Update(keyMsg("enter"))
		feed(m, cmd) // the rebuild runs in this thread here: its CPU is counted
		v := m.View()
		sp.stop()
		if !strings.Contains(v, "Sent to "+models[i%2]) || strings.Contains(v, "computing what") {
			b.Fatalf("frame not recomputed for %s", models[i%2])
		}
		i++
	}
	sp.report(b)
}

// BenchmarkPeakMemory opens the session, counts it whole (streaming), and
// pages through a tenth of it; it reports the peak Go heap, the peak
// anonymous memory sampled meanwhile and the peak resident size of the
// process since the store was built (Linux).
func BenchmarkPeakMemory(b *testing.B) {
	bigStore(b)
	memlimit.Soft() // as Run does
	runtime.GC()
	resetPeakRSS()
	var peakHeap, peakAnon uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peakHeap = max(peakHeap, ms.HeapInuse)
		peakAnon = max(peakAnon, rssAnon())
	}
	for b.Loop() {
		m := openBig(b, "demo/limited")
		// the whole-session count, as the program runs it
		countAll(m, sample)
		feed(m, func() tea.Msg { return keyMsg("g") })
		for i := 0; i < int(bigN)/10/8; i++ {
			_, cmd := m.Update(keyMsg("pgdown"))
			feed(m, cmd)
			if i%50 == 0 {
				sample()
			}
		}
		if c := m.counter.get(countKey{m.tr.sid, m.c.model}); c == nil || c.Upto != bigN {
			b.Fatal("the count did not finish")
		}
	}
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MB")
	if peakAnon > 0 {
		b.ReportMetric(float64(peakAnon)/(1<<20), "peak-anon-MiB")
	}
	if rss := peakRSS(); rss > 0 {
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
	}
}

// resetPeakRSS restarts the kernel's high-water mark of resident memory, so
// the peak excludes building the store.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSS() uint64 { return procStatus("VmHWM:") }

// procStatus is a size in /proc/self/status (Linux; 0 elsewhere), in bytes.
func procStatus(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkCountsAfterRestart: the whole-session counts of the 100,000-
// message session, counted once and kept in the store, read back as a TUI
// started again reads them (tally.Load and taking them in), against
// counting them again from nothing.
func BenchmarkCountsAfterRestart(b *testing.B) {
	m := openBig(b, "demo/limited")
	key := countKey{m.tr.sid, m.c.model}
	tier, _ := m.c.pol.TierFor(m.c.model)
	count := func(b *testing.B, workers int) {
		saved := countWorkers
		countWorkers = workers
		defer func() { countWorkers = saved }()
		for b.Loop() {
			// A record that cannot be read: counted from nothing, then kept.
			if err := m.c.store.PutCountRecord(key.sid, "tier/"+tier.Name, []byte{0}); err != nil {
				b.Fatal(err)
			}
			m.counter = newCounter()
			countAll(m, func() {})
			if c := m.counter.get(key); c == nil || c.Upto != bigN {
				b.Fatal("the count did not finish")
			}
		}
	}
	b.Run("count", func(b *testing.B) { count(b, runtime.GOMAXPROCS(0)) })
	b.Run("count-one-core", func(b *testing.B) { count(b, 1) })
	// countAll ran the save too: the count is kept.
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			k := newCounter()
			km := loadKept(m.c.store, m.c.pol, key, 0)().(keptMsg)
			k.takeKept(km)
			if c := k.get(key); !km.ok || c == nil || c.Upto != bigN {
				b.Fatalf("no kept count: ok=%v err=%v", km.ok, km.err)
			}
		}
	})
}

// BenchmarkScrollWhileFinding: j steps on the open 100,000-message session
// while a find of a common word in all sessions, for the limited tier, runs
// beside the UI again and again (each builds what is sent of the whole
// session, as scrim redact does); the batches of hits it hands to Update
// are timed as steps too.
func BenchmarkScrollWhileFinding(b *testing.B) {
	m := openBig(b, "demo/limited")
	feed(m, func() tea.Msg { return keyMsg("g") })
	found := make(chan tea.Msg, 64)
	pump := pumpInto(found)
	pump(m.startFind(findStartMsg{query: "config"}))
	sp := newSpread()
	finds := 0
	for b.Loop() {
		step(b, m, keyMsg("j"), sp)
		b.StopTimer()
		for len(found) > 0 {
			msg := <-found
			sp.start()
			_, cmd := m.Update(msg)
			sp.stop()
			if fm, ok := msg.(findMsg); ok && fm.done {
				finds++
				pump(m.startFind(findStartMsg{query: "config"}))
			} else if cmd != nil {
				pump(cmd)
			}
		}
		b.StartTimer()
	}
	m.stopFind()
	sp.report(b)
	b.ReportMetric(float64(finds), "finds")
}

// BenchmarkScrollWhileCounting: j steps on the open 100,000-message session
// while the whole-session count runs beside the UI on every core, started
// again from nothing each time it ends (the kept count spoilt first); the
// counted steps Update takes are timed as steps too.
func BenchmarkScrollWhileCounting(b *testing.B) {
	memlimit.Soft() // as Run does
	m := openBig(b, "demo/limited")
	feed(m, func() tea.Msg { return keyMsg("g") })
	key := countKey{m.tr.sid, m.c.model}
	tier, _ := m.c.pol.TierFor(m.c.model)
	results := make(chan tea.Msg, 256)
	pump := pumpInto(results)
	m.background = pump // what Update starts runs beside the UI, as in the program
	restart := func() {
		if err := m.c.store.PutCountRecord(key.sid, "tier/"+tier.Name, []byte{0}); err != nil {
			b.Fatal(err)
		}
		m.counter = newCounter()
		pump(m.counter.next(m.c.ctxs, m.c.store, m.c.pol, m.c.model, m.countJobs()))
	}
	restart()
	sp := newSpread()
	counts := 0
	for b.Loop() {
		step(b, m, keyMsg("j"), sp)
		b.StopTimer()
		for len(results) > 0 {
			msg := <-results
			sp.start()
			m.Update(msg)
			sp.stop()
			if _, ok := msg.(savedMsg); ok {
				counts++
				restart()
			}
		}
		b.StartTimer()
	}
	sp.report(b)
	b.ReportMetric(float64(counts), "counts")
}

// BenchmarkFirstCount: the whole-session count of a session no tier has
// seen before (no credential findings, gathering or count kept in the
// store, as after `scrim import`), from the program's start to the count's
// end, for the limited tier (derived and secrets on): opening the session,
// gathering its fingerprints for the first page, scanning every message
// for credentials, and counting on every core. Each run gets a store of its
// own, written in a child process first, or copied from the folder in
// $SCRIM_BENCH_STORE_COPY, which TestMakeBigStore wrote (writing a million
// messages takes a while); first-count-ms is the time from New to the
// count's end (ns/op includes making the store), cpu-ms the process's CPU
// time meanwhile, peak-anon-MiB its anonymous memory sampled meanwhile;
// gathered-ms and gathered-cpu-ms are the part until the first page's
// request is built (the fingerprints gathered and their matcher made),
// which the count's steps wait for.
func BenchmarkFirstCount(b *testing.B) {
	memlimit.Soft() // as Run does
	var took, cpu, gather, gatherCPU time.Duration
	var anon uint64
	for b.Loop() {
		dir := b.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMakeBigStore$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "SCRIM_BIG_STORE="+dir)
		if from := os.Getenv("SCRIM_BENCH_STORE_COPY"); from != "" {
			cmd = exec.Command("cp", "-R", from+"/.", dir)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("make the benchmark store: %v\n%s", err, out)
		}
		st, err := session.Open(filepath.Join(dir, "store"))
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		cpu0 := cpuTime()
		start := time.Now()
		m := New(fixtureConfig(b, st, "demo/limited"))
		m.background = func(tea.Cmd) { m.counter.drop() }
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
		_, next := m.Update(m.Init()())
		feed(m, next)
		gather, gatherCPU = gather+time.Since(start), gatherCPU+cpuTime()-cpu0
		countAll(m, func() { anon = max(anon, rssAnon()) })
		took, cpu = took+time.Since(start), cpu+cpuTime()-cpu0
		if c := m.counter.get(countKey{m.tr.sid, m.c.model}); c == nil || c.Upto != bigN {
			b.Fatal("the count did not finish")
		}
		st.Close()
	}
	b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "first-count-ms")
	b.ReportMetric(float64(gather.Milliseconds())/float64(b.N), "gathered-ms")
	b.ReportMetric(float64(gatherCPU.Milliseconds())/float64(b.N), "gathered-cpu-ms")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms")
	b.ReportMetric(float64(anon)/(1<<20), "peak-anon-MiB")
}

// rssAnon is the process's anonymous resident memory: its heap, stacks and
// caches, without the page cache of mapped files.
func rssAnon() uint64 { return procStatus("RssAnon:") }

// pumpInto runs a command, and every command of a batch, each on a
// goroutine of its own, as the program runs them beside the UI, and sends
// what they return to out.
func pumpInto(out chan<- tea.Msg) func(tea.Cmd) {
	var pump func(cmd tea.Cmd)
	pump = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		go func() {
			switch msg := cmd().(type) {
			case nil:
			case tea.BatchMsg:
				for _, c := range msg {
					pump(c)
				}
			default:
				out <- msg
			}
		}()
	}
	return pump
}
