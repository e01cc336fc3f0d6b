package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// sniffSize is how much of a file is looked at to call it binary: a NUL byte
// in the first 8,000 bytes, the same rule git uses.
const sniffSize = 8000

// mode switches the per-file work a run does. Production runs do both;
// benchmarks switch them off to measure what each costs.
type mode struct {
	enforce bool // decide every path with the active tier
	tag     bool // canonicalise and attribute content to its path
}

var full = mode{enforce: true, tag: true}

// gate is one run's view of the policy: the active tier and the mode.
type gate struct {
	env  Env
	tier *policy.Tier
	mode mode
}

func newGate(env Env, m mode) gate {
	g := gate{env: env, mode: m}
	if env.Policy != nil {
		g.tier, _ = env.Policy.TierFor(env.Model)
	}
	return g
}

// label is the active tier's label, for messages.
func (g gate) label() string {
	if g.tier == nil {
		return "none"
	}
	return g.tier.Label
}

// check decides abs for the active tier and returns the path to attribute
// content to: the canonical path (tagging on) or "" (tagging off). ok is false
// when the tier may not read the path; a policy-less run reads nothing (fail
// closed). err is set when tagging is on and the path cannot be resolved.
func (g gate) check(abs string) (canon string, ok bool, err error) {
	if g.mode.enforce {
		if g.env.Policy == nil || g.tier == nil {
			return "", false, nil
		}
		// Decide checks the path as given and its canonical form and hands
		// back the canonical form, so tagging costs no second resolution.
		d := g.env.Policy.Decide(g.tier, abs)
		if !d.Allowed {
			return "", false, nil
		}
		if g.mode.tag {
			return d.Canonical, true, nil
		}
		return "", true, nil
	}
	if !g.mode.tag {
		return "", true, nil
	}
	canon, err = policy.Canonical(abs)
	return canon, err == nil, err
}

// deniedText is the error result of a denied read; its first line's wording
// is part of the CLI contract. A path that is a symlink (or runs through
// one) gets a second line naming where it leads: "link.key" alone does not
// say why it was refused.
func deniedText(label, path string) string {
	s := fmt.Sprintf("read denied: trust tier %q does not have read access to %s", label, path)
	if canon, err := policy.Canonical(path); err == nil && canon != path {
		s += fmt.Sprintf("\n%s leads to %s (symlinks resolved), and the tier's policy is checked on both", path, canon)
	}
	return s
}

// abs makes p absolute against the run's working folder and cleans it
// lexically ("dir/../file" → "file"); symlinks are left to policy.Canonical.
func (env Env) abs(p string) string {
	if p == "" {
		p = "."
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.workDir(), p)
	}
	return filepath.Clean(p)
}

func (env Env) workDir() string {
	if env.WorkDir != "" {
		return env.WorkDir
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "/"
}

func (env Env) now() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

// newResult is an empty tool-result message for this run.
func newResult(env Env, tool string) session.Message {
	return session.Message{Role: session.RoleTool, Tool: tool, Model: env.Model, CreatedAt: env.now(), Parts: []session.Part{}}
}

// errorResult is a failed run: one untagged text part the model can read,
// in scrim's own words (no file content).
func errorResult(env Env, tool, format string, a ...any) Result {
	m := newResult(env, tool)
	m.IsError = true
	m.Meta.NoFiles = true
	m.Parts = append(m.Parts, textPart(fmt.Sprintf(format, a...), ""))
	return Result{Message: m}
}

// finish sets Meta.SourcePaths from the parts: nil when no part is file
// content, so "absent" stays absent in the store and in JSON, and the
// result is then known to hold none (names, notes).
func finish(m session.Message) Result {
	m.Meta.SourcePaths = nil
	m.SyncSourcePaths()
	m.Meta.NoFiles = m.Meta.SourcePaths == nil
	return Result{Message: m}
}

func textPart(text, source string) session.Part {
	return session.Part{Kind: session.PartText, Text: text, SourcePath: source}
}

// decode reads a tool's JSON input strictly: an unknown field is a mistake
// the model should hear about, not something to ignore.
func decode(input json.RawMessage, v any) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid input: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("invalid input: more than one JSON value")
	}
	return nil
}

// binaryError says a file is not text.
type binaryError struct{ path string }

func (e binaryError) Error() string {
	return e.path + " is a binary file (it contains NUL bytes); only text files can be read"
}

// isBinary applies git's rule to the start of a file.
func isBinary(head []byte) bool { return bytes.IndexByte(head, 0) >= 0 }

// openText opens path for reading and sniffs it. It returns the file and the
// sniffed bytes (read them first), or an error that says in plain words why
// the file cannot be read as text. want, if set, is the canonical path the
// policy allowed: the file opened must be that one (see openChecked). buf, if
// big enough, holds the sniffed bytes, so that a search over many files does
// not allocate for each.
func openText(path, want string, buf []byte) (io.ReadCloser, *bytes.Reader, error) {
	f, err := openChecked(path, want)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s cannot be read: %v", path, unwrap(err))
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is a directory; use glob to list it or grep to search it", path)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file (%s); only regular files can be read", path, fi.Mode().Type())
	}
	head := buf
	if len(head) < sniffSize {
		head = make([]byte, sniffSize)
	}
	n, err := io.ReadFull(f, head[:sniffSize])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		f.Close()
		return nil, nil, fmt.Errorf("%s cannot be read: %v", path, unwrap(err))
	}
	head = head[:n]
	if isBinary(head) {
		f.Close()
		return nil, nil, binaryError{path}
	}
	return f, bytes.NewReader(head), nil
}

func describeOpenErr(path string, err error) error {
	switch {
	case os.IsNotExist(err):
		return fmt.Errorf("%s does not exist", path)
	case os.IsPermission(err):
		return fmt.Errorf("%s cannot be opened: the operating system denies permission", path)
	}
	return fmt.Errorf("%s cannot be opened: %v", path, unwrap(err))
}

// unwrap drops the "open /path:" prefix of an *os.PathError: our messages
// name the path themselves.
func unwrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// withTimeout bounds ctx by d unless ctx already ends sooner.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, d)
}

// plural writes "1 file" / "3 files".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// oneLine keeps an error text that goes into a note on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
