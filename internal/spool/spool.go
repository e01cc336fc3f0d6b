// Package spool keeps what a command writes only later (after figures
// known at its end, or to send it whole) in memory while it is small and
// in an unlinked temporary file after that, so that a command's memory
// stays bounded however long the session it writes.
package spool

import (
	"bytes"
	"io"
	"os"
)

// Spool holds what a streaming command writes only at its end, after
// figures known only then: in memory up to Memory, then in a temporary
// file, so that it stays bounded however long the session. Where no
// temporary file can be made (a read-only or missing TMPDIR) or written (a
// full one), it goes on in memory, what its file held read back: the
// command's memory grows, but it does its job.
//
// A spool that must stay bounded (Strict) instead fails where it would go
// on in memory, and says so with a *Error: its caller has a way that
// needs no room.
type Spool struct {
	// mem holds everything while there is no file; then what is not
	// written to it yet, written a chunk at a time.
	mem    bytes.Buffer
	file   *os.File
	named  bool   // file could not be unlinked when made: Close removes it
	inside bool   // in memory for good: no file could be made or written
	Dir    string // where its file goes; "": the system's temporary folder
	Strict bool
	err    error // a strict spool's failure, returned by every write after it
	// create makes the file, in dir ("": the system's temporary
	// folder), unlinked where the system allows it; nil: makeFile.
	create func(dir string) (f *os.File, named bool, err error)
}

// Error is a strict spool's failure to keep what it was given.
type Error struct{ err error }

func (e *Error) Error() string { return "spool: " + e.err.Error() }
func (e *Error) Unwrap() error { return e.err }

// Memory is what a spool holds before it goes to a file. The
// per-message reports of the 20k benchmark session are 600 KB, and the
// buffer holding them grew by doubling to 1 MiB, with the copies before:
// at 4 MiB, as it was, the preview with derived = "redact" took 18.3-19.0
// MiB at its peak, at 256 KiB 18.0-18.3 (show: 10.6-10.8 MiB). Later, at
// 256 KiB, its buffer (384 KiB once grown) was the largest thing the
// preview held beside its index (heap profiles after a collection, half
// way through); at 64 KiB, a chunk, it stays under 128 KiB.
const Memory = chunk

// chunk is how much a spool with a file gathers before writing it.
const chunk = 64 << 10

// makeFile makes a temporary file in dir, gone from the folder at once
// where the system allows it: nothing is left behind, however the command
// ends.
func makeFile(dir string) (*os.File, bool, error) {
	f, err := os.CreateTemp(dir, ".scrim-spool-*")
	if err != nil {
		return nil, false, err
	}
	return f, os.Remove(f.Name()) != nil, nil
}

// Write takes all of p, or fails (a strict spool only, stickily, as a
// bufio.Writer does: the writers check once a message).
func (s *Spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.mem.Write(p)
	switch {
	case s.inside, s.file == nil && s.mem.Len() <= Memory, s.file != nil && s.mem.Len() < chunk:
		return len(p), nil
	}
	if s.file == nil {
		create := s.create
		if create == nil {
			create = makeFile
		}
		f, named, err := create(s.Dir)
		if err != nil {
			return s.noRoom(len(p), err)
		}
		s.file, s.named = f, named
	}
	// On a short write the buffer keeps what the file did not take.
	if _, err := s.mem.WriteTo(s.file); err != nil {
		return s.noRoom(len(p), err)
	}
	return len(p), nil
}

// noRoom is the spool's answer when its file cannot be made or written: a
// strict spool fails; another goes on in memory, with what its file took
// read back.
func (s *Spool) noRoom(n int, err error) (int, error) {
	if s.Strict {
		s.err = &Error{err}
		return 0, s.err
	}
	if s.file != nil {
		size, err := s.file.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, err
		}
		var all bytes.Buffer
		all.Grow(int(size) + s.mem.Len())
		if _, err := io.Copy(&all, io.NewSectionReader(s.file, 0, size)); err != nil {
			return 0, err
		}
		all.Write(s.mem.Bytes())
		s.mem = all
		s.Close()
	}
	s.inside = true
	return n, nil
}

// WriteTo writes everything spooled to w.
func (s *Spool) WriteTo(w io.Writer) (int64, error) {
	if s.file == nil {
		return s.mem.WriteTo(w)
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	n, err := io.Copy(w, s.file)
	if err != nil {
		return n, err
	}
	m, err := s.mem.WriteTo(w)
	return n + m, err
}

// Reader reads everything spooled so far from its start, and Len is how
// much that is, without taking it from the spool, as often as asked: the
// body of a request that its client may send again. Nothing may be written
// while a reader is in use.
func (s *Spool) Reader() (io.Reader, error) {
	if s.file == nil {
		return bytes.NewReader(s.mem.Bytes()), nil
	}
	size, err := s.fileSize()
	if err != nil {
		return nil, err
	}
	return io.MultiReader(io.NewSectionReader(s.file, 0, size), bytes.NewReader(s.mem.Bytes())), nil
}

// Len is how many bytes the spool holds.
func (s *Spool) Len() (int64, error) {
	size, err := s.fileSize()
	return size + int64(s.mem.Len()), err
}

// fileSize is how much of the spool is in its file.
func (s *Spool) fileSize() (int64, error) {
	if s.file == nil {
		return 0, nil
	}
	fi, err := s.file.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Close closes the temporary file, if there is one, and removes it if it
// could not be unlinked when it was made.
func (s *Spool) Close() error {
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	if s.named {
		if rerr := os.Remove(s.file.Name()); !os.IsNotExist(rerr) {
			err = rerr
		}
	}
	s.file, s.named = nil, false
	return err
}
