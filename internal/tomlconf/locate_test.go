package tomlconf

import (
	"strings"
	"testing"
)

// lp builds a locator path: "a.b" parts, with "#N" for array element N.
func lp(s string) []string {
	var parts []string
	for _, part := range strings.Split(s, ".") {
		if strings.HasPrefix(part, "#") {
			part = elemPrefix + part[1:]
		}
		parts = append(parts, part)
	}
	return parts
}

// wantLines checks the line of each path.
func wantLines(t *testing.T, l *Locator, want map[string]int) {
	t.Helper()
	for path, w := range want {
		if got := l.Line(lp(path)...); got != w {
			t.Errorf("Line(%s) = %d, want %d", path, got, w)
		}
	}
}

func TestLocatorLines(t *testing.T) {
	doc := strings.Join([]string{
		`# [tiers.fake] in a comment = "no"`, // 1
		`default_tier = "a" # trailing`,      // 2
		`tiers . "my tier" . label = 'x'`,    // 3
		`[tiers.a]`,                          // 4
		`label = "has ] and # and = inside"`, // 5
		`read = [ # comment [`,               // 6
		`  "/one", '/two\',`,                 // 7
		`  """multi`,                         // 8
		`line""", "/four",`,                  // 9
		`  '''x`,                             // 10
		`'''`,                                // 11
		`]`,                                  // 12
		`deny = ["/d0", { k = 1 }, [1, 2]]`,  // 13
		`[ tiers . 'b' ]`,                    // 14
		`"quoted key" = 1`,                   // 15
		`[[models]]`,                         // 16
		`match = "x"`,                        // 17
		`[[models]]`,                         // 18
		``,                                   // 19
		`tier = "t"`,                         // 20
		`[models.sub]`,                       // 21
		`k = 1979-05-27 07:32:00`,            // 22
		`after = 1`,                          // 23
		`[inline]`,                           // 24
		`t = { a = { b = [`,                  // 25
		`  "e0",`,                            // 26
		`  "e1" ] }, c = 2 }`,                // 27
	}, "\n")
	l := Locate([]byte(doc))
	wantLines(t, l, map[string]int{
		"default_tier":        2,
		"tiers":               3,
		"tiers.my tier":       3,
		"tiers.my tier.label": 3,
		"tiers.a":             4,
		"tiers.a.label":       5,
		"tiers.a.read":        6,
		"tiers.a.read.#0":     7,
		"tiers.a.read.#1":     7,
		"tiers.a.read.#2":     8,
		"tiers.a.read.#3":     9,
		"tiers.a.read.#4":     10,
		"tiers.a.deny.#0":     13,
		"tiers.a.deny.#1":     13,
		"tiers.a.deny.#1.k":   13,
		"tiers.a.deny.#2.#1":  13,
		"tiers.b":             14,
		"tiers.b.quoted key":  15,
		"models":              16,
		"models.#0":           16,
		"models.#0.match":     17,
		"models.#1":           18,
		"models.#1.tier":      20,
		"models.#1.sub":       21,
		"models.#1.sub.k":     22,
		"models.#1.sub.after": 23,
		"inline.t.a.b.#1":     27,
		"inline.t.c":          27,
		"tiers.a.read.#9":     6, // no such element: its array
		"tiers.nowhere.label": 3, // nearest recorded parent
		"nothing.at.all":      0,
	})
	if l.Has(lp("tiers.fake")...) {
		t.Error("a header inside a comment was recorded")
	}
	if got := l.Defs("tiers", "a"); len(got) != 1 || got[0] != 4 {
		t.Errorf("Defs(tiers.a) = %v", got)
	}
}

func TestLocatorDefs(t *testing.T) {
	tests := []struct {
		doc  string
		name string
		want []int
	}{
		{"[tiers.a]\nlabel='x'\n[tiers.a]\n", "a", []int{1, 3}},
		{"[tiers]\na = {label='x'}\nb = {}\na = {}\n", "a", []int{2, 4}},
		{"tiers.a.label = 'x'\ntiers.a.read = []\n[tiers.a]\n", "a", []int{1, 3}},
		{"[tiers]\na.label = 'x'\na.read = []\n", "a", []int{2}},
		{"[tiers.a]\nlabel='x'\n[tiers.a.sub]\n", "a", []int{1}},
		{"tiers = { a = { label = 'x' } }\n", "a", []int{1}},
	}
	for _, tc := range tests {
		got := Locate([]byte(tc.doc)).Defs("tiers", tc.name)
		if len(got) != len(tc.want) {
			t.Errorf("%q: Defs = %v, want %v", tc.doc, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: Defs = %v, want %v", tc.doc, got, tc.want)
			}
		}
	}
}

// TestLocatorOnGarbage: the locator also runs on input that failed to parse
// (to spot a table defined twice); it must finish on anything.
func TestLocatorOnGarbage(t *testing.T) {
	for _, doc := range []string{
		"", "[", "[[", "]]", "=", "a =", "a = [", "a = {", `a = "`, `a = """`, "a = '''",
		strings.Repeat("[", 100000), strings.Repeat("{", 100000), "a = " + strings.Repeat("[", 100000),
		"a = " + strings.Repeat("{b=", 10000), "\x00\x01", "k = 1979-05-27 ", "[a.\"b]\n",
	} {
		Locate([]byte(doc))
	}
}

// The lines inside a multi-line array or string belong to the value, even
// when they look like a header or a key: what follows keeps its own line.
// (A locator that reads line by line puts "tiers.b" on line 4 and "k" on 5.)
func TestLocatorAfterMultiLineValues(t *testing.T) {
	doc := strings.Join([]string{
		`[tiers.a]`,   // 1
		`read = [`,    // 2
		`  """`,       // 3
		`[tiers.b]`,   // 4
		`k = 1""",`,   // 5
		`  '''`,       // 6
		`deny = 2`,    // 7
		`''',`,        // 8
		`]`,           // 9
		`deny = [`,    // 10
		`  ["x = 1",`, // 11
		`   "y"],`,    // 12
		`]`,           // 13
		`k = 3`,       // 14
		`[tiers.b]`,   // 15
		`k = 4`,       // 16
	}, "\n")
	l := Locate([]byte(doc))
	wantLines(t, l, map[string]int{
		"tiers.a.read.#0":    3,
		"tiers.a.read.#1":    6,
		"tiers.a.deny":       10,
		"tiers.a.deny.#0.#1": 12,
		"tiers.a.k":          14,
		"tiers.b":            15,
		"tiers.b.k":          16,
	})
	if l.Has(lp("tiers.a.read.#0.k")...) || len(l.Defs("tiers", "b")) != 1 {
		t.Errorf("text in a string was taken for keys: Defs(tiers.b) = %v", l.Defs("tiers", "b"))
	}
}

// A byte order mark, which the decoder passes over, does not hide line 1.
func TestLocatorByteOrderMark(t *testing.T) {
	l := Locate([]byte("\uFEFF[providers.x]\nbase_url = 'u'\n"))
	if l.Line("providers", "x") != 1 || l.Line("providers", "x", "base_url") != 2 {
		t.Errorf("lines %d, %d; want 1, 2", l.Line("providers", "x"), l.Line("providers", "x", "base_url"))
	}
}

func TestLocatorKeys(t *testing.T) {
	doc := "z = 1\n[tiers.b]\nx.y = 1\n[tiers]\na = {}\n'c.d' = 2\n[tiers.b.sub]\n[[models]]\nm = 1\n"
	l := Locate([]byte(doc))
	for path, want := range map[string]string{
		"":        "z tiers models",
		"tiers":   "b a c.d",
		"tiers.b": "x sub",
		"nowhere": "",
	} {
		var parts []string
		if path != "" {
			parts = lp(path)
		}
		if got := strings.Join(l.Keys(parts...), " "); got != want {
			t.Errorf("Keys(%s) = %q, want %q", path, got, want)
		}
	}
}
