package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/scrim-dev/scrim/internal/userdirs"
)

// ErrDenied is the sentinel for a read the active tier may not make.
var ErrDenied = errors.New("read denied")

// Policy is a loaded, validated policy. It is immutable after Load and safe
// for concurrent use.
type Policy struct {
	File        string // absolute path, or EmbeddedName
	Source      string // how File was found: "--policy", "$SCRIM_POLICY", "user config", "built-in"; "" from Parse/Load
	DefaultTier string
	DefaultLine int // line of default_tier
	Tiers       map[string]*Tier
	Order       []string // tier names in file order
	Models      []ModelRule

	decisions atomic.Uint64
	env       userdirs.Lookup // for the home folder of team files
	team      *teamCache      // nil when no tier has deny_files
}

// Tier is a named set of read and deny patterns, the tools its models are
// offered and how it treats content beyond paths.
type Tier struct {
	Name  string
	Label string
	Line  int // where the tier is defined
	Read  []Pattern
	Deny  []Pattern
	// Tools are the tools its models are offered (DefaultTools when the
	// key is omitted); ToolsLine is the key's line, 0 when omitted.
	Tools     []string
	ToolsLine int
	// UnknownSource is "send" (the default) or "withhold": tool results
	// whose source is not known are replaced in what is sent.
	UnknownSource string
	// Derived is "send" or "redact": text anywhere that repeats content
	// this tier may not read is replaced.
	Derived string
	// Secrets is "send" or "redact": credentials anywhere are replaced.
	Secrets string
	// DenyFiles are the team files whose patterns it adds to Deny
	// (deny_files; "*" expanded), in TeamFormats order.
	DenyFiles []*TeamFormat
	// Keys are the lines of the keys set explicitly (for policy check).
	Keys map[string]int

	team     *teamCache
	teamMask uint16 // DenyFiles as bits
}

// ToolNames are the tools scrim has, in the order it offers them.
var ToolNames = []string{"read", "grep", "glob", "bash", "webfetch"}

// DefaultTools are the tools of a tier whose tools key is omitted: the ones
// that read files through the policy. bash and webfetch run with the user's
// rights, so a tier gets them only by naming them.
var DefaultTools = []string{"read", "grep", "glob"}

// Offers reports whether t's models are offered tool.
func (t *Tier) Offers(tool string) bool {
	if t == nil {
		return false
	}
	for _, x := range t.Tools {
		if x == tool {
			return true
		}
	}
	return false
}

// WithholdsUnknown reports whether content of unknown source is withheld.
func (t *Tier) WithholdsUnknown() bool { return t != nil && t.UnknownSource == "withhold" }

// RedactsDerived reports whether text repeating denied content is redacted.
func (t *Tier) RedactsDerived() bool { return t != nil && t.Derived == "redact" }

// RedactsSecrets reports whether credentials are redacted.
func (t *Tier) RedactsSecrets() bool { return t != nil && t.Secrets == "redact" }

// ModelRule maps model IDs matching Match (a doublestar glob) to a tier.
type ModelRule struct {
	Match string
	Tier  string
	Line  int
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
	Allowed      bool
	Path         string // as given, made absolute and clean
	Canonical    string // symlinks resolved; "" if that failed
	Pattern      string // the pattern that decided, as written; "" if none
	Kind         string // "read", "deny" or "" (no pattern decided)
	Line         int    // line of Pattern in the policy file, or in File
	File         string // the team file (deny_files) that decided; "" for the policy
	ViaCanonical bool   // the canonical form, not the path as given, decided
	Reason       string // one line a person can read
}

// Decide says whether tier t may read path. Both the path as given and its
// canonical form are checked: denied if either is denied. A path that cannot
// be resolved is denied.
func (p *Policy) Decide(t *Tier, path string) Decision {
	p.decisions.Add(1)
	if t == nil {
		return Decision{Path: path, Reason: "no trust tier to decide with"}
	}
	abs, err := absolute(path)
	if err != nil {
		return Decision{Path: path, Reason: fmt.Sprintf("path cannot be decided: %v", err)}
	}
	lex := filepath.Clean(abs)
	canon, err := canonicalAbs(abs)
	return decideForms(t, lex, canon, err)
}

// decideForms decides the path as given (lex) and its canonical form: the
// stronger answer wins — a deny over anything, then "no read pattern" over an
// allow. A path whose canonical form could not be found is denied.
func decideForms(t *Tier, lex, canon string, err error) Decision {
	if err != nil {
		return Decision{Path: lex, Reason: fmt.Sprintf("path cannot be decided: %v", err)}
	}
	d := t.decide(lex)
	if canon != lex {
		if dc := t.decide(canon); !dc.Allowed && (d.Allowed || dc.Kind == "deny" && d.Kind != "deny") {
			d = dc
			d.ViaCanonical = true
			d.Reason += " (on its resolved path " + canon + ")"
		}
	}
	d.Path, d.Canonical = lex, canon
	return d
}

func (t *Tier) decide(path string) Decision {
	for _, pat := range t.Deny {
		if pat.matchDeny(path) {
			return Decision{Pattern: pat.Raw, Kind: "deny", Line: pat.Line, Reason: pat.reason}
		}
	}
	for _, pat := range t.Read {
		if pat.match(path) {
			// Team files can only deny, so they are asked only about a
			// path the tier would read.
			if t.team != nil {
				if d, denied := t.team.deny(t.teamMask, path); denied {
					return d
				}
			}
			return Decision{Allowed: true, Pattern: pat.Raw, Kind: "read", Line: pat.Line, Reason: pat.reason}
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
	RuleLine int    // line of that rule, or of default_tier
	Tier     *Tier
	Decision Decision
}

// Explain decides path for model and says which rule and pattern decided it.
func (p *Policy) Explain(model, path string) Explanation {
	t, r := p.TierFor(model)
	e := Explanation{Model: model, Rule: "default", RuleLine: p.DefaultLine, Tier: t, Decision: p.Decide(t, path)}
	if r != nil {
		e.Rule, e.RuleLine = r.Match, r.Line
	}
	return e
}
