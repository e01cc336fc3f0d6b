// Package secrets finds credentials in what a session would send, with
// gitleaks' default rules and allowlists (through its detect package), and
// keeps what it found beside the messages in the store, so that a message
// is scanned once per rule set, never when it is written.
package secrets

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math/bits"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/scrim-dev/scrim/session"
)

// RuleSet names the rules and the way of cutting messages into units that
// findings are made with. A stored record made with another is stale: the
// message is scanned again the next time it is needed.
const RuleSet = "gitleaks v8.30.1 default rules; units 1"

// Finding is one credential in a message: where it is and the gitleaks rule
// that found it.
type Finding struct {
	Part  int    `json:"part"`  // index in Message.Parts
	Key   int    `json:"key"`   // the part's unit (session.Unit.Key): -1 its Text, k the kth string of its input
	Start int    `json:"start"` // byte span of the secret in the unit's text
	End   int    `json:"end"`
	Rule  string `json:"rule"` // gitleaks rule ID, e.g. github-pat
}

// Span is a secret found in a text.
type Span struct {
	Start, End int
	Rule       string
}

var (
	rulesOnce sync.Once
	rules     config.Config
	rulesErr  error

	detectorOnce sync.Once
	detector     *detect.Detector
)

// defaultRules parses gitleaks' default rules once, as
// detect.NewDetectorDefaultConfig does, without making its detector:
// parsing takes about 20 ms, which a process that never scans never pays,
// and a detector of every rule carries an automaton of every keyword (2.6
// MB) that the detectors texts are scanned with (detectorFor) do without.
// gitleaks logs to stderr at Info level by default, which would tear a
// terminal UI: it is silenced.
func defaultRules() config.Config {
	rulesOnce.Do(func() {
		var vc config.ViperConfig
		if vc, rulesErr = readDefaultRules(); rulesErr != nil {
			return
		}
		rules, rulesErr = translate(&vc)
	})
	if rulesErr != nil {
		// The rules are compiled into the binary: a build whose embedded
		// rules do not parse cannot scan anything, and must not pretend to.
		panic("secrets: gitleaks default rules: " + rulesErr.Error())
	}
	return rules
}

var quietOnce sync.Once

// readDefaultRules reads gitleaks' default rules as gitleaks does, with
// its logging silenced.
func readDefaultRules() (config.ViperConfig, error) { return readRules(config.DefaultConfig) }

// readRules reads a gitleaks config as gitleaks reads its default one.
func readRules(text string) (config.ViperConfig, error) {
	quietOnce.Do(func() { logging.Logger = zerolog.Nop() }) // once: both readings may run at once
	v := viper.New()
	v.SetConfigType("toml")
	var vc config.ViperConfig
	if err := v.ReadConfig(strings.NewReader(text)); err != nil {
		return vc, err
	}
	err := v.Unmarshal(&vc)
	return vc, err
}

// The keyword index compiles each rule the first time a text holds one of
// its keywords: compiling all 222 kept 3.2 MiB of expressions for as long
// as the process ran and allocated 12.8 MiB on the way, at the first text
// with a keyword; a session's texts hold the keywords of a few. It reads
// the rules once to index their keywords, and keeps of that reading only
// what it needs: a rule is read again from its own table of gitleaks'
// config (ruleTexts) when it is compiled: the whole reading, kept for as
// long as the process ran, had been 474 KiB beside the index's 266 (500
// KiB in all now, TestKeywordIndexHoldsLittle). Each reading is its own:
// gitleaks' reading changes what it reads (the global [allowlist] is
// moved into [[allowlists]]), so one reading is never translated twice.

// ruleTexts cuts a gitleaks config into the text of each [[rules]] table,
// its [[rules.allowlists]] included, in order: read is that config as read,
// and a cut that does not give one table for each of its rules, each
// naming the rule read has in its place, gives nil.
func ruleTexts(text string, read *config.ViperConfig) []string {
	var out []string
	start := -1 // where the table being cut starts
	for at := 0; at < len(text); {
		end := strings.IndexByte(text[at:], '\n') + 1
		if end == 0 {
			end = len(text) - at
		}
		line := strings.TrimSpace(text[at : at+end])
		if strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "[[rules.") && !strings.HasPrefix(line, "[rules.") {
			if start >= 0 {
				out, start = append(out, text[start:at]), -1
			}
			if line == "[[rules]]" {
				start = at
			}
		}
		at += end
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	if len(out) != len(read.Rules) {
		return nil
	}
	for i, t := range out {
		if !strings.Contains(t, "\nid = \""+read.Rules[i].ID+"\"\n") {
			return nil
		}
	}
	return out
}

// compileRule compiles the one rule of a [[rules]] table's text as
// gitleaks' reading of the whole config compiles it (translate).
func compileRule(text string) (config.Rule, error) {
	vc, err := readRules(text)
	if err != nil {
		return config.Rule{}, err
	}
	if len(vc.Rules) != 1 {
		return config.Rule{}, fmt.Errorf("%d rules in a rule's table", len(vc.Rules))
	}
	cfg, err := translate(&vc)
	if err != nil {
		return config.Rule{}, err
	}
	return cfg.Rules[vc.Rules[0].ID], nil
}

// translate compiles vc as gitleaks does (Translate), its stopwords taken
// out before and given back after (takeStopwords).
func translate(vc *config.ViperConfig) (config.Config, error) {
	taken := takeStopwords(vc)
	cfg, err := vc.Translate()
	if err == nil {
		putStopwords(&cfg, taken)
	}
	return cfg, err
}

// Stopwords are looked for one by one, without the automaton gitleaks
// makes of each allowlist's (Allowlist.ContainsStopWord does so when there
// is none), which tells the same. The generic rule's 1,446 stopwords made
// an automaton of 8.6 MB, a fifth of the memory of a first preview of the
// 20,000-message benchmark session, for a look-up made only in a secret a
// rule has found. So the stopwords of a rule's allowlist that has other
// checks too (gitleaks refuses an allowlist without any) are taken out
// before gitleaks reads the rules, and given back, lower-cased and each
// once as gitleaks keeps them, to the allowlist it made.
// TestStopwordsAsGitleaksReadsThem holds the findings to gitleaks' own.
// The global [allowlist]'s few stopwords are taken out too: their automaton
// was 130 KiB, kept for as long as the process ran.

// stopwords is the stopwords of one allowlist of a rule, or of the global
// [allowlist] (rule "").
type stopwords struct {
	rule  string
	list  int // the allowlist's place among the rule's
	words []string
}

// takeStopwords takes out of vc the stopwords that putStopwords gives back.
func takeStopwords(vc *config.ViperConfig) []stopwords {
	var out []stopwords
	// The old form of the global allowlist, alone, becomes the last of
	// the global allowlists gitleaks makes.
	if a := vc.AllowList; a != nil && len(vc.Allowlists) == 0 && len(a.TargetRules) == 0 &&
		len(a.StopWords) > 0 && (len(a.Regexes) > 0 || len(a.Paths) > 0 || len(a.Commits) > 0) {
		out = append(out, stopwords{words: a.StopWords})
		a.StopWords = nil
	}
	for ri := range vc.Rules {
		r := &vc.Rules[ri]
		if r.AllowList != nil { // the old form: gitleaks puts it last; left as it is
			continue
		}
		for i, a := range r.Allowlists {
			if len(a.StopWords) > 0 && (len(a.Regexes) > 0 || len(a.Paths) > 0 || len(a.Commits) > 0) {
				out = append(out, stopwords{rule: r.ID, list: i, words: a.StopWords})
				a.StopWords = nil
			}
		}
	}
	return out
}

// putStopwords gives taken stopwords back to the allowlists gitleaks made.
func putStopwords(cfg *config.Config, taken []stopwords) {
	for _, t := range taken {
		seen := map[string]bool{}
		var words []string
		for _, w := range t.words {
			if w = strings.ToLower(w); !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
		if t.rule == "" {
			cfg.Allowlists[len(cfg.Allowlists)-1].StopWords = words
			continue
		}
		cfg.Rules[t.rule].Allowlists[t.list].StopWords = words
	}
}

// load is the detector of every default rule, made the first time a text
// must be scanned with all of them (detectorFor says when).
func load() *detect.Detector {
	detectorOnce.Do(func() { detector = detect.NewDetector(defaultRules()) })
	return detector
}

// ScanText returns the secrets in s, in order of where they start, with
// spans that do not overlap (of two that would, the one that starts first,
// or the longer, is kept).
func ScanText(s string) []Span {
	if len(s) < minSecret {
		return nil
	}
	d := detectorFor(s)
	if d == nil {
		return nil
	}
	return spansOf(s, d.DetectString(s))
}

// spansOf turns gitleaks' findings in s into ScanText's spans.
func spansOf(s string, fs []report.Finding) []Span {
	if len(fs) == 0 {
		return nil
	}
	nl := newlines(s)
	out := make([]Span, 0, len(fs))
	for _, f := range fs {
		if sp, ok := locate(s, nl, f); ok {
			out = append(out, sp)
		}
	}
	slices.SortFunc(out, func(a, b Span) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(b.End, a.End), strings.Compare(a.Rule, b.Rule))
	})
	w := 0
	for _, sp := range out {
		if w > 0 && sp.Start < out[w-1].End {
			continue
		}
		out[w] = sp
		w++
	}
	return out[:w]
}

// detectorFor returns the detector to scan s with: none (nil) when s
// holds no rule's keyword, else one of only the rules whose keywords s
// holds, and those without any. gitleaks runs a rule on a text only when
// the text has one of the rule's keywords (the default rules without any
// match file paths only, and a text has none), but for a text that has
// none, checking every rule's keywords in the map it builds for each text
// was about 6 µs, 85 % of scanning a short one (measured on generated code,
// 200,000 texts of 40-340 bytes: 1.29 s): the keywords are looked for here
// with one automaton over all of them (keywordDFA), in s lower-cased into
// a reused buffer (lower), and FuzzMayHold holds ruling a text out to the
// detector. For a text that has some, gitleaks runs exactly those
// rules on s anyway, but finds out which by checking every rule's keywords
// in a map it builds for each text, after its own automaton has listed all
// of them: on the UI benchmark's million messages, where most texts hold
// a short keyword ("ey", "sk"), that was a third of the first count's CPU.
// Of those rules, the ones whose pattern an opening shows cannot match in
// s are left out too. gitleaks' findings of one text depend only on the
// rules it runs that match (its filter drops a generic finding that a rule
// run beside it found better), so the findings are the same
// (FuzzScanTextByKeywords, FuzzOpening).
func detectorFor(s string) *detect.Detector {
	ix := loadKeywords()
	if ix == nil {
		return load()
	}
	set, found := ix.keywordRules(s)
	if !found {
		return nil
	}
	// Rules that cannot match in s are not run (opening).
	found = false
	for i := range set {
		for w := set[i]; w != 0; w &= w - 1 {
			r := i*64 + bits.TrailingZeros64(w)
			if o := ix.openings[r].get(ix.patterns[r]); o != nil && !o.found(s) {
				set[i] &^= 1 << (r % 64)
			}
		}
		found = found || set[i] != 0
	}
	if !found {
		return nil
	}
	return ix.detector(set)
}

// lower returns, in b's room, s lower-cased as far as keywords tell: the
// same ASCII letters, where they are, as strings.ToLower(s) has, gitleaks'
// lower-casing. The keywords are ASCII, and of all the other runes only
// two lower-case to ASCII letters (U+0130 to i, U+212A to k); the rest stay
// as they are, non-ASCII as they would be. ASCII is lower-cased eight
// bytes at a time: strings.ToLower of the texts with a non-ASCII rune was
// 1 s of a first preview at 1M messages, about the time of the automaton.
func lower(s string, b []byte) []byte {
	b = slices.Grow(b[:0], len(s))
	le := binary.LittleEndian
	load64 := func(s string) uint64 { // the compiler makes it one load
		_ = s[7]
		return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	}
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			if w := load64(s[i : i+8]); w&0x8080808080808080 == 0 {
				// Bytes from A set bit 7 once 0x3f is added, bytes
				// past Z once 0x25 is: the letters between get bit 5.
				upper := (w + 0x3f3f3f3f3f3f3f3f) &^ (w + 0x2525252525252525) & 0x8080808080808080
				b = le.AppendUint64(b, w|upper>>2)
				i += 8
				continue
			}
		}
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c < utf8.RuneSelf:
		case strings.HasPrefix(s[i:], "\u0130"):
			b, i = append(b, 'i'), i+len("\u0130")
			continue
		case strings.HasPrefix(s[i:], "\u212a"):
			b, i = append(b, 'k'), i+len("\u212a")
			continue
		}
		b = append(b, c)
		i++
	}
	return b
}

// keywordRules is the set of rules whose keywords s holds, as gitleaks
// lower-cases it; found: there is one. s is lower-cased and walked a piece
// of lowerPiece bytes at a time, the automaton's state carried from one
// piece to the next, so a keyword across two pieces is found as in one; a
// piece ends where a rune starts, so lower sees every rune whole.
func (ix *keywordIndex) keywordRules(s string) (set ruleSet, found bool) {
	buf := lowerBufs.Get().(*[]byte)
	defer lowerBufs.Put(buf)
	state := uint32(0)
	for rest := s; rest != ""; {
		n := min(len(rest), lowerPiece)
		for n < len(rest) && !utf8.RuneStart(rest[n]) {
			n++ // on to where the next rune starts (3 bytes at most in UTF-8)
		}
		*buf = lower(rest[:n], *buf)
		state = ix.dfa.walkFrom(state, *buf, func(_ int, pattern int32) bool {
			for _, r := range ix.byKeyword[pattern] {
				set[r/64] |= 1 << (r % 64)
			}
			found = true
			return true
		})
		rest = rest[n:]
	}
	return set, found
}

// lowerPiece is how much of a text is lower-cased at once (keywordRules).
// The buffers, one a scanning goroutine, are kept for the next text: grown
// to the longest text met, the 20,000-message benchmark session's first
// preview held 384 KiB of them to its end.
var lowerPiece = 16 << 10 // a variable for tests

var lowerBufs = sync.Pool{New: func() any { return new([]byte) }}

var (
	keywordsOnce sync.Once
	keywords     *keywordIndex
)

// keywordIndex finds the rules whose keywords a text holds: an automaton
// of every keyword, lower-cased, each with its rules.
type keywordIndex struct {
	dfa       *keywordDFA
	keywords  []string      // the automaton's, by pattern
	byKeyword [][]uint16    // a keyword's rules (indexes in rules)
	base      config.Config // gitleaks' settings and global allowlists, no rule
	texts     []string      // each rule's table in gitleaks' config (ruleTexts)
	ids       []string      // each rule's ID
	patterns  []string      // each rule's expression, as read
	compiled  []*config.Rule
	openings  []lazyOpening // by rule
	always    []config.Rule // rules without a keyword: gitleaks runs them on every text
	mu        sync.Mutex
	detectors map[ruleSet]*detect.Detector // made as sets of rules come up
}

// rule is rule i, compiled the first time it is asked for. ix.mu must be
// held.
func (ix *keywordIndex) rule(i int) config.Rule {
	if ix.compiled[i] == nil {
		r, err := compileRule(ix.texts[i])
		if err != nil {
			// It compiled when the whole config did (TestLazyRules):
			// a build whose rules do not is not one to scan with.
			panic("secrets: gitleaks default rule " + ix.ids[i] + ": " + err.Error())
		}
		ix.compiled[i] = &r
	}
	return *ix.compiled[i]
}

// ruleSet is a set of keywordIndex.ids, a bit each.
type ruleSet [maxRules / 64]uint64

// maxRules bounds the rules a ruleSet holds; with more, texts are scanned
// with all of them, as before there were sets.
const maxRules = 512

// maxDetectors bounds the detectors made for sets of rules (about 20 KB
// each, most of it the automaton of their keywords); past it, a text is
// scanned with every rule, which finds the same.
const maxDetectors = 256

// detector returns the detector of set's rules and the rules without a
// keyword.
func (ix *keywordIndex) detector(set ruleSet) *detect.Detector {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if d, ok := ix.detectors[set]; ok {
		return d
	}
	if len(ix.detectors) >= maxDetectors {
		return load()
	}
	cfg := ix.base
	cfg.Rules = make(map[string]config.Rule)
	cfg.Keywords = make(map[string]struct{})
	for i := range ix.ids {
		if set[i/64]&(1<<(i%64)) != 0 {
			r := ix.rule(i)
			cfg.Rules[r.RuleID] = r
			for _, k := range r.Keywords {
				cfg.Keywords[strings.ToLower(k)] = struct{}{}
			}
		}
	}
	for _, r := range ix.always {
		cfg.Rules[r.RuleID] = r
	}
	d := detect.NewDetector(cfg) // the settings of load's, gitleaks' defaults
	ix.detectors[set] = d
	return d
}

// loadKeywords is the index of every rule's keywords, lower-cased, or nil
// when the rules are such that a text without a keyword may still hold a
// secret: a rule with a pattern and no keyword (it runs on every text); or
// when there are more rules than a ruleSet holds. (A detector that decodes
// would look for keywords in what it decodes too: gitleaks' detectors,
// these included, do not by default.)
func loadKeywords() *keywordIndex {
	keywordsOnce.Do(func() { keywords = newKeywordIndex() })
	return keywords
}

// newKeywordIndex is loadKeywords' index, made afresh; its rules are
// compiled as texts need them.
func newKeywordIndex() *keywordIndex {
	read, err := readDefaultRules()
	if err != nil {
		panic("secrets: gitleaks default rules: " + err.Error()) // as defaultRules
	}
	texts := ruleTexts(config.DefaultConfig, &read)
	if len(read.Rules) > maxRules || texts == nil {
		return nil
	}
	settings := read
	settings.Rules = nil
	base, err := translate(&settings)
	if err != nil {
		panic("secrets: gitleaks default rules: " + err.Error())
	}
	ix := &keywordIndex{detectors: map[ruleSet]*detect.Detector{}, base: base}
	byID := map[string]int{}
	for i, r := range read.Rules {
		if _, twice := byID[r.ID]; twice {
			return nil // gitleaks keeps the last: scanned with every rule, as it reads them
		}
		byID[r.ID] = i
	}
	at := map[string]int{} // a keyword's pattern
	var all []string
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		r := &read.Rules[byID[id]]
		if len(r.Keywords) == 0 {
			if r.Regex != "" {
				return nil
			}
			c, err := compileRule(texts[byID[id]])
			if err != nil {
				return nil
			}
			ix.always = append(ix.always, c)
			continue
		}
		ri := uint16(len(ix.ids))
		ix.ids, ix.texts, ix.patterns = append(ix.ids, id), append(ix.texts, texts[byID[id]]), append(ix.patterns, r.Regex)
		for _, k := range r.Keywords {
			k = strings.ToLower(k)
			p, ok := at[k]
			if !ok {
				p = len(all)
				at[k] = p
				all = append(all, k)
				ix.byKeyword = append(ix.byKeyword, nil)
			}
			ix.byKeyword[p] = append(ix.byKeyword[p], ri)
		}
	}
	if len(all) == 0 {
		return nil
	}
	ix.openings = make([]lazyOpening, len(ix.ids))
	ix.compiled = make([]*config.Rule, len(ix.ids))
	ix.dfa, ix.keywords = newKeywordDFA(all), all
	return ix
}

// minSecret is shorter than any secret gitleaks' default rules match.
const minSecret = 8

// Scan returns the secrets in every unit of m, in order.
func Scan(m *session.Message) []Finding {
	var out []Finding
	for i := range m.Parts {
		m.Parts[i].EachUnit(func(u session.Unit) {
			for _, sp := range ScanText(u.Text) {
				out = append(out, Finding{Part: i, Key: u.Key, Start: sp.Start, End: sp.End, Rule: sp.Rule})
			}
		})
	}
	return out
}

// newlines returns the offset of every '\n' in s.
func newlines(s string) []int {
	var nl []int
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		nl = append(nl, i+j)
		i += j + 1
	}
	return nl
}

// locate turns a gitleaks finding's line and columns into a byte span of s.
// gitleaks counts line k's columns from the newline that ends line k-1 (and
// line 0's from the start); the match runs from its start column to its end
// column, inclusive. The secret is a piece of the match (a rule's capture
// group); when it cannot be found there (it was decoded from base64, say),
// the whole match goes.
func locate(s string, nl []int, f report.Finding) (Span, bool) {
	lineStart := func(line int) int {
		if line <= 0 || len(nl) == 0 {
			return 0
		}
		return nl[min(line, len(nl))-1]
	}
	start := lineStart(f.StartLine) + f.StartColumn - 1
	end := lineStart(f.EndLine) + f.EndColumn
	if start < 0 || end > len(s) || start >= end {
		// Not where gitleaks said: look for the match itself.
		i := strings.Index(s, f.Match)
		if i < 0 || f.Match == "" {
			return Span{}, false
		}
		start, end = i, i+len(f.Match)
	}
	if i := strings.Index(s[start:end], f.Secret); f.Secret != "" && i >= 0 {
		start, end = start+i, start+i+len(f.Secret)
	}
	return Span{Start: start, End: end, Rule: f.RuleID}, true
}

// ruleName keeps a rule ID printable in a placeholder: gitleaks' IDs are
// lower-case words and dashes already.
var ruleName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// Placeholder is the exact text that replaces a credential for a tier with
// secrets = "redact".
func Placeholder(rule, tierLabel string) string {
	if !ruleName.MatchString(rule) {
		rule = "credential"
	}
	return "[Secret filtered (" + rule + ") \u2014 trust tier \"" + tierLabel + "\" does not accept credentials]"
}
