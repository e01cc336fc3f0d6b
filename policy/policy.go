package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrDenied is the sentinel for a read the active tier may not make.
var ErrDenied = errors.New("read denied")

// Policy is a loaded, validated policy. It is immutable after Load and safe
// for concurrent use.
type Policy struct {
	File        string // absolute path, or EmbeddedName
	DefaultTier string
	Tiers       map[string]*Tier
	Order       []string // tier names in file order
	Models      []ModelRule

	decisions atomic.Uint64
}

// Tier is a named set of read and deny patterns.
type Tier struct {
	Name  string
	Label string
	Read  []Pattern
	Deny  []Pattern
}

// ModelRule maps model IDs matching Match (a doublestar glob) to a tier.
type ModelRule struct {
	Match string
	Tier  string
	Line  int
}

// Pattern is one read or deny glob. Raw is as written; forms are what paths
// are matched against: the expanded pattern and, when its literal prefix runs
// through a symlink, the same pattern on the resolved prefix.
type Pattern struct {
	Raw   string
	Line  int
	forms []form
}

type form struct {
	glob   string
	prefix string // literal, glob-free prefix; a path that lacks it cannot match
}

func (p Pattern) match(path string) bool {
	for _, f := range p.forms {
		if !strings.HasPrefix(path, f.prefix) {
			continue
		}
		if ok, _ := doublestar.Match(f.glob, path); ok {
			return true
		}
	}
	return false
}

// Expanded returns the absolute glob(s) the pattern matches against.
func (p Pattern) Expanded() []string {
	out := make([]string, len(p.forms))
	for i, f := range p.forms {
		out[i] = f.glob
	}
	return out
}

func compilePattern(raw, baseDir string) (Pattern, error) {
	if raw == "" {
		return Pattern{}, errors.New("empty pattern")
	}
	var missing string
	s := os.Expand(raw, func(name string) string {
		v, ok := os.LookupEnv(name)
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return Pattern{}, fmt.Errorf("environment variable $%s is not set", missing)
	}
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return Pattern{}, fmt.Errorf("cannot expand ~: %v", err)
		}
		s = home + s[1:]
	case strings.HasPrefix(s, "**"):
		// Matches at any depth anywhere: not relative to anything.
		if !doublestar.ValidatePattern(s) {
			return Pattern{}, errors.New("invalid glob")
		}
		return Pattern{Raw: raw, forms: []form{{glob: s}}}, nil
	case !filepath.IsAbs(s):
		if baseDir == "" {
			return Pattern{}, errors.New("relative pattern in a policy without a folder; use an absolute path, ~ or **")
		}
		s = filepath.Join(baseDir, s)
	}
	trailing := strings.HasSuffix(s, "/") && len(s) > 1
	s = filepath.Clean(s)
	if trailing {
		// "dir/" means the folder and everything in it.
		s += "/**"
	}
	if !doublestar.ValidatePattern(s) {
		return Pattern{}, errors.New("invalid glob")
	}
	prefix, rest := splitLiteral(s)
	p := Pattern{Raw: raw, forms: []form{{glob: s, prefix: prefix}}}
	if canon, err := Canonical(prefix); err == nil && canon != prefix {
		g := escapeMeta(canon)
		if rest != "" {
			g = strings.TrimSuffix(g, "/") + "/" + rest
		}
		p.forms = append(p.forms, form{glob: g, prefix: canon})
	}
	return p, nil
}

// splitLiteral splits an absolute glob into its glob-free leading folders
// and the rest: "/home/u/src/**/*.go" → "/home/u/src", "**/*.go".
func splitLiteral(glob string) (prefix, rest string) {
	comps := strings.Split(glob, "/")
	i := 0
	for i < len(comps) && !strings.ContainsAny(comps[i], `*?[]{}\`) {
		i++
	}
	prefix = strings.Join(comps[:i], "/")
	if prefix == "" {
		prefix = "/"
	}
	return prefix, strings.Join(comps[i:], "/")
}

func escapeMeta(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TierFor maps a model ID to its tier: the first [[models]] rule whose match
// glob matches, else the default tier. The rule is nil for the default.
func (p *Policy) TierFor(model string) (*Tier, *ModelRule) {
	for i := range p.Models {
		r := &p.Models[i]
		if ok, _ := doublestar.Match(r.Match, model); ok {
			return p.Tiers[r.Tier], r
		}
	}
	return p.Tiers[p.DefaultTier], nil
}

// Decision is the answer for one path.
type Decision struct {
	Allowed   bool
	Path      string // as given, made absolute and clean
	Canonical string // symlinks resolved; "" if that failed
	Pattern   string // the pattern that decided, as written; "" if none
	Kind      string // "read", "deny" or "" (no pattern decided)
	Line      int    // line of Pattern in the policy file
	Reason    string // one line a person can read
}

// Decide says whether tier t may read path. Both the path as given and its
// canonical form are checked: denied if either is denied. A path that cannot
// be resolved is denied.
func (p *Policy) Decide(t *Tier, path string) Decision {
	p.decisions.Add(1)
	lex, err := lexical(path)
	if err != nil {
		return Decision{Path: path, Reason: fmt.Sprintf("path cannot be decided: %v", err)}
	}
	canon, err := Canonical(lex)
	if err != nil {
		return Decision{Path: lex, Reason: fmt.Sprintf("path cannot be resolved (%v)", err)}
	}
	d := t.decide(lex)
	if canon != lex {
		if dc := t.decide(canon); !dc.Allowed && (d.Allowed || dc.Kind == "deny" && d.Kind != "deny") {
			d = dc
			d.Reason += " (via its resolved path " + canon + ")"
		}
	}
	d.Path, d.Canonical = lex, canon
	return d
}

func (t *Tier) decide(path string) Decision {
	for _, pat := range t.Deny {
		if pat.match(path) {
			return Decision{Pattern: pat.Raw, Kind: "deny", Line: pat.Line, Reason: fmt.Sprintf("deny pattern %q matches", pat.Raw)}
		}
	}
	for _, pat := range t.Read {
		if pat.match(path) {
			return Decision{Allowed: true, Pattern: pat.Raw, Kind: "read", Line: pat.Line, Reason: fmt.Sprintf("read pattern %q matches", pat.Raw)}
		}
	}
	return Decision{Reason: "no read pattern matches"}
}

// Allowed is Decide for a model ID.
func (p *Policy) Allowed(model, path string) bool {
	t, _ := p.TierFor(model)
	return p.Decide(t, path).Allowed
}

// DecisionCount is how many path decisions this policy has made; tests use it
// to prove that callers memoise.
func (p *Policy) DecisionCount() uint64 { return p.decisions.Load() }

// Explanation is the full answer to "may model read path, and why?".
type Explanation struct {
	Model    string
	Rule     string // the [[models]] match that applied, or "default"
	RuleLine int
	Tier     *Tier
	Decision Decision
}

// Explain decides path for model and says which rule and pattern decided it.
func (p *Policy) Explain(model, path string) Explanation {
	t, r := p.TierFor(model)
	e := Explanation{Model: model, Rule: "default", Tier: t, Decision: p.Decide(t, path)}
	if r != nil {
		e.Rule, e.RuleLine = r.Match, r.Line
	}
	return e
}
