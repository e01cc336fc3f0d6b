package fsx

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strconv"
)

// MakeNew makes something new (create: a file, a folder) in dir, named
// prefix and a random suffix, as os.CreateTemp and os.MkdirTemp do, but
// tells note its name before it is made (ours true), and again when it was
// not (ours false: a name another took). A signal's cleanup that removes
// what note holds then finds it from the moment it may exist.
func MakeNew(dir, prefix string, note func(name string, ours bool), create func(name string) error) (string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		note(name, true)
		err := create(name)
		if err == nil {
			return name, nil
		}
		note(name, false) // not ours to remove
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			return "", err
		}
	}
}
