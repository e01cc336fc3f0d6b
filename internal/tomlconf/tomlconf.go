// Package tomlconf holds what scrim's TOML config files (the policy and
// providers.toml) share around the decoder: reading a file with a size limit,
// refusing one that is not text, locating the line of a key, and the
// file:line error every problem is reported with.
package tomlconf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// Error says what is wrong with a config file and where.
type Error struct {
	File string
	Line int // 1-based; 0 for a problem of the whole file, such as one that cannot be read
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Kind words the messages about one kind of config file that is not one, so
// that they say what the file is and what to do rather than where the
// decoder tripped.
type Kind struct {
	Name       string // the subject of the messages: "policy file"
	Unreadable string // what a read error follows: "cannot read policy"
	MaxSize    int    // bytes; a larger file is a mistake (a log, a disk image) and is not read whole
	IfEmpty    string // what to do with an empty file
	IfBinary   string // what the file should be, said to a binary one: "a policy is UTF-8 TOML text"
}

// Read reads the file at path, refusing one larger than MaxSize. It returns
// the absolute path, for the messages about the content; its own errors
// name path as given, on line 0.
func (k Kind) Read(path string) (abs string, data []byte, err error) {
	fail := func(msg string) (string, []byte, error) { return "", nil, &Error{File: path, Msg: msg} }
	abs, err = filepath.Abs(path)
	if err != nil {
		return fail(err.Error())
	}
	f, err := os.Open(abs)
	if err != nil {
		return fail(fmt.Sprintf("%s: %v", k.Unreadable, unwrapPath(err)))
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, int64(k.MaxSize)+1))
	if err != nil {
		return fail(fmt.Sprintf("%s: %v", k.Unreadable, unwrapPath(err)))
	}
	if len(data) > k.MaxSize {
		return fail(fmt.Sprintf("%s is larger than %d MiB; is this the right file?", k.Name, k.MaxSize>>20))
	}
	return abs, data, nil
}

// unwrapPath drops the "open /the/path:" that the messages already say.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CheckEmpty rejects a file with nothing but blanks: a failed write or the
// wrong file, not a way to configure nothing.
func (k Kind) CheckEmpty(data []byte, file string) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{File: file, Line: 1, Msg: k.Name + " is empty; " + k.IfEmpty}
	}
	return nil
}

// CheckText rejects a file that is not UTF-8 text before the decoder sees
// it, which would only say "cannot contain control characters".
func (k Kind) CheckText(data []byte, file string) error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return &Error{File: file, Line: lineAt(data, i), Msg: k.Name + " looks binary (NUL byte); " + k.IfBinary + ": is this the right file?"}
	}
	if !utf8.Valid(data) {
		return &Error{File: file, Line: firstInvalidUTF8Line(data), Msg: k.Name + " is not valid UTF-8 text; save it as UTF-8"}
	}
	return nil
}

func lineAt(data []byte, offset int) int { return 1 + bytes.Count(data[:offset], []byte("\n")) }

func firstInvalidUTF8Line(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return lineAt(data, i)
		}
		i += size
	}
	return 1
}
