// Package fsx holds file operations more than one package of scrim needs.
package fsx

import (
	"io"
	"os"
)

// CopyNew copies file from to a new file to (0600), failing if to exists:
// a copy never overwrites what is there.
func CopyNew(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
