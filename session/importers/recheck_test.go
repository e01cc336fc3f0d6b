package importers_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

func userLine(i int, text string) string {
	return fmt.Sprintf(`{"type":"user","cwd":"/w","sessionId":"s","message":{"role":"user","content":%q},"uuid":"u%d","timestamp":"2025-01-01T00:00:00Z"}`+"\n", text, i)
}

// long is a transcript of n prompts, well over 64 KiB when n is a few
// hundred, so that its head and its tail are different bytes.
func long(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(userLine(i, prefix+strings.Repeat(" padding", 40)))
	}
	return b.String()
}

// settle dates file's modification time back, as it is for a transcript
// not written to in the last seconds: a time that recent is not trusted.
func settle(t *testing.T, file string, ago time.Duration) {
	t.Helper()
	when := time.Now().Add(-ago)
	if err := os.Chtimes(file, when, when); err != nil {
		t.Fatal(err)
	}
}

// An unchanged file is known by its size and time alone: its content is not
// read. Shown by changing the content behind the import's back, size and time
// kept — the documented limit — and then the time too.
func TestUnchangedFileCostsAStat(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(file, []byte(long(300, "first")), 0o600)
	settle(t, file, time.Hour)
	r1 := importFile(t, st, claude.Agent, file, claude.New)
	fi, _ := os.Stat(file)

	// Same size, same time, other bytes: not read, so not seen.
	os.WriteFile(file, []byte(long(300, "other")), 0o600)
	os.Chtimes(file, fi.ModTime(), fi.ModTime())
	r2 := importFile(t, st, claude.Agent, file, claude.New)
	if !r2.Unchanged || r2.SessionID != r1.SessionID {
		t.Fatalf("same size and time: %+v", r2)
	}
	// A new time: read, and the rewrite found.
	settle(t, file, 30*time.Minute)
	r3 := importFile(t, st, claude.Agent, file, claude.New)
	if !r3.Replaced || r3.Messages != 300 {
		t.Fatalf("new time: %+v", r3)
	}
}

// A file changed within the racy window is checked again on the next
// import, even with its size and time as they were.
func TestRecentTimeIsNotTrusted(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(file, []byte(long(300, "first")), 0o600)
	importFile(t, st, claude.Agent, file, claude.New)
	fi, _ := os.Stat(file)
	os.WriteFile(file, []byte(long(300, "other")), 0o600)
	os.Chtimes(file, fi.ModTime(), fi.ModTime())
	if r := importFile(t, st, claude.Agent, file, claude.New); !r.Replaced {
		t.Fatalf("a rewrite within the racy window went unseen: %+v", r)
	}
}

// What agents do to a transcript is caught by the checks of its ends: an
// append resumes; a /rewind (the end cut and other lines written, the file
// longer than before) or a compaction (all rewritten) re-imports; a change
// in the middle that keeps both ends and the length is the documented limit.
func TestGrownFileIsCheckedAtItsEnds(t *testing.T) {
	base := long(400, "turn")
	cases := []struct {
		name    string
		rewrite func(string) string
		resumed bool
	}{
		{"append", func(s string) string { return s + userLine(1000, "one more") }, true},
		{"rewind", func(s string) string {
			cut := s[:len(s)-3*len(userLine(0, "turn"+strings.Repeat(" padding", 40)))]
			return cut + long(20, "after the rewind")
		}, false},
		{"compaction", func(s string) string { return userLine(0, "summary of all before") + s[len(s)/2:] + long(300, "new") }, false},
		{"middle, ends kept", func(s string) string {
			mid := len(s) / 2
			i := strings.Index(s[mid:], "turn") + mid
			return s[:i] + "TURN" + s[i+4:] + userLine(1001, "one more")
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := importtest.Store(t)
			file := filepath.Join(t.TempDir(), "s.jsonl")
			os.WriteFile(file, []byte(base), 0o600)
			settle(t, file, time.Hour)
			importFile(t, st, claude.Agent, file, claude.New)
			os.WriteFile(file, []byte(c.rewrite(base)), 0o600)
			settle(t, file, 30*time.Minute)
			r := importFile(t, st, claude.Agent, file, claude.New)
			if r.Resumed != c.resumed || r.Replaced == c.resumed {
				t.Fatalf("resumed %v, replaced %v; want resumed %v", r.Resumed, r.Replaced, c.resumed)
			}
		})
	}
}

// ImportFiles imports files side by side, reports them in the order given,
// imports two names of one file one after the other (the second finds the
// first's record), and refuses a binary.
func TestImportFilesSideBySide(t *testing.T) {
	st := importtest.Store(t)
	dir := t.TempDir()
	var files []string
	for i := range 12 {
		f := filepath.Join(dir, fmt.Sprintf("s%02d.jsonl", i))
		os.WriteFile(f, []byte(long(20+i, fmt.Sprintf("file %d", i))), 0o600)
		files = append(files, f)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(files[3], link); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin.jsonl")
	os.WriteFile(bin, bytes.Repeat([]byte{0, 1, 2}, 100), 0o600)
	files = append(files, link, bin)
	var order []int
	var results []importers.Result
	var errs []error
	err := importers.ImportFiles(st, claude.Agent, files, claude.New, 4, func(i int, r importers.Result, err error) {
		order = append(order, i)
		results = append(results, r)
		errs = append(errs, err)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range order {
		if order[i] != i {
			t.Fatalf("reported in order %v", order)
		}
	}
	for i := range 12 {
		if errs[i] != nil || results[i].Messages != 20+i {
			t.Errorf("file %d: %+v, %v", i, results[i], errs[i])
		}
	}
	if r := results[12]; errs[12] != nil || r.Messages != 0 || r.SessionID != results[3].SessionID {
		t.Errorf("the link to file 3: %+v, %v (file 3's session %s)", r, errs[12], results[3].SessionID)
	}
	if errs[13] == nil || !strings.Contains(errs[13].Error(), "looks binary") {
		t.Errorf("binary: %v", errs[13])
	}
	hs, _, _ := st.List()
	if len(hs) != 12 {
		t.Errorf("%d sessions, want 12", len(hs))
	}
}

// An imported session was updated when its newest message was written, as
// the transcript says, not when it was imported.
func TestImportedSessionKeepsTheTranscriptsTime(t *testing.T) {
	for _, a := range agents {
		st := importtest.Store(t)
		res := importFile(t, st, a.name, a.fixture, a.factory)
		h, err := st.Get(res.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		msgs, _, _ := st.Messages(res.SessionID)
		var newest time.Time
		for _, m := range msgs {
			if m.CreatedAt.After(newest) {
				newest = m.CreatedAt
			}
		}
		if !h.UpdatedAt.Equal(newest) || time.Since(h.UpdatedAt) < 24*time.Hour {
			t.Errorf("%s: updated %v, newest message %v", a.name, h.UpdatedAt, newest)
		}
	}
}

// ImportFilesReading tells of each file's bytes as they are read, from the
// workers, a mebibyte or more at a time before its end: they add up to the
// file, and a file of several mebibytes is told of before it is done.
func TestImportFilesReading(t *testing.T) {
	st := importtest.Store(t)
	dir := t.TempDir()
	var files []string
	var sizes []int64
	for i, n := range []int{3, 9000, 40} { // 1 KB, 3.5 MB, 16 KB
		f := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		if err := os.WriteFile(f, []byte(long(n, fmt.Sprintf("file %d", i))), 0o600); err != nil {
			t.Fatal(err)
		}
		files, sizes = append(files, f), append(sizes, int64(len(long(n, fmt.Sprintf("file %d", i)))))
	}
	var mu sync.Mutex
	read := make([]int64, len(files))
	told := make([]int, len(files))
	before := make([]int, len(files)) // reports of file i before it was done
	doneYet := make([]bool, len(files))
	err := importers.ImportFilesReading(st, claude.Agent, files, claude.New, 2, func(i int, n int64) {
		mu.Lock()
		defer mu.Unlock()
		if n <= 0 {
			t.Errorf("file %d: told of %d bytes", i, n)
		}
		read[i] += n
		told[i]++
		if !doneYet[i] && read[i] < sizes[i] {
			before[i]++
		}
	}, func(i int, _ importers.Result, err error) {
		mu.Lock()
		defer mu.Unlock()
		doneYet[i] = true
		if err != nil {
			t.Errorf("file %d: %v", i, err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		if read[i] != sizes[i] {
			t.Errorf("file %d: told of %d bytes read, it has %d", i, read[i], sizes[i])
		}
	}
	if told[0] != 1 || told[2] != 1 || before[1] < 2 {
		t.Errorf("reports: %v, of the long file before its end: %d", told, before[1])
	}
}
