package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits of one read: enough for any source file a model should look at in
// one go, small enough that a log file cannot flood the context.
const (
	readMaxLines = 2000
	readMaxBytes = 256 << 10
	// maxLineLen cuts minified or generated one-line files; the rest of the
	// line is skipped, not wrapped.
	maxLineLen = 2000
)

func init() { register(readTool{}) }

type readTool struct{}

type readInput struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

func (readTool) Name() string { return "read" }

func (readTool) Description() string {
	return "Read a text file. Returns numbered lines (cat -n style), at most 2000 lines or 256 KiB per call; use offset and limit to page through longer files. Relative paths are resolved against the session's working folder."
}

func (readTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":   map[string]any{"type": "string", "description": "File to read: absolute, or relative to the working folder."},
			"offset": map[string]any{"type": "integer", "minimum": 1, "description": "1-based line to start at (default 1)."},
			"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": readMaxLines, "description": "Most lines to return (default and maximum 2000)."},
		},
		"required":             []string{"path"},
		"additionalProperties": false,
	}
}

func (t readTool) Run(ctx context.Context, env Env, input json.RawMessage) Result {
	return t.run(ctx, env, input, full)
}

func (readTool) run(_ context.Context, env Env, input json.RawMessage, m mode) Result {
	var in readInput
	if err := decode(input, &in); err != nil {
		return errorResult(env, "read", "read failed: %v", err)
	}
	if in.Path == "" {
		return errorResult(env, "read", "read failed: path is required")
	}
	if in.Offset < 0 || in.Limit < 0 {
		return errorResult(env, "read", "read failed: offset and limit must be positive")
	}
	if in.Offset == 0 {
		in.Offset = 1
	}
	if in.Limit == 0 || in.Limit > readMaxLines {
		in.Limit = readMaxLines
	}
	abs := env.abs(in.Path)
	g := newGate(env, m)
	canon, ok, err := g.check(abs)
	if err != nil {
		return errorResult(env, "read", "read failed: %s cannot be resolved: %v", abs, err)
	}
	if !ok {
		r := errorResult(env, "read", "%s", deniedText(g.label(), abs))
		r.Denied = true
		return r
	}
	open := canon
	if open == "" {
		open = abs
	}
	text, err := readNumbered(open, in.Offset, in.Limit, readMaxBytes)
	if err != nil {
		return errorResult(env, "read", "read failed: %v", err)
	}
	msg := newResult(env, "read")
	msg.Parts = append(msg.Parts, textPart(text, canon))
	return finish(msg)
}

// readNumbered opens a text file and returns lines offset.. numbered, with a
// note that says how to read on when it stops early.
func readNumbered(path string, offset, limit, maxBytes int) (string, error) {
	f, head, err := openText(path, nil)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	next, more, err := numberLines(&b, io.MultiReader(head, f), offset, limit, maxBytes)
	if err != nil {
		return "", fmt.Errorf("%s cannot be read: %v", path, unwrap(err))
	}
	switch {
	case next == 1 && !more:
		return "(empty file)", nil
	case next <= offset && !more:
		return "", fmt.Errorf("offset %d is past the end of %s: it has %d lines", offset, path, next-1)
	case more:
		fmt.Fprintf(&b, "[showing lines %d–%d; the file goes on: read again with offset=%d]", offset, next-1, next)
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD"), nil
}

// numberLines writes lines offset.. of r to b as "%6d\t<line>\n", at most
// limit lines and maxBytes bytes. next is the number of the first line not
// written; more says whether r has more lines.
func numberLines(b *strings.Builder, r io.Reader, offset, limit, maxBytes int) (next int, more bool, err error) {
	lr := newLineReader(r)
	var num [20]byte
	line, shown := 0, 0
	for {
		text, cut, err := lr.next()
		if err == io.EOF && text == nil {
			return line + 1, false, nil
		}
		if err != nil && err != io.EOF {
			return line + 1, false, err
		}
		line++
		if line < offset {
			continue
		}
		if shown == limit || b.Len()+len(text)+32 > maxBytes && shown > 0 {
			return line, true, nil
		}
		n := strconv.AppendInt(num[:0], int64(line), 10)
		for i := len(n); i < 6; i++ {
			b.WriteByte(' ')
		}
		b.Write(n)
		b.WriteByte('\t')
		b.Write(text)
		if cut > 0 {
			fmt.Fprintf(b, " … [line cut: %d more bytes]", cut)
		}
		b.WriteByte('\n')
		shown++
		if err == io.EOF {
			return line + 1, false, nil
		}
	}
}

// lineReader yields lines without their line endings, at most maxLineLen
// bytes of each (cut says how many were dropped). A returned line is valid
// only until the next call: lines are not copied unless they span buffers.
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// reset reuses the reader's buffers for another input.
func (lr *lineReader) reset(r io.Reader) { lr.br.Reset(r) }

// next returns io.EOF with a non-nil line for a last line without a newline,
// and io.EOF with a nil line when there is nothing left.
func (lr *lineReader) next() (line []byte, cut int, err error) {
	chunk, e := lr.br.ReadSlice('\n')
	if e == nil || e == io.EOF {
		if e == io.EOF && len(chunk) == 0 {
			return nil, 0, io.EOF
		}
		if len(chunk) <= maxLineLen+1 {
			return trimEOL(chunk), 0, e // the common case: no copy
		}
	}
	line = lr.buf[:0]
	for {
		room := maxLineLen - len(line)
		switch {
		case room <= 0:
			cut += len(chunk)
		case len(chunk) > room:
			line = append(line, chunk[:room]...)
			cut += len(chunk) - room
		default:
			line = append(line, chunk...)
		}
		if errors.Is(e, bufio.ErrBufferFull) {
			chunk, e = lr.br.ReadSlice('\n')
			continue
		}
		if e != nil && e != io.EOF {
			return nil, 0, e
		}
		lr.buf = line
		// The line ending is not content, whether it was kept or cut.
		eol := len(chunk) - len(trimEOL(chunk))
		line = trimEOL(line)
		if cut -= eol; cut < 0 {
			cut = 0
		}
		return line, cut, e
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
