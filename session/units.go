package session

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Unit is one piece of a part's text that may be sent: a text or tool
// result part's Text (Key -1), or the Key-th JSON string, counted from 0,
// keys and values alike, of a tool call's Input. Credential and
// derived-content spans are found and replaced in units, so that a
// replacement inside a tool call's input keeps the JSON valid.
type Unit struct {
	Key  int
	Text string
	// Lo and Hi are where the unit sits in the part: in Text, or in Input
	// with its quotes.
	Lo, Hi int
}

// EachUnit calls fn with each unit of p, in order. A tool call's units are
// its input's strings; it has no others.
func (p *Part) EachUnit(fn func(Unit)) {
	if p.Kind != PartToolCall {
		if p.Text != "" {
			fn(Unit{Key: -1, Text: p.Text, Lo: 0, Hi: len(p.Text)})
		}
		return
	}
	eachString(p.Input, fn)
}

// eachString calls fn with each string of valid JSON in, in order. Outside
// strings, a valid JSON text has no '"': each one opens a string, which ends
// at the next '"' that is not escaped.
func eachString(in []byte, fn func(Unit)) {
	k := 0
	for i := 0; i < len(in); {
		q := bytes.IndexByte(in[i:], '"')
		if q < 0 {
			return
		}
		lo := i + q
		end, escaped := stringEnd(in, lo+1)
		if end < 0 {
			return // not valid JSON: Validate keeps such input out of the store
		}
		raw := in[lo : end+1]
		var s string
		if !escaped {
			s = string(raw[1 : len(raw)-1])
		} else if json.Unmarshal(raw, &s) != nil {
			return
		}
		fn(Unit{Key: k, Text: s, Lo: lo, Hi: end + 1})
		k++
		i = end + 1
	}
}

// stringEnd returns the index of the '"' that closes the JSON string whose
// contents start at i, and whether it holds an escape; -1 if none does.
func stringEnd(in []byte, i int) (int, bool) {
	escaped := false
	for i < len(in) {
		j := bytes.IndexAny(in[i:], `"\`)
		if j < 0 {
			return -1, escaped
		}
		i += j
		if in[i] == '"' {
			return i, escaped
		}
		escaped = true
		i += 2 // the backslash and the byte it escapes (\uXXXX's digits are plain)
	}
	return -1, escaped
}

// IsInputKey reports whether u, a unit of the tool call input in, is one
// of its objects' keys rather than a value.
func IsInputKey(in []byte, u Unit) bool {
	for i := u.Hi; i < len(in); i++ {
		switch in[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// ReplaceUnits returns in with the JSON strings whose keys repl names
// replaced by the given texts, each encoded as a JSON string; everything
// else is kept byte for byte, so the result is valid JSON if in was.
func ReplaceUnits(in json.RawMessage, repl map[int]string) json.RawMessage {
	if len(repl) == 0 {
		return in
	}
	out := make([]byte, 0, len(in)+64*len(repl))
	at := 0
	eachString(in, func(u Unit) {
		s, ok := repl[u.Key]
		if !ok {
			return
		}
		out = append(out, in[at:u.Lo]...)
		out = appendJSONString(out, s)
		at = u.Hi
	})
	return append(out, in[at:]...)
}

// appendJSONString appends s as a JSON string, escaping only what JSON
// requires (quote, backslash, control characters), as a model's tool call
// input would hold it.
func appendJSONString(b []byte, s string) []byte {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' }) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
