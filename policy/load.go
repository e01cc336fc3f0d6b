package policy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/BurntSushi/toml"

	"github.com/scrim-dev/scrim/internal/tomlconf"
	"github.com/scrim-dev/scrim/internal/userdirs"
)

// EmbeddedName is the File of a policy parsed from the built-in default.
const EmbeddedName = "<embedded default policy>"

// maxPolicySize keeps a mistaken --policy (a disk image, a log) from being read whole.
const maxPolicySize = 4 << 20

// policyKind words the messages about a policy file that is not one.
var policyKind = tomlconf.Kind{
	Name:       "policy file",
	Unreadable: "cannot read policy",
	MaxSize:    maxPolicySize,
	IfEmpty:    "start from the built-in policy (scrim policy check shows it) or see README",
	IfBinary:   "a policy is UTF-8 TOML text",
}

// LoadError says what is wrong with a policy file and where. A file with
// several problems gives the first (by line) with the others in More.
type LoadError struct {
	File string
	Line int // 1-based; problems of the whole file point at line 1
	Msg  string
	More []*tomlconf.Error
}

func (e *LoadError) Error() string {
	s := e.first().Error()
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
func (e *LoadError) All() []*tomlconf.Error {
	return append([]*tomlconf.Error{e.first()}, e.More...)
}

func (e *LoadError) first() *tomlconf.Error {
	return &tomlconf.Error{File: e.File, Line: e.Line, Msg: e.Msg}
}

// problems makes one LoadError of errs, first to last line.
func problems(errs []*tomlconf.Error) *LoadError {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	first := errs[0]
	return &LoadError{File: first.File, Line: first.Line, Msg: first.Msg, More: errs[1:]}
}

// loadError makes a LoadError of the one problem tomlconf found. A problem
// of the whole file (line 0) points at line 1: every policy problem names a line.
func loadError(err error) error {
	var e *tomlconf.Error
	if !errors.As(err, &e) {
		return err
	}
	return &LoadError{File: e.File, Line: max(e.Line, 1), Msg: e.Msg}
}

// Load reads and validates the policy file at path.
func Load(path string) (*Policy, error) { return LoadEnv(path, os.LookupEnv) }

// LoadEnv is Load with ~ and $VAR taken from env.
func LoadEnv(path string, env userdirs.Lookup) (*Policy, error) {
	abs, data, err := policyKind.Read(path)
	if err != nil {
		return nil, loadError(err)
	}
	return ParseEnv(data, abs, env)
}

// Parse validates a policy held in memory. file names it in errors and, unless
// it is EmbeddedName, its folder is the base of relative patterns. Any problem
// means no policy: nothing loads partially.
func Parse(data []byte, file string) (*Policy, error) { return ParseEnv(data, file, os.LookupEnv) }

// ParseEnv is Parse with ~ and $VAR taken from env.
func ParseEnv(data []byte, file string, env userdirs.Lookup) (*Policy, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF")) // a BOM some editors add
	// What is not a text file is said so before TOML sees it.
	if err := policyKind.CheckEmpty(data, file); err != nil {
		return nil, loadError(err)
	}
	if err := policyKind.CheckText(data, file); err != nil {
		return nil, loadError(err)
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, syntaxError(data, file, err)
	}
	baseDir := ""
	if file != EmbeddedName {
		baseDir = filepath.Dir(file)
	}
	c := &checker{file: file, loc: tomlconf.Locate(data), baseDir: baseDir, env: env}
	p := c.policy(doc)
	if len(c.errs) > 0 {
		return nil, problems(c.errs)
	}
	p.env = env
	if p.env == nil {
		p.env = os.LookupEnv
	}
	p.shareTeamCache()
	return p, nil
}

func syntaxError(data []byte, file string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &LoadError{File: file, Line: 1, Msg: "invalid TOML: " + err.Error()}
	}
	line := max(pe.Position.Line, 1)
	// An error at a newline ("got '\n' instead") belongs to the line the
	// newline ends: the parser counts it on the next.
	if at := pe.Position.Start; at >= 0 && at < len(data) && data[at] == '\n' {
		line = 1 + bytes.Count(data[:at], []byte{'\n'})
	}
	loc := tomlconf.Locate(data)
	for _, name := range loc.Keys("tiers") {
		if lines := loc.Defs("tiers", name); len(lines) > 1 && lines[1] == line {
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
	return ResolveEnv(flag, embedded, os.LookupEnv)
}

// ResolveEnv is Resolve reading $SCRIM_POLICY, the config folder, and the
// policy's ~ and $VAR from env.
func ResolveEnv(flag string, embedded []byte, env userdirs.Lookup) (*Policy, error) {
	load := func(path, source string) (*Policy, error) {
		path, err := userdirs.Expand(path, env)
		if err != nil {
			return nil, err
		}
		p, err := LoadEnv(path, env)
		if err != nil {
			return nil, err
		}
		p.Source = source
		return p, nil
	}
	if flag != "" {
		return load(flag, "--policy")
	}
	if file, _ := env("SCRIM_POLICY"); file != "" {
		return load(file, "$SCRIM_POLICY")
	}
	if path, ok := userPolicyPath(env); ok {
		if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
			return load(path, "user config")
		}
	}
	p, err := ParseEnv(embedded, EmbeddedName, env)
	if err != nil {
		return nil, err
	}
	p.Source = "built-in"
	return p, nil
}

// UserPolicyPath is <user config dir>/scrim/policy.toml; false if there is no
// user config folder.
func UserPolicyPath() (string, bool) { return userPolicyPath(os.LookupEnv) }

func userPolicyPath(env userdirs.Lookup) (string, bool) {
	dir, err := userdirs.Config(env)
	if err != nil {
		return "", false
	}
	return filepath.Join(dir, "scrim", "policy.toml"), true
}
