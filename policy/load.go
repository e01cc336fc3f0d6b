package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// EmbeddedName is the File of a policy parsed from the built-in default.
const EmbeddedName = "<embedded default policy>"

// maxPolicySize keeps a mistaken --policy (a disk image, a log) from being read whole.
const maxPolicySize = 4 << 20

// LoadError says what is wrong with a policy file and where. A file with
// several problems gives the first (by line) with the others in More.
type LoadError struct {
	File string
	Line int // 1-based; problems of the whole file point at line 1
	Msg  string
	More []*LoadError
}

func (e *LoadError) Error() string {
	s := fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	switch n := len(e.More); n {
	case 0:
	case 1:
		s += " (and 1 more problem)"
	default:
		s += fmt.Sprintf(" (and %d more problems)", n)
	}
	return s
}

// All lists every problem, first to last line.
func (e *LoadError) All() []*LoadError {
	return append([]*LoadError{{File: e.File, Line: e.Line, Msg: e.Msg}}, e.More...)
}

// Load reads and validates the policy file at path.
func Load(path string) (*Policy, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &LoadError{File: path, Line: 1, Msg: err.Error()}
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, &LoadError{File: path, Line: 1, Msg: fmt.Sprintf("cannot read policy: %v", unwrapPath(err))}
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxPolicySize+1)); err != nil {
		return nil, &LoadError{File: path, Line: 1, Msg: fmt.Sprintf("cannot read policy: %v", unwrapPath(err))}
	}
	if buf.Len() > maxPolicySize {
		return nil, &LoadError{File: path, Line: 1, Msg: fmt.Sprintf("policy file is larger than %d MiB; is this the right file?", maxPolicySize>>20)}
	}
	return Parse(buf.Bytes(), abs)
}

// Parse validates a policy held in memory. file names it in errors and, unless
// it is EmbeddedName, its folder is the base of relative patterns. Any problem
// means no policy: nothing loads partially.
func Parse(data []byte, file string) (*Policy, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF")) // a BOM some editors add
	if err := checkText(data, file); err != nil {
		return nil, err
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, syntaxError(data, file, err)
	}
	baseDir := ""
	if file != EmbeddedName {
		baseDir = filepath.Dir(file)
	}
	c := &checker{file: file, loc: newLocator(data), baseDir: baseDir}
	p := c.policy(doc)
	if len(c.errs) > 0 {
		sort.SliceStable(c.errs, func(i, j int) bool { return c.errs[i].Line < c.errs[j].Line })
		first := c.errs[0]
		first.More = c.errs[1:]
		return nil, first
	}
	return p, nil
}

// checkText rejects what is not a text file before TOML sees it, so that the
// message says what the file is rather than where the parser tripped.
func checkText(data []byte, file string) error {
	fail := func(line int, msg string) error { return &LoadError{File: file, Line: line, Msg: msg} }
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(1, "policy file is empty; start from the built-in policy (scrim policy check shows it) or see README")
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fail(lineAt(data, i), "policy file looks binary (NUL byte); a policy is UTF-8 TOML text: is this the right file?")
	}
	if !utf8.Valid(data) {
		return fail(firstInvalidUTF8Line(data), "policy file is not valid UTF-8 text; save it as UTF-8")
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

func syntaxError(data []byte, file string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &LoadError{File: file, Line: 1, Msg: "invalid TOML: " + err.Error()}
	}
	line := max(pe.Position.Line, 1)
	for name, lines := range newLocator(data).tierDefs {
		if len(lines) > 1 && lines[1] == line {
			return &LoadError{File: file, Line: line, Msg: fmt.Sprintf("duplicate tier %q (first defined on line %d); merge the two or rename one", name, lines[0])}
		}
	}
	return &LoadError{File: file, Line: line, Msg: "invalid TOML: " + pe.Message}
}

// Resolve loads the policy scrim runs with: flag (--policy), else
// $SCRIM_POLICY, else <user config dir>/scrim/policy.toml if it exists, else
// the embedded default. A file that is named but missing is an error, never a
// silent fall-back to the default.
func Resolve(flag string, embedded []byte) (*Policy, error) {
	load := func(path, source string) (*Policy, error) {
		p, err := Load(path)
		if err != nil {
			return nil, err
		}
		p.Source = source
		return p, nil
	}
	if flag != "" {
		return load(flag, "--policy")
	}
	if env := os.Getenv("SCRIM_POLICY"); env != "" {
		return load(env, "$SCRIM_POLICY")
	}
	if path, ok := UserPolicyPath(); ok {
		if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
			return load(path, "user config")
		}
	}
	p, err := Parse(embedded, EmbeddedName)
	if err != nil {
		return nil, err
	}
	p.Source = "built-in"
	return p, nil
}

// UserPolicyPath is <user config dir>/scrim/policy.toml; false if there is no
// user config folder.
func UserPolicyPath() (string, bool) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", false
	}
	return filepath.Join(dir, "scrim", "policy.toml"), true
}
