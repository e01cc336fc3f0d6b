// Package fsx holds file operations more than one package of scrim needs.
package fsx

import (
	"io"
	"os"
)

// CopyNew copies file from to a new file to (0600), failing if to exists:
// a copy never overwrites what is there.
func CopyNew(from, to string) error {
	return copyNew(from, to, func(out, in *os.File) error {
		_, err := io.Copy(out, in)
		return err
	})
}

// CopyNewSparse is CopyNew for a file that is mostly a hole (Badger makes
// its logs at twice their size and fills them as it goes): blocks of zeros
// are skipped rather than written, so the copy takes the disk the data
// takes, and the copy is then sized as the file is.
func CopyNewSparse(from, to string) error { return copyNew(from, to, copySparse) }

// copyNew opens from, makes to (0600, never over a file there) and has
// copy fill it.
func copyNew(from, to string, copy func(out, in *os.File) error) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func copySparse(out, in *os.File) error {
	buf := make([]byte, 64<<10)
	var size int64
	for {
		n, err := io.ReadFull(in, buf)
		if n > 0 {
			if allZero(buf[:n]) {
				if _, err := out.Seek(int64(n), io.SeekCurrent); err != nil {
					return err
				}
			} else if _, err := out.Write(buf[:n]); err != nil {
				return err
			}
			size += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return out.Truncate(size)
		}
		if err != nil {
			return err
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
