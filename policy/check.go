package policy

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
	"github.com/bmatcuk/doublestar/v4"

	"github.com/scrim-dev/scrim/internal/tomlconf"
	"github.com/scrim-dev/scrim/internal/userdirs"
)

// checker turns a decoded TOML document into a Policy, collecting every
// problem with its line. It reads the generic document rather than decoding
// into structs so that a wrong type, an unknown key or a missing one each get
// their own message and line.
type checker struct {
	file    string
	loc     *tomlconf.Locator
	baseDir string
	env     userdirs.Lookup // for ~ and $VAR in patterns
	errs    []*tomlconf.Error
}

// line is the line of path (see tomlconf.Locator.Line), and 1 when no part
// of it is in the file: every policy problem names a line.
func (c *checker) line(path ...string) int { return max(c.loc.Line(path...), 1) }

func (c *checker) add(line int, format string, a ...any) {
	c.errs = append(c.errs, &tomlconf.Error{File: c.file, Line: line, Msg: fmt.Sprintf(format, a...)})
}

// keysByLine returns a table's keys in file order.
func (c *checker) keysByLine(tbl map[string]any, path ...string) []string {
	keys := make([]string, 0, len(tbl))
	for k := range tbl {
		keys = append(keys, k)
	}
	line := func(k string) int { return c.line(append(append([]string(nil), path...), k)...) }
	sort.Slice(keys, func(i, j int) bool {
		if li, lj := line(keys[i]), line(keys[j]); li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// unknownKeys reports keys of tbl (at path) that are not in known. It returns
// the known keys that a typo seems to mean, so that "dney" is not also
// reported as a missing deny.
func (c *checker) unknownKeys(tbl map[string]any, where string, known []string, path ...string) (meant map[string]bool) {
	meant = map[string]bool{}
	for _, k := range c.keysByLine(tbl, path...) {
		if contains(known, k) {
			continue
		}
		hint := suggest(k, known)
		if hint != "" {
			meant[closest(k, known)] = true
		}
		c.add(c.line(append(path, k)...), "unknown key %q %s%s (expected %s)", k, where, hint, strings.Join(known, ", "))
	}
	return meant
}

func (c *checker) policy(doc map[string]any) *Policy {
	p := &Policy{File: c.file, Tiers: map[string]*Tier{}}
	meant := c.unknownKeys(doc, "at the top level", []string{"default_tier", "tiers", "models"})
	c.tiers(p, doc["tiers"], meant["tiers"])
	c.models(p, doc["models"])
	c.defaultTier(p, doc, meant["default_tier"])
	return p
}

func (c *checker) tiers(p *Policy, v any, misspelt bool) {
	if v == nil {
		if misspelt {
			return
		}
		c.add(1, "no tiers defined; add at least one [tiers.NAME] table with a label and read patterns")
		return
	}
	tbl, ok := v.(map[string]any)
	if !ok {
		c.add(c.line("tiers"), "tiers must be tables: write [tiers.NAME] with label, read and deny")
		return
	}
	if len(tbl) == 0 {
		c.add(c.line("tiers"), "no tiers defined; add at least one [tiers.NAME] table with a label and read patterns")
		return
	}
	for _, name := range c.keysByLine(tbl, "tiers") {
		t := c.tier(name, tbl[name])
		p.Tiers[name] = t
		p.Order = append(p.Order, name)
	}
}

func (c *checker) tier(name string, v any) *Tier {
	line := c.line("tiers", name)
	t := &Tier{Name: name, Line: line}
	if msg := textProblem(name); msg != "" {
		c.add(line, "tier name %q %s", name, msg)
	}
	if defs := c.loc.Defs("tiers", name); len(defs) > 1 {
		// The decoder merges a tier split between dotted keys and a
		// [tiers.NAME] header; TOML forbids it and it is surely a mistake.
		c.add(defs[1], "duplicate tier %q (first defined on line %d); merge the two or rename one", name, defs[0])
	}
	tbl, ok := v.(map[string]any)
	if !ok {
		c.add(line, "tier %q must be a table with label, read and deny: write [tiers.%s]", name, toml.Key{name})
		return t
	}
	meant := c.unknownKeys(tbl, fmt.Sprintf("in tier %q", name), tierKeys, "tiers", name)
	switch label, ok := tbl["label"].(string); {
	case tbl["label"] == nil && meant["label"]:
	case tbl["label"] == nil:
		c.add(line, "tier %q has no label; add label = \"...\" (placeholders name the tier by it)", name)
	case !ok:
		c.add(c.line("tiers", name, "label"), "tier %q: label must be a string", name)
	case textProblem(label) != "":
		c.add(c.line("tiers", name, "label"), "tier %q: label %q %s", name, label, textProblem(label))
	default:
		t.Label = label
	}
	t.Read = c.patterns(name, "read", tbl["read"])
	t.Deny = c.patterns(name, "deny", tbl["deny"])
	t.DenyFiles = c.denyFiles(name, tbl["deny_files"])
	t.Keys = map[string]int{}
	for _, k := range tierKeys {
		if _, ok := tbl[k]; ok {
			t.Keys[k] = c.line("tiers", name, k)
		}
	}
	t.Tools = c.tools(name, tbl["tools"])
	if _, ok := tbl["tools"]; ok {
		t.ToolsLine = t.Keys["tools"]
	}
	t.UnknownSource = c.choice(name, "unknown_source", tbl["unknown_source"], "send", "withhold")
	t.Derived = c.choice(name, "derived", tbl["derived"], "send", "redact")
	t.Secrets = c.choice(name, "secrets", tbl["secrets"], "send", "redact")
	return t
}

// tierKeys are the keys a tier may have, in the order policy check shows them.
var tierKeys = []string{"label", "read", "deny", "deny_files", "tools", "unknown_source", "derived", "secrets"}

// denyFiles reads a tier's deny_files: team file names, each once, or "*"
// for all of them.
func (c *checker) denyFiles(tier string, v any) []*TeamFormat {
	if v == nil {
		return nil
	}
	names := make([]string, len(TeamFormats))
	for i, f := range TeamFormats {
		names[i] = f.Name
	}
	known := strings.Join(names, ", ")
	list, ok := v.([]any)
	if !ok {
		c.add(c.line("tiers", tier, "deny_files"), "tier %q: deny_files must be an array of team file names, like deny_files = [\".cursorignore\"], or [\"*\"] for all of them (%s)", tier, known)
		return nil
	}
	chosen, named := map[*TeamFormat]bool{}, map[*TeamFormat]bool{}
	for i, e := range list {
		line := c.line("tiers", tier, "deny_files", tomlconf.Elem(i))
		name, ok := e.(string)
		f := teamFormat(name)
		switch {
		case !ok:
			c.add(line, "tier %q: deny_files must be strings (element %d is not)", tier, i+1)
		case name == "*":
			for _, f := range TeamFormats {
				chosen[f] = true
			}
		case f == nil:
			c.add(line, "tier %q: deny_files: unknown team file %q%s (scrim reads %s, or \"*\" for all)", tier, name, suggest(name, names), known)
		case named[f]:
			c.add(line, "tier %q: deny_files: %q is listed twice", tier, name)
		default:
			chosen[f], named[f] = true, true
		}
	}
	var out []*TeamFormat
	for _, f := range TeamFormats {
		if chosen[f] {
			out = append(out, f)
		}
	}
	return out
}

// tools reads a tier's tools list: known tool names, each once.
func (c *checker) tools(tier string, v any) []string {
	if v == nil {
		return append([]string(nil), DefaultTools...)
	}
	list, ok := v.([]any)
	if !ok {
		c.add(c.line("tiers", tier, "tools"), "tier %q: tools must be an array of tool names, like tools = [\"read\", \"grep\", \"glob\"] (the tools: %s)", tier, strings.Join(ToolNames, ", "))
		return []string{}
	}
	out := []string{}
	for i, e := range list {
		line := c.line("tiers", tier, "tools", tomlconf.Elem(i))
		name, ok := e.(string)
		switch {
		case !ok:
			c.add(line, "tier %q: tools must be strings (element %d is not)", tier, i+1)
		case !contains(ToolNames, name):
			c.add(line, "tier %q: unknown tool %q%s (the tools: %s)", tier, name, suggest(name, ToolNames), strings.Join(ToolNames, ", "))
		case contains(out, name):
			c.add(line, "tier %q: tool %q is listed twice", tier, name)
		default:
			out = append(out, name)
		}
	}
	return out
}

// choice reads a key that takes one of a few words; omitted, the first.
func (c *checker) choice(tier, key string, v any, options ...string) string {
	if v == nil {
		return options[0]
	}
	s, ok := v.(string)
	if !ok || !contains(options, s) {
		c.add(c.line("tiers", tier, key), "tier %q: %s must be %s, not %v", tier, key, strings.Join(quoted(options), " or "), describeValue(v))
		return options[0]
	}
	return s
}

func quoted(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func describeValue(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%v", v)
}

// textProblem says what is wrong with a name or label that people read in
// placeholders and terminals, or "".
func textProblem(s string) string {
	if strings.TrimSpace(s) == "" {
		return "is empty"
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "must be one line of printable text"
		}
	}
	return ""
}

func (c *checker) patterns(tier, key string, v any) []Pattern {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		c.add(c.line("tiers", tier, key), "tier %q: %s must be an array of path globs, like %s = [\"~/src/**\"]", tier, key, key)
		return nil
	}
	var out []Pattern
	for i, e := range list {
		line := c.line("tiers", tier, key, tomlconf.Elem(i))
		raw, ok := e.(string)
		if !ok {
			c.add(line, "tier %q: %s patterns must be strings (element %d is not)", tier, key, i+1)
			continue
		}
		pat, err := compilePattern(raw, c.baseDir, c.env)
		if err != nil {
			c.add(line, "tier %q: %s pattern %q: %v", tier, key, raw, err)
			continue
		}
		pat.Line = line
		pat.reason = fmt.Sprintf("%s pattern %q matches", key, raw)
		out = append(out, pat)
	}
	return out
}

// rules accepts [[models]] tables and models = [{...}, ...] alike.
func rules(v any) ([]map[string]any, bool) {
	switch v := v.(type) {
	case []map[string]any:
		return v, true
	case []any:
		out := make([]map[string]any, len(v))
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

func (c *checker) models(p *Policy, v any) {
	if v == nil {
		return // every model gets the default tier
	}
	list, ok := rules(v)
	if !ok {
		c.add(c.line("models"), "models must be [[models]] tables, each with match and tier")
		return
	}
	for i, r := range list {
		at := func(key ...string) int { return c.line(append([]string{"models", tomlconf.Elem(i)}, key...)...) }
		meant := c.unknownKeys(r, fmt.Sprintf("in model rule %d", i+1), []string{"match", "tier"}, "models", tomlconf.Elem(i))
		match, ok := r["match"].(string)
		switch {
		case r["match"] == nil && meant["match"]:
		case r["match"] == nil:
			c.add(at(), "model rule %d has no match; add match = \"provider/**\"", i+1)
		case !ok || match == "":
			c.add(at("match"), "model rule %d: match must be a non-empty model glob, like \"anthropic/**\"", i+1)
		case !doublestar.ValidatePattern(match):
			c.add(at("match"), "model rule %d: match %q: %v", i+1, match, errInvalidGlob)
		}
		tier, ok := r["tier"].(string)
		switch {
		case r["tier"] == nil && meant["tier"]:
			continue
		case r["tier"] == nil:
			c.add(at(), "model rule %d (%q) has no tier; add tier = \"NAME\"", i+1, match)
			continue
		case !ok:
			c.add(at("tier"), "model rule %d: tier must be a string naming a tier", i+1)
			continue
		case p.Tiers[tier] == nil:
			c.add(at("tier"), "model rule %d (%q): tier %q is not defined%s (tiers: %s)", i+1, match, tier, suggest(tier, p.Order), strings.Join(p.Order, ", "))
			continue
		}
		p.Models = append(p.Models, ModelRule{Match: match, Tier: tier, Line: at()})
	}
}

func (c *checker) defaultTier(p *Policy, doc map[string]any, misspelt bool) {
	v, ok := doc["default_tier"]
	if !ok {
		if misspelt {
			return
		}
		c.add(1, "default_tier is missing; add default_tier = \"NAME\" at the top: the tier of models that no rule matches")
		return
	}
	line := c.line("default_tier")
	name, ok := v.(string)
	switch {
	case !ok:
		c.add(line, "default_tier must be a string naming a tier")
	case p.Tiers[name] == nil && len(p.Order) > 0:
		c.add(line, "default_tier %q is not a defined tier%s (tiers: %s)", name, suggest(name, p.Order), strings.Join(p.Order, ", "))
	default:
		p.DefaultTier, p.DefaultLine = name, line
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns ` (did you mean "x"?)` for the closest of options within a
// small edit distance, so that a typo like dney points at deny.
func suggest(s string, options []string) string {
	if best := closest(s, options); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

func closest(s string, options []string) string {
	best, bestD := "", 3
	for _, o := range options {
		if d := editDistance(s, o); d < bestD && d < max(len(o)/2, 1)+1 {
			best, bestD = o, d
		}
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance (adjacent swaps count one).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 30
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
