package session

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// Messages are stored as JSON (DESIGN.md), in exactly the bytes
// encoding/json writes. Loading a long session is mostly decoding, and
// encoding/json spends most of that validating and reflecting, so messages
// have a codec for their own shape: marshalMessage writes what json.Marshal
// writes, and unmarshalMessage reads that shape in one pass, handing anything
// else (unknown or repeated keys, nulls, other spellings, invalid UTF-8,
// surrogate escapes) to encoding/json. The results never differ from
// encoding/json's; codec_test.go and its fuzz test hold that.

// errSlow sends a record to encoding/json.
var errSlow = errors.New("not in the fast decoder's shape")

// marshalMessage is json.Marshal(m), faster.
func marshalMessage(m *Message) ([]byte, error) {
	n := 160
	for i := range m.Parts {
		n += len(m.Parts[i].Text) + len(m.Parts[i].SourcePath) + 64
	}
	b := make([]byte, 0, n+n/16)
	b = append(b, `{"id":`...)
	b = appendString(b, m.ID)
	b = append(b, `,"sessionId":`...)
	b = appendString(b, m.SessionID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, m.Seq, 10)
	b = append(b, `,"role":`...)
	b = appendString(b, string(m.Role))
	b = appendField(b, `,"model":`, m.Model)
	b = appendField(b, `,"tool":`, m.Tool)
	b = appendField(b, `,"toolCallId":`, m.ToolCallID)
	if m.IsError {
		b = append(b, `,"isError":true`...)
	}
	b = append(b, `,"parts":`...)
	if m.Parts == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range m.Parts {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendPart(b, &m.Parts[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"meta":{`...)
	if len(m.Meta.SourcePaths) > 0 {
		b = append(b, `"sourcePaths":[`...)
		for i, p := range m.Meta.SourcePaths {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p)
		}
		b = append(b, ']')
		if m.Meta.Note != "" {
			b = append(b, ',')
		}
	}
	if m.Meta.Note != "" {
		b = append(b, `"note":`...)
		b = appendString(b, m.Meta.Note)
	}
	b = append(b, `},"createdAt":`...)
	t, err := m.CreatedAt.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = append(b, t...)
	return append(b, '}'), nil
}

func appendPart(b []byte, p *Part) ([]byte, error) {
	b = append(b, `{"kind":`...)
	b = appendString(b, string(p.Kind))
	b = appendField(b, `,"text":`, p.Text)
	b = appendField(b, `,"sourcePath":`, p.SourcePath)
	if p.Redacted {
		b = append(b, `,"redacted":true`...)
	}
	b = appendField(b, `,"callId":`, p.CallID)
	b = appendField(b, `,"name":`, p.Name)
	if len(p.Input) > 0 {
		// Rare and small: encoding/json compacts and checks it.
		in, err := json.Marshal(p.Input)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"input":`...), in...)
	}
	return append(b, '}'), nil
}

// appendField appends an omitempty string field.
func appendField(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes encoding/json copies as they are: not a control
// character, quote, backslash, or one of <>& (escaped for HTML safety).
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// Word-at-a-time tests (SWAR): each sets the high bit of a byte lane where
// the condition may hold, and is exact about whether any lane holds.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

func hasZero(x uint64) uint64 { return (x - lanes01) & ^x & lanes80 }

func hasByte(x uint64, c byte) uint64 { return hasZero(x ^ (lanes01 * uint64(c))) }

// hasLess is for n <= 0x80.
func hasLess(x uint64, n byte) uint64 { return (x - lanes01*uint64(n)) & ^x & lanes80 }

func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// plain8 reports whether all 8 bytes at s[i:] are copied unescaped.
func plain8(s string, i int) bool {
	x := load8(s, i)
	return (x|hasLess(x, 0x20)|hasByte(x, '"')|hasByte(x, '\\')|hasByte(x, '<')|hasByte(x, '>')|hasByte(x, '&'))&lanes80 == 0
}

// appendString quotes s exactly as encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plain8(s, i) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// unmarshalMessage decodes a stored message record into m (which it resets).
func unmarshalMessage(data []byte, m *Message) error {
	d := decoder{data: data}
	if err := d.message(m); err == nil {
		return nil
	}
	*m = Message{}
	return json.Unmarshal(data, m)
}
