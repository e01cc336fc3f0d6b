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
	for _, raw := range []string{`"\ud83d\ude00"`, `"\u00e9\u0041"`, `"a\/b"`, `"\ud800x"`} {
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

func FuzzJSONString(f *testing.F) {
	f.Add(`"a\nb"`)
	f.Add(`"\ud83d\ude00"`)
	f.Fuzz(func(t *testing.T, raw string) {
		var want string
		if json.Unmarshal([]byte(raw), &want) != nil {
			JSONString([]byte(raw)) // must not panic
			return
		}
		got, ok := JSONString([]byte(raw))
		if ok && got != want && json.Valid([]byte(raw)) && validUTF8(raw) {
			t.Fatalf("%q: got %q, want %q", raw, got, want)
		}
	})
}

func validUTF8(s string) bool {
	for _, r := range s {
		if r == 0xFFFD {
			return false
		}
	}
	return true
}
