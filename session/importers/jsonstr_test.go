package importers

import (
	"encoding/json"
	"testing"
)

func TestJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "tab\there\nnew \"quoted\" back\\slash /", "émoji 😀 \u2028 \x01 ctrl", "→ arrow", "\xed\xa0\xbd"} {
		raw, _ := json.Marshal(s)
		got, ok := JSONString(raw)
		var want string
		json.Unmarshal(raw, &want)
		if !ok || got != want {
			t.Errorf("%q: got %q %v, want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{`"\ud83d\ude00"`, `"\u00e9\u0041"`, `"a\/b"`, `"\ud800x"`,
		"\"\xff\"", "\"a\xed\xa0\xbdb\\n\"", "\"\xe2\x82\"", "\"\xef\xbf\xbd\xc0\xaf\""} { // bytes that are not UTF-8 become U+FFFD each
		got, ok := JSONString([]byte(raw))
		var want string
		json.Unmarshal([]byte(raw), &want)
		if !ok || got != want {
			t.Errorf("%s: got %q %v, want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{`x`, `"abc`, `"\q"`, `"\u12"`, `[1]`} {
		if _, ok := JSONString([]byte(raw)); ok {
			t.Errorf("%s accepted", raw)
		}
	}
}

// FuzzJSONString: JSONString decodes every literal encoding/json decodes
// to the same string, bytes that are not UTF-8 included.
func FuzzJSONString(f *testing.F) {
	f.Add(`"a\nb"`)
	f.Add(`"\ud83d\ude00"`)
	f.Add("\"\xff\\n\xed\xa0\xbd\"")
	f.Fuzz(func(t *testing.T, raw string) {
		var want string
		if json.Unmarshal([]byte(raw), &want) != nil {
			JSONString([]byte(raw)) // must not panic
			return
		}
		got, ok := JSONString([]byte(raw))
		if !ok || got != want {
			t.Fatalf("%q: got %q %v, want %q", raw, got, ok, want)
		}
	})
}
