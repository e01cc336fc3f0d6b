package importers

import (
	"encoding/json"
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
