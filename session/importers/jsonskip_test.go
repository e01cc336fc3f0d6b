package importers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCutMember(t *testing.T) {
	for _, tc := range []struct {
		in, rest, val string
		ok            bool
	}{
		{`{"a":1,"t":{"x":"}\"{"},"b":2}`, `{"a":1,"b":2}`, `{"x":"}\"{"}`, true},
		{`{"t":[1,{"y":"]"}] , "b":2}`, `{ "b":2}`, `[1,{"y":"]"}]`, true},
		{`{"a":"t","t" : "last\\"}`, `{"a":"t"}`, `"last\\"`, true},
		{`{"t":null}`, `{}`, `null`, true},
		{` { "a" : true } `, ` { "a" : true } `, ``, true},
		{`{"a":"unterminated}`, `{"a":"unterminated}`, ``, false},
		{`[1,2]`, `[1,2]`, ``, false},
	} {
		rest, val, ok := CutMember([]byte(tc.in), "t")
		if string(rest) != tc.rest || string(val) != tc.val || ok != tc.ok {
			t.Errorf("%s: rest %s val %s ok %v", tc.in, rest, val, ok)
		}
		if ok && !json.Valid(rest) && json.Valid([]byte(tc.in)) {
			t.Errorf("%s: cutting left invalid JSON %s", tc.in, rest)
		}
	}
}

// skipCases are texts the readers must judge as encoding/json does.
var skipCases = []string{
	`{"a":"\q"}`, `{"a":"\u12g4"}`, `{"a":"\u12"}`, `{"a":"x}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", "{\"a\":\xff}",
	`{"a":[1,]}`, `{"a":{"b":1,}}`, `{"a":1,}`, `{,}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":.5}`, `{"a":1e}`, `{"a":1e+}`,
	`{"a":-0.5e-7}`, `{"a":+1}`, `{"a":tru}`, `{"a":truex}`, `{"a":nul}`, `{"a":null}`, `{"a" 1}`, `{"a":1 "b":2}`,
	`{"a":[}`, `{"a":[1}]}`, `{"a":1}x`, `{"a":1} `, ` {} `, `{}x`, `{"a\"b":"c\\"}`, `{"a":{"b":[true,false,null,"",{}]}}`,
	`{"a":"` + "\t" + `"}`, `["a",1]`, `"a"`, ``, `{`, `{"a"`, `{"a":`, `{"a":1`,
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
}

// TestReadersCheckAsEncodingJSON: Members and SkipValue accept exactly what
// encoding/json accepts.
func TestReadersCheckAsEncodingJSON(t *testing.T) {
	for _, s := range skipCases {
		checkReaders(t, []byte(s))
	}
}

// checkReaders fails t unless the readers judge b as encoding/json does:
// SkipValue and a whole walk of Members accept b exactly when it is valid
// (and, for Members, an object), ValidMembers then visits the same members,
// and cutting a member leaves a text that is valid exactly when b is.
func checkReaders(t *testing.T, b []byte) {
	t.Helper()
	valid := json.Valid(b)
	end, ok := SkipValue(b, skipSpace(b, 0))
	if got := ok && skipSpace(b, end) == len(b); got != valid {
		t.Fatalf("SkipValue accepts %q: %v, encoding/json %v", b, got, valid)
	}
	type member struct{ k, v string }
	var all, valids []member
	ok = Members(b, func(k, v []byte, _, _ int) bool {
		if !json.Valid(v) {
			t.Fatalf("Members passed %q, not valid, from %q", v, b)
		}
		all = append(all, member{string(k), string(v)})
		return true
	})
	isObject := valid && b[skipSpace(b, 0)] == '{'
	if ok != isObject {
		t.Fatalf("Members accepts %q: %v, encoding/json %v", b, ok, isObject)
	}
	if !ok {
		return
	}
	ValidMembers(b, func(k, v []byte) bool {
		valids = append(valids, member{string(k), string(v)})
		return true
	})
	if !reflect.DeepEqual(all, valids) {
		t.Fatalf("%q: Members read %q, ValidMembers %q", b, all, valids)
	}
}

// FuzzCutMember: whatever CutMember cuts from a text, the rest is valid
// exactly when the text is (decodeLine relies on that: encoding/json only
// sees the rest), and it never fails on a valid object. Checks the readers
// (checkReaders) on every input too.
func FuzzCutMember(f *testing.F) {
	for _, s := range skipCases {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"b":1,"t":{"x":"}\"{"},"c":2}`))
	f.Add([]byte(`{"t":[1,{"y":"]"}] , "b":2}`))
	f.Add([]byte(`{"T":1,"t":2}`))
	f.Add([]byte(`{"\u0074":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkReaders(t, b)
		valid := json.Valid(b)
		rest, val, ok := CutMember(b, "t")
		if !ok {
			if valid && b[skipSpace(b, 0)] == '{' {
				t.Fatalf("CutMember failed valid %q", b)
			}
			return
		}
		if val == nil {
			return
		}
		if !json.Valid(val) || json.Valid(rest) != valid {
			t.Fatalf("%q cut to %q and %q", b, rest, val)
		}
	})
}
