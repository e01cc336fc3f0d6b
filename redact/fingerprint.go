package redact

import (
	"math"
	"math/bits"
	"strings"
)

// Fingerprints are the pieces of withheld content distinctive enough that
// finding one elsewhere in what is sent means the content was repeated:
//
//   - lines, trimmed, with a line-number prefix (cat -n, nl, grep -n, the
//     agents' read tools) taken off, of at least minLine bytes of which
//     minLineAlnum are letters or digits;
//   - the value of a KEY=VALUE or key: value line (quotes, a trailing comma
//     or semicolon taken off), if it looks like data rather than a word;
//   - quoted strings on one line that do;
//   - the password of a URL (scheme://user:password@host) that does;
//   - identifiers of at least minIdent bytes;
//   - words of at least minEntropyWord bytes with letters and digits whose
//     characters are spread like a key's (Shannon entropy ≥ minEntropy bits).
//
// A KEY=VALUE line's key is a name, not content: it is not taken as an
// identifier. The same rules, run over content the tier may read, say what
// does not count (a line or token found there too is not distinctive), so
// `}`, `package main` or a licence header shared with an allowed file never
// do.
const (
	minLine        = 20
	minLineAlnum   = 8
	minValue       = 6
	minQuoted      = 8
	minIdent       = 16
	minEntropyWord = 12
	minEntropy     = 3.0
	// shortWord is the shortest word wordFingerprints takes anything from.
	shortWord = min(minEntropyWord, minIdent)
	// maxFingerprint bounds a line taken whole: a longer line (minified
	// code, a base64 blob) is still found by its words.
	maxFingerprint = 4096
)

// eachFingerprint calls fn with every fingerprint of text, in order; a
// fingerprint may come more than once.
func eachFingerprint(text string, fn func(string)) { eachPiece(text, false, fn) }

// eachCandidate calls fn with every piece of text that could be a
// fingerprint: the same cuts without the tests of distinctiveness, a
// superset that is cheaper to make. It is what content the tier may read is
// checked with: a fingerprint among its pieces does not count.
func eachCandidate(text string, fn func(string)) { eachPiece(text, true, fn) }

func eachPiece(text string, loose bool, fn func(string)) {
	// Most texts name no URL: "://" is looked for once in the text, not
	// in every line of it (a tenth of BenchmarkCut's profile; so, 4 %
	// fewer instructions).
	urls := strings.Contains(text, "://")
	for text != "" {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		lineFingerprints(line, loose, urls, fn)
	}
}

// lineFingerprints calls fn with the fingerprints of line; urls says the
// line may hold a URL.
func lineFingerprints(line string, loose, urls bool, fn func(string)) {
	line = strings.TrimSpace(stripLineNumber(line))
	if line == "" {
		return
	}
	if len(line) >= minLine && len(line) <= maxFingerprint && (loose || alnums(line, minLineAlnum)) {
		fn(line)
	}
	words := line
	if v, ok := assignedValue(line); ok {
		if loose && len(v) >= minValue || distinctive(v, minValue) {
			fn(v)
		}
		words = v // the key is a name: only the value's words count
	}
	quoted(words, loose, fn)
	if urls {
		urlPasswords(line, loose, fn)
	}
	wordFingerprints(words, loose, fn)
}

// urlPasswords calls fn with the password of each URL in s that carries
// one (scheme://user:password@host), if it looks like data: a password is
// a credential wherever it is quoted, and the URL's words do not make it
// one on its own (postgres://app:hunter2pass is a word, hunter2pass too
// short a one to count).
func urlPasswords(s string, loose bool, fn func(string)) {
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			return
		}
		s = s[i+3:]
		end := strings.IndexAny(s, "@/?#\\ \t\"'`<>")
		if end < 0 || s[end] != '@' {
			continue
		}
		_, pass, ok := strings.Cut(s[:end], ":")
		if ok && (loose && len(pass) >= minValue || distinctive(pass, minValue)) {
			fn(pass)
		}
		s = s[end+1:]
	}
}

// stripLineNumber takes off the line number a reading tool put in front of
// a line: "   12\t", "   12→" (cat -n, nl, the agents' read tools) or
// "12:" and "path:12:" (grep -n, rg). What is left is a piece of the line as
// written, so it is found wherever the line is.
func stripLineNumber(line string) string {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j > i {
		switch rest := line[j:]; {
		case strings.HasPrefix(rest, "\t"):
			return rest[1:]
		case strings.HasPrefix(rest, "→"):
			return rest[len("→"):]
		case strings.HasPrefix(rest, ":") && i == 0:
			return rest[1:]
		}
	}
	// path:12:text, as grep -n and rg print a match of several files.
	if k := strings.IndexByte(line, ':'); k > 0 && !strings.ContainsAny(line[:k], " \t") {
		n := k + 1
		for n < len(line) && line[n] >= '0' && line[n] <= '9' {
			n++
		}
		if n > k+1 && n < len(line) && (line[n] == ':' || line[n] == '-') {
			return line[n+1:]
		}
	}
	return line
}

// assignedValue returns the value of a KEY=VALUE, KEY = "VALUE", export
// KEY=VALUE or key: value line.
func assignedValue(line string) (string, bool) {
	s := strings.TrimPrefix(line, "export ")
	i := 0
	for i < len(s) && (isIdent(s[i]) || i > 0 && (s[i] == '.' || s[i] == '-')) {
		i++
	}
	if i == 0 {
		return "", false
	}
	j := i
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j >= len(s) || s[j] != '=' && s[j] != ':' {
		return "", false
	}
	if s[j] == ':' && j+1 < len(s) && s[j+1] != ' ' && s[j+1] != '\t' {
		return "", false // "http://…" or "a:b": not key: value
	}
	v := strings.TrimSpace(s[j+1:])
	v = strings.TrimRight(v, ",;")
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return v, v != ""
}

// quoted calls fn with each distinctive string between matching quotes.
func quoted(s string, loose bool, fn func(string)) {
	for {
		i := firstQuote(s)
		if i == len(s) {
			return
		}
		q := s[i]
		j := strings.IndexByte(s[i+1:], q)
		if j < 0 {
			return
		}
		if v := s[i+1 : i+1+j]; loose && len(v) >= minQuoted || distinctive(v, minQuoted) {
			fn(v)
		}
		s = s[i+1+j+1:]
	}
}

// firstQuote is where the first byte of s that opens a quoted string
// (isQuote) is, or len(s): each of the three looked for with
// strings.IndexByte, which looks at many bytes a step, in what is before
// the ones found so far. A byte at a time, the look for quotes was a fifth
// of BenchmarkCut's time, where most lines hold none or one.
func firstQuote(s string) int {
	n := len(s)
	for _, q := range [...]byte{'"', '\'', '`'} {
		if i := strings.IndexByte(s[:n], q); i >= 0 {
			n = i
		}
	}
	return n
}

// wordFingerprints calls fn with the long identifiers and the key-like words
// of s.
func wordFingerprints(s string, loose bool, fn func(string)) {
	// No word shorter than shortWord is taken. i, never within a word,
	// looks first at the byte shortWord-1 past it: if that is not a
	// word's, no word from i to it is long enough, and i goes past it;
	// if it is, its word is found back and forth from it. A byte at a
	// time, finding every word (code's are short) was two fifths of
	// BenchmarkCut.
	for i := 0; i+shortWord <= len(s); {
		e := i + shortWord - 1
		if !isWord(s[e]) {
			i = e + 1
			continue
		}
		start, end := e, e+1
		for start > i && isWord(s[start-1]) {
			start--
		}
		for end < len(s) && isWord(s[end]) {
			end++
		}
		word := trimPunct(s[start:end])
		if len(word) >= minEntropyWord && (loose || letterAndDigit(word) && keyLike(word)) {
			fn(word)
		}
		if end-start >= minIdent { // no shorter word holds an identifier that long
			identifiers(s[start:end], fn)
		}
		i = end
	}
}

// identifiers calls fn with each identifier of at least minIdent bytes in
// word.
func identifiers(word string, fn func(string)) {
	for i := 0; i < len(word); {
		if !isIdent(word[i]) || word[i] >= '0' && word[i] <= '9' {
			i++
			continue
		}
		j := i
		for j < len(word) && isIdent(word[j]) {
			j++
		}
		if j-i >= minIdent {
			fn(word[i:j])
		}
		i = j
	}
}

// isIdent: the bytes of an identifier.
func isIdent(c byte) bool { return byteKinds[c]&identByte != 0 }

// isWord: the bytes of a key, a token or a base64 or URL-safe blob.
func isWord(c byte) bool { return byteKinds[c]&wordByte != 0 }

// isQuote: the bytes that open a quoted string (quoted).
func isQuote(c byte) bool { return byteKinds[c]&quoteByte != 0 }

// byteKinds says of each byte whether it is one of an identifier, of a
// word or a quote: a gathering asks it of every byte it cuts, twice or
// more, and chains of comparisons were 45% of the cutting's time
// (BenchmarkCut, with words too short to hold an identifier no longer
// searched for one: 180-218 -> 332-367 MB/s).
var byteKinds = func() (t [256]uint8) {
	for c := range t {
		b := byte(c)
		if b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' {
			t[c] |= identByte | wordByte
		}
		if strings.IndexByte("-+/=.~:", b) >= 0 {
			t[c] |= wordByte
		}
		if strings.IndexByte("\"'`", b) >= 0 {
			t[c] |= quoteByte
		}
	}
	return t
}()

const (
	identByte uint8 = 1 << iota
	wordByte
	quoteByte
)

// distinctive reports whether v, a value or a quoted string, looks like data
// (a digit, a symbol, mixed case) or is long, rather than being a short word.
func distinctive(v string, least int) bool {
	if len(v) < least || len(v) > maxFingerprint || strings.TrimSpace(v) != v {
		return false
	}
	var digit, upper, lower, symbol bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c != ' ':
			symbol = true
		}
	}
	return digit || symbol || upper && lower || len(v) >= 2*least
}

func alnums(s string, least int) bool {
	n := 0
	for i := 0; i < len(s) && n < least; i++ {
		if c := s[i]; c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 {
			n++
		}
	}
	return n >= least
}

func letterAndDigit(s string) bool {
	var letter, digit bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		}
	}
	return letter && digit
}

// keyLike reports whether s's Shannon entropy is minEntropy bits per byte
// or more: whether its bytes are spread like a key's. It sums c·log2(c)
// over the counts c of its distinct bytes from a table (log2(n) − that sum
// / n is the entropy), and only for a figure within a hair of minEntropy
// does it take entropy, the sum in bits of each byte's share, to the bit
// as ever. For every long word of every withheld and readable text, the
// loop over all 256 byte values with a logarithm for each present one was
// 0.39 of the 10.9 CPU-s of BenchmarkFirstCount (BenchmarkEntropy: see
// the commit).
func keyLike(s string) bool {
	var counts [256]uint32
	var seen [4]uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		counts[c]++
		seen[c>>6] |= 1 << (c & 63)
	}
	if bits.OnesCount64(seen[0])+bits.OnesCount64(seen[1])+bits.OnesCount64(seen[2])+bits.OnesCount64(seen[3]) < 8 {
		return false // at most log2(7) = 2.81 bits
	}
	sum := 0.0
	for k, w := range seen {
		for ; w != 0; w &= w - 1 {
			sum += xlog2x(counts[k<<6|bits.TrailingZeros64(w)])
		}
	}
	n := float64(len(s))
	h := log2Count(uint32(len(s))) - sum/n
	switch {
	case h >= minEntropy+1e-9:
		return true
	case h < minEntropy-1e-9:
		return false
	}
	return entropy(s) >= minEntropy
}

// xlog2xTable holds c·log2(c) for the counts a word of up to 255 bytes has.
var xlog2xTable = func() (t [256]float64) {
	for c := 1; c < len(t); c++ {
		t[c] = float64(c) * math.Log2(float64(c))
	}
	return t
}()

func xlog2x(c uint32) float64 {
	if c < uint32(len(xlog2xTable)) {
		return xlog2xTable[c]
	}
	return float64(c) * math.Log2(float64(c))
}

func log2Count(n uint32) float64 {
	if n < uint32(len(xlog2xTable)) && n > 1 {
		return xlog2xTable[n] / float64(n)
	}
	return math.Log2(float64(n))
}

// entropy is s's Shannon entropy in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// trimPunct takes the dots, colons and dashes off both ends of a word (a
// sentence's full stop, a label's colon).
func trimPunct(w string) string {
	for w != "" && (w[0] == '.' || w[0] == ':' || w[0] == '-') {
		w = w[1:]
	}
	for w != "" && (w[len(w)-1] == '.' || w[len(w)-1] == ':' || w[len(w)-1] == '-') {
		w = w[:len(w)-1]
	}
	return w
}
