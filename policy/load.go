package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/bmatcuk/doublestar/v4"
)

// EmbeddedName is the File of a policy parsed from the built-in default.
const EmbeddedName = "<embedded default policy>"

// maxPolicySize keeps a mistaken --policy (a disk image, a log) from being read whole.
const maxPolicySize = 4 << 20

// LoadError says what is wrong with a policy file and where.
type LoadError struct {
	File string
	Line int // 0 when the problem has no single line (e.g. no tiers at all)
	Msg  string
}

func (e *LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

type fileTier struct {
	Label string   `toml:"label"`
	Read  []string `toml:"read"`
	Deny  []string `toml:"deny"`
}

type fileRule struct {
	Match string `toml:"match"`
	Tier  string `toml:"tier"`
}

type fileFormat struct {
	DefaultTier *string              `toml:"default_tier"`
	Tiers       map[string]*fileTier `toml:"tiers"`
	Models      []fileRule           `toml:"models"`
}

// Load reads and validates the policy file at path.
func Load(path string) (*Policy, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &LoadError{File: path, Msg: err.Error()}
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, &LoadError{File: path, Msg: fmt.Sprintf("cannot read policy: %v", unwrapPath(err))}
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxPolicySize+1)); err != nil {
		return nil, &LoadError{File: path, Msg: fmt.Sprintf("cannot read policy: %v", unwrapPath(err))}
	}
	if buf.Len() > maxPolicySize {
		return nil, &LoadError{File: path, Msg: fmt.Sprintf("policy file is larger than %d MiB; is this the right file?", maxPolicySize>>20)}
	}
	return Parse(buf.Bytes(), abs)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse validates a policy held in memory. file names it in errors and, unless it
// is EmbeddedName, its folder is the base of relative patterns.
func Parse(data []byte, file string) (*Policy, error) {
	fail := func(line int, format string, a ...any) (*Policy, error) {
		return nil, &LoadError{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	if !utf8.Valid(data) {
		return fail(firstInvalidUTF8Line(data), "policy is not valid UTF-8 text")
	}
	var ff fileFormat
	md, err := toml.Decode(string(data), &ff)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fail(pe.Position.Line, "%s", pe.Message)
		}
		return fail(0, "%v", err)
	}
	loc := newLocator(data)
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return fail(loc.keyLine(k), "unknown key %q (expected default_tier, [tiers.NAME] with label/read/deny, [[models]] with match/tier)", k.String())
	}
	if len(ff.Tiers) == 0 {
		return fail(0, "no tiers defined; add at least one [tiers.NAME] table")
	}
	if dup := loc.duplicateTier(); dup.name != "" {
		return fail(dup.line, "duplicate tier %q", dup.name)
	}
	baseDir := ""
	if file != EmbeddedName {
		baseDir = filepath.Dir(file)
	}
	p := &Policy{File: file, Tiers: make(map[string]*Tier, len(ff.Tiers))}
	names := make([]string, 0, len(ff.Tiers))
	for name := range ff.Tiers {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return loc.tableLine("tiers."+names[i]) < loc.tableLine("tiers."+names[j]) })
	for _, name := range names {
		ft := ff.Tiers[name]
		line := loc.tableLine("tiers." + name)
		if ft == nil {
			return fail(line, "tier %q is empty; give it a label", name)
		}
		if strings.TrimSpace(ft.Label) == "" {
			return fail(line, "tier %q has no label; add label = \"...\"", name)
		}
		t := &Tier{Name: name, Label: ft.Label}
		for _, list := range []struct {
			key string
			raw []string
			dst *[]Pattern
		}{{"read", ft.Read, &t.Read}, {"deny", ft.Deny, &t.Deny}} {
			for _, raw := range list.raw {
				pl := loc.valueLine("tiers."+name+"."+list.key, raw)
				pat, err := compilePattern(raw, baseDir)
				if err != nil {
					return fail(pl, "tier %q: %s pattern %q: %v", name, list.key, raw, err)
				}
				pat.Line = pl
				*list.dst = append(*list.dst, pat)
			}
		}
		p.Tiers[name] = t
		p.Order = append(p.Order, name)
	}
	for i, r := range ff.Models {
		line := loc.arrayTableLine("models", i)
		if r.Match == "" {
			return fail(line, "model rule has no match pattern; add match = \"provider/*\"")
		}
		if !doublestar.ValidatePattern(r.Match) {
			return fail(loc.lineInTable(line, "match"), "model rule: invalid glob %q", r.Match)
		}
		if _, ok := p.Tiers[r.Tier]; !ok {
			return fail(loc.lineInTable(line, "tier"), "model rule %q: unknown tier %q (defined: %s)", r.Match, r.Tier, strings.Join(p.Order, ", "))
		}
		p.Models = append(p.Models, ModelRule{Match: r.Match, Tier: r.Tier, Line: line})
	}
	if ff.DefaultTier == nil {
		return fail(0, "default_tier is missing; add default_tier = \"<tier for unknown models>\" at the top")
	}
	if _, ok := p.Tiers[*ff.DefaultTier]; !ok {
		return fail(loc.keyLine(toml.Key{"default_tier"}), "default_tier %q is not a defined tier (defined: %s)", *ff.DefaultTier, strings.Join(p.Order, ", "))
	}
	p.DefaultTier = *ff.DefaultTier
	return p, nil
}

func firstInvalidUTF8Line(data []byte) int {
	line := 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		data = data[size:]
	}
	return line
}

// Resolve loads the policy scrim runs with: flag (--policy), else
// $SCRIM_POLICY, else <user config dir>/scrim/policy.toml if it exists, else
// the embedded default. A file that is named but missing is an error, never a
// silent fall-back to the default.
func Resolve(flag string, embedded []byte) (*Policy, error) {
	if flag != "" {
		return Load(flag)
	}
	if env := os.Getenv("SCRIM_POLICY"); env != "" {
		return Load(env)
	}
	if dir, err := os.UserConfigDir(); err == nil {
		path := filepath.Join(dir, "scrim", "policy.toml")
		if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
			return Load(path)
		}
	}
	return Parse(embedded, EmbeddedName)
}
