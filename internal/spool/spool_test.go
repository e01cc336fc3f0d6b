package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSpoolWithoutATemporaryFolder: where no temporary file can be made,
// a spool keeps everything in memory and gives it back whole.
func TestSpoolWithoutATemporaryFolder(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	var s Spool
	var want bytes.Buffer
	for i := range 2 * Memory / 1000 {
		fmt.Fprintf(&want, "%d %s\n", i, strings.Repeat("y", 999))
	}
	if _, err := s.Write(want.Bytes()[:Memory/2]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(want.Bytes()[Memory/2:]); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := s.WriteTo(&got); err != nil || s.file != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("spooled %d bytes, got back %d (file %v, %v)", want.Len(), got.Len(), s.file, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSpoolSpillsToAFile: what a spool holds past its memory comes back
// whole, in order, from its file, and the file is gone once it is closed.
func TestSpoolSpillsToAFile(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var s Spool
	var want bytes.Buffer
	line := strings.Repeat("x", 1000) + "\n"
	for i := 0; want.Len() <= 2*Memory; i++ {
		fmt.Fprintf(&s, "%d %s", i, line)
		fmt.Fprintf(&want, "%d %s", i, line)
	}
	if s.file == nil || s.mem.Len() >= chunk {
		t.Fatalf("%d bytes spooled in memory, file %v", s.mem.Len(), s.file)
	}
	var got bytes.Buffer
	if _, err := s.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("spooled %d bytes, got back %d", want.Len(), got.Len())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// fullSpoolFile stands for a temporary file on a full disk: /dev/full,
// where every write fails with ENOSPC. It is not unlinked (named false),
// so a spool never removes it.
func fullSpoolFile(t *testing.T) func(string) (*os.File, bool, error) {
	return func(string) (*os.File, bool, error) {
		f, err := os.OpenFile("/dev/full", os.O_RDWR, 0)
		if err != nil {
			t.Skipf("no /dev/full: %v", err)
		}
		return f, false, err
	}
}

// TestSpoolOnAFullDisk: a spool whose file cannot be written goes on in
// memory and gives everything back, as one that cannot make its file; a
// strict one fails, and goes on failing.
func TestSpoolOnAFullDisk(t *testing.T) {
	var want bytes.Buffer
	for i := 0; want.Len() <= 2*Memory; i++ {
		fmt.Fprintf(&want, "%d %s\n", i, strings.Repeat("z", 999))
	}
	s := Spool{create: fullSpoolFile(t)}
	for b := want.Bytes(); len(b) > 0; {
		n := min(len(b), 4000)
		if k, err := s.Write(b[:n]); err != nil || k != n {
			t.Fatalf("write: %d of %d, %v", k, n, err)
		}
		b = b[n:]
	}
	if !s.inside || s.file != nil {
		t.Fatalf("in memory %v, file %v", s.inside, s.file)
	}
	var got bytes.Buffer
	if _, err := s.WriteTo(&got); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("spooled %d bytes, got back %d (%v)", want.Len(), got.Len(), err)
	}
	s.Close()

	strict := Spool{create: fullSpoolFile(t), Strict: true}
	defer strict.Close()
	_, err := strict.Write(want.Bytes())
	var se *Error
	if !errors.As(err, &se) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("strict spool on a full disk: %v", err)
	}
	if _, again := strict.Write([]byte("x")); again != err {
		t.Fatalf("the next write: %v, not the first failure", again)
	}
}

// TestSpoolReadsAgain: Reader gives everything spooled, from memory and
// from the file, as often as asked, and Len says how much; WriteTo after
// it still gives it all.
func TestSpoolReadsAgain(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, size := range []int{0, Memory / 2, 3 * Memory} {
		var s Spool
		var want bytes.Buffer
		for i := 0; want.Len() < size; i++ {
			fmt.Fprintf(&s, "%d %s\n", i, strings.Repeat("r", 499))
			fmt.Fprintf(&want, "%d %s\n", i, strings.Repeat("r", 499))
		}
		if (s.file != nil) != (size > Memory) {
			t.Fatalf("%d bytes: file %v", size, s.file)
		}
		for range 2 {
			n, err := s.Len()
			if err != nil || n != int64(want.Len()) {
				t.Fatalf("%d bytes: Len %d, %v", want.Len(), n, err)
			}
			r, err := s.Reader()
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if _, err := got.ReadFrom(r); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%d bytes: read back %d, %v", want.Len(), got.Len(), err)
			}
		}
		var got bytes.Buffer
		if _, err := s.WriteTo(&got); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%d bytes: written %d after reading, %v", want.Len(), got.Len(), err)
		}
		s.Close()
	}
}
