package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
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
	return appendMessage(make([]byte, 0, n+n/4), m) // room for escapes: tabs and newlines double
}

// encodeRecord is m's record in the store: marshalMessage, refused when it
// is longer than a value can be. Badger refuses a value longer than a value
// log file, with an error that prints the start of the value in hex (a line
// of 4 KB, from an import of a transcript with a 70 MiB command output); the
// error here says how big the message is and which part made it so.
func encodeRecord(m *Message) ([]byte, error) {
	v, err := marshalMessage(m)
	if err != nil || len(v) <= maxRecord {
		return v, err
	}
	big := 0
	for i := range m.Parts {
		if len(m.Parts[i].Text) > len(m.Parts[big].Text) {
			big = i
		}
	}
	what := "message"
	if len(m.Parts) > 0 {
		what = fmt.Sprintf("its %s part of %s", m.Parts[big].Kind, mib(uint64(len(m.Parts[big].Text))))
	}
	return nil, fmt.Errorf("the message is %s as stored (%s), more than the %s one message can hold: it cannot be stored", mib(uint64(len(v))), what, mib(maxRecord))
}

// maxRecord is the longest record a message may have: Badger's bound on a
// value, the size of a value log file.
const maxRecord = valueLogFileSize

// AppendMessageJSON appends to b the bytes json.Marshal(m) returns, written
// by the store's own encoder, several times faster: for commands that write
// many messages as JSON (scrim show).
func AppendMessageJSON(b []byte, m *Message) ([]byte, error) { return appendMessage(b, m) }

func appendMessage(b []byte, m *Message) ([]byte, error) {
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
	open := len(b)
	if len(m.Meta.SourcePaths) > 0 {
		b = append(b, `"sourcePaths":[`...)
		for i, p := range m.Meta.SourcePaths {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p)
		}
		b = append(b, ']')
	}
	b = appendMeta(b, open, `"note":`, m.Meta.Note)
	b = appendMeta(b, open, `"unknownSource":`, m.Meta.UnknownSource)
	if m.Meta.NoFiles {
		if len(b) > open {
			b = append(b, ',')
		}
		b = append(b, `"noFiles":true`...)
	}
	b = append(b, `},"createdAt":`...)
	t, err := m.CreatedAt.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = append(b, t...)
	return append(b, '}'), nil
}

// appendMeta appends a meta member, after a comma unless it is the first
// (the object's members start at open).
func appendMeta(b []byte, open int, key, val string) []byte {
	if val == "" {
		return b
	}
	if len(b) > open {
		b = append(b, ',')
	}
	b = append(b, key...)
	return appendString(b, val)
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
	if len(p.Filtered) > 0 {
		// Never stored (package redact's notes on what it sends), but a
		// Message encodes the same whatever holds it.
		f, err := json.Marshal(p.Filtered)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"filtered":`...), f...)
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

// appendString quotes s exactly as encoding/json does, copying plain runs
// whole. Runs are found eight bytes at a time: stored text is mostly code,
// whose runs between tabs and newlines are long enough for that to pay.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start, i := 0, 0
	for {
		for i+8 <= len(s) {
			if m := special8(load8(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(s) && s[i] < utf8.RuneSelf && plain[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r != utf8.RuneError || size > 1) && r != '\u2028' && r != '\u2029' {
				i += size // valid UTF-8 is copied with the run around it
				continue
			}
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			}
			i += size
			start = i
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
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// load8 reads s[i:i+8] as a little-endian word (one load once compiled).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special8 flags (in its high bit) each byte of x that appendString must look
// at: non-ASCII, a control character, or one of "\<>&. Borrows can flag a
// byte above a real match, never below one, so the lowest flag is exact.
func special8(x uint64) uint64 {
	q, bs, lt, gt, amp := x^(ones*'"'), x^(ones*'\\'), x^(ones*'<'), x^(ones*'>'), x^(ones*'&')
	return (x | (x-ones*0x20)&^x |
		(q-ones)&^q | (bs-ones)&^bs | (lt-ones)&^lt | (gt-ones)&^gt | (amp-ones)&^amp) & highs
}

// unmarshalMessage decodes a stored message record into m (which it resets).
func unmarshalMessage(data []byte, m *Message) error { return unmarshalMessageOf("", data, m) }

// unmarshalMessageOf is unmarshalMessage of a record expected to be of
// session sid.
func unmarshalMessageOf(sid string, data []byte, m *Message) error {
	return unmarshalMessageIn(nil, sid, data, m)
}

// unmarshalMessageIn is unmarshalMessageOf with the record's texts, short
// strings and parts cut from room, if not nil (sharedRoom).
func unmarshalMessageIn(room *sharedRoom, sid string, data []byte, m *Message) error {
	d := decoder{data: data, sid: sid, shared: room}
	if err := d.message(m); err == nil {
		return nil
	}
	*m = Message{}
	return json.Unmarshal(data, m)
}

// unmarshalHeader decodes a stored session header into h (which it resets).
func unmarshalHeader(data []byte, h *Header) error {
	d := decoder{data: data}
	if err := d.header(h); err == nil {
		return nil
	}
	*h = Header{}
	return json.Unmarshal(data, h)
}

// AppendJSONString appends s quoted as the store writes every string it
// keeps. The store escapes one character at a time, so text that contains s
// is stored as bytes that contain s's escaped form: search looks for that in
// the stored bytes before it decodes a record.
func AppendJSONString(b []byte, s string) []byte { return appendString(b, s) }
