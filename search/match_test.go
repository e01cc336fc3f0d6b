package search

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/scrim-dev/scrim/session"
)

// The test before decoding must never drop a record that matches: whatever
// the text and the query, if the decoded text matches, its stored bytes
// pass. The seeds hold what the store escapes and the letters whose other
// case is not ASCII.
func FuzzStoredBytesNeverMissAMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"API_KEY=sk-live", "api_key"},
		{"Kelvin: \u212a", "k"},
		{"long s: \u017f", "s"},
		{"\u212bngstr\u00f6m", "\u00e5"},
		{"<script>alert('x')</script>", "<script>"},
		{"tab\there \"quoted\" back\\slash", "\there \"q"},
		{"line\u2028sep", "\u2028"},
		{"ESC \x1b[31m red", "\x1b[31m"},
		{"bad \xff utf8", "bad"},
		{"ÉCOLE", "école"},
		{"straße", "STRASSE"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		m, err := newMatcher(query, false)
		if err != nil {
			return
		}
		stored := session.AppendJSONString(nil, text)
		var decoded string
		if err := json.Unmarshal(stored, &decoded); err != nil {
			t.Fatalf("the store's string does not decode: %v", err)
		}
		var buf []byte
		if m.re.MatchString(decoded) && !m.mayMatch(stored, &buf) {
			t.Fatalf("%q matches %q, but its stored bytes %q were dropped (needle %q)", decoded, query, stored, m.needle)
		}
	})
}

func TestSmartCase(t *testing.T) {
	for _, tc := range []struct {
		query, text string
		want        bool
	}{
		{"api_key", "API_KEY=1", true},
		{"API_KEY", "api_key=1", false},
		{"Api", "api", false},
		{"k", "\u212a", true}, // the Kelvin sign is a K
		{"a.b", "axb", false}, // literal, not a pattern
	} {
		m, err := newMatcher(tc.query, false)
		if err != nil {
			t.Fatal(err)
		}
		stored := session.AppendJSONString(nil, tc.text)
		var buf []byte
		if got := m.re.MatchString(tc.text); got != tc.want {
			t.Errorf("%q in %q: %v, want %v", tc.query, tc.text, got, tc.want)
		}
		if tc.want && !m.mayMatch(stored, &buf) {
			t.Errorf("%q in %q: stored bytes dropped", tc.query, tc.text)
		}
	}
	if _, err := newMatcher("(", true); !IsQueryError(err) {
		t.Fatalf("a bad regular expression: %v", err)
	} else if strings.Contains(err.Error(), "(?i)") {
		t.Errorf("the error quotes the smart case scrim put before the query: %v", err)
	}
}

func TestInputText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"file_path":"/a/b.go","limit":10}`, "/a/b.go"},
		{`{"command":"ls\nwc -l","env":{"K":"v"},"args":["x",{"y":"z"}],"n":null,"ok":true}`, "ls\nwc -l\nv\nx\nz"},
		{`["a","b"]`, "a\nb"},
		{`not json`, "not json"},
	} {
		if got := inputText(json.RawMessage(tc.in)); got != tc.want {
			t.Errorf("inputText(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// clipAround keeps the match inside what it returns, at rune boundaries.
func TestClipAround(t *testing.T) {
	line := strings.Repeat("é", 300) + "NEEDLE" + strings.Repeat("ü", 300)
	start := strings.Index(line, "NEEDLE")
	got, s, e := clipAround(line, start, start+6)
	if got[s:e] != "NEEDLE" || len(got) > 260 || !strings.HasPrefix(got, "é") {
		t.Fatalf("clip %d bytes, match %q", len(got), got[s:e])
	}
}

// BenchmarkMayMatch: the test before decoding on a 64 KiB read result (as
// Claude Code's Read writes it, an arrow on every line), exact and ignoring
// case. MB/s is of stored bytes.
func BenchmarkMayMatch(b *testing.B) {
	var text strings.Builder
	for i := 0; text.Len() < 64<<10; i++ {
		text.WriteString("    12→\tx := compute(\"/home/dev/proj08/pkg12/file12.go\", 12) // keep \"quotes\" and tabs\n")
	}
	stored := session.AppendJSONString(nil, text.String())
	// zq-no-match: its other cases are ASCII, searched as stored;
	// zq-no-such-text holds an s (ſ), folded first; ZQ-No-Such exact.
	for _, query := range []string{"zq-no-match", "zq-no-such-text", "ZQ-No-Such"} {
		b.Run(query, func(b *testing.B) {
			m, err := newMatcher(query, false)
			if err != nil {
				b.Fatal(err)
			}
			var buf []byte
			b.SetBytes(int64(len(stored)))
			for b.Loop() {
				if m.mayMatch(stored, &buf) {
					b.Fatal("matched")
				}
			}
		})
	}
}

// A literal query found byte by byte matches exactly where RE2 finds it:
// the same places, case folded the same (not for K, S and any non-ASCII
// query, which go to RE2 itself).
func FuzzLiteralFind(f *testing.F) {
	for _, s := range [][2]string{
		{"a deadline, DEADLINE, DeadLine", "deadline"},
		{"Deadline and deadline", "Deadline"},
		{"the \u212aelvin sign, kelvin, KELVIN", "kelvin"},
		{"long \u017f and s", "s"},
		{"aaaa", "aa"},
		{"bad \xff\xfe utf8 \xffx", "x"},
		{"ÅNGSTRÖM å", "å"},
		{"\u0130 dotted I, i, I", "i"},
		{"mixed {Case} [x] (y) 1.5*", "{case} [x]"},
		{"", "q"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		m, err := newMatcher(query, false)
		if err != nil {
			return // empty
		}
		got, want := m.find(text, -1), m.re.FindAllStringIndex(text, -1)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("find(%q, %q) = %v, RE2 %v (literal %q)", text, query, got, want, m.lit)
		}
		if n := len(want); n > 1 {
			if got := m.find(text, n-1); fmt.Sprint(got) != fmt.Sprint(want[:n-1]) {
				t.Fatalf("find(%q, %q, %d) = %v, want %v", text, query, n-1, got, want[:n-1])
			}
		}
	})
}

func TestLiteralFindTakesTheShortWay(t *testing.T) {
	for query, want := range map[string]struct {
		lit     string
		kelvinS bool
	}{"deadline": {"DEADLINE", false}, "Deadline": {"Deadline", false}, "a.b": {"A.B", false},
		"kelvin": {"KELVIN", true}, "secret": {"SECRET", true}, "å": {"", false}, "K": {"", false}} {
		m, err := newMatcher(query, false)
		if err != nil || m.lit != want.lit || m.kelvinS != want.kelvinS {
			t.Errorf("%q: literal %q (Kelvin or long s %v), want %q (%v) (%v)", query, m.lit, m.kelvinS, want.lit, want.kelvinS, err)
		}
	}
	if m, _ := newMatcher("dead.ine", true); m.lit != "" {
		t.Errorf("a regular expression taken as a literal: %q", m.lit)
	}
	// A text with the Kelvin sign or the long s goes to RE2 for a query
	// with a k or an s, and matches there.
	m, _ := newMatcher("kelvins", false)
	if got := m.find("Kelvinſ and KELVINS", -1); fmt.Sprint(got) != "[[0 10] [15 22]]" {
		t.Errorf("kelvins in a text with the Kelvin sign and the long s: %v", got)
	}
}

// The Kelvin sign and the long s are the only runes past ASCII that are
// the same letter as an ASCII one in another case: asciiLiteral's premise.
func TestOnlyKelvinAndLongS(t *testing.T) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf && f != '\u212a' && f != '\u017f' {
				t.Errorf("%q is %q in another case", r, f)
			}
		}
	}
}

// BenchmarkLiteralFind: a word in a 64 KiB tool result that holds it on
// every line, by hand and by RE2, ignoring case.
func BenchmarkLiteralFind(b *testing.B) {
	var text strings.Builder
	for text.Len() < 64<<10 {
		text.WriteString("\t\tif err := ctx.Err(); err != nil { return fmt.Errorf(\"deadline: %w\", err) }\n")
	}
	m, err := newMatcher("deadline", false)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("literal", func(b *testing.B) {
		b.SetBytes(int64(text.Len()))
		for b.Loop() {
			m.find(text.String(), -1)
		}
	})
	b.Run("re2", func(b *testing.B) {
		b.SetBytes(int64(text.Len()))
		for b.Loop() {
			m.re.FindAllStringIndex(text.String(), -1)
		}
	})
}
