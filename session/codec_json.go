package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
	"time"
	"unicode/utf8"
	"unsafe"
)

// decoder is the one-pass reader of the shape marshalMessage writes. Every
// method returns errSlow for input it does not handle; unmarshalMessage then
// asks encoding/json, so this code need only be right, never complete.
type decoder struct {
	data []byte
	i    int
	// sid is the session the record is expected to be of: its sessionId
	// is decoded as sid, not copied.
	sid string
	// small is room for the record's short strings (short).
	small []byte
	// shared, if not nil, is room the records of one read share
	// (Store.ScanShared): texts, short strings and parts are cut from it.
	shared *sharedRoom
}

// sharedRoom is memory the records of one read share: their texts and
// short strings are cut from chunks of bytes, their parts from chunks of
// parts, where each was an allocation of its own (a tool result decoded
// was five). For reads whose messages are let go together (a count's
// step, a gathering's piece): a string or parts kept past that keep their
// chunk. Source paths never come from it (a count keeps its paths'
// decisions for the whole count).
type sharedRoom struct {
	bytes []byte // cut up to len; what follows is free
	parts []Part
	strs  []string // the slices of a message's paths (not the paths)
}

// Chunk sizes of a sharedRoom; a text, a run of parts or a message's paths
// past a quarter of one are given their own.
const (
	sharedBytes = 32 << 10
	sharedParts = 128
	sharedPaths = 128 // paths' slices, a string header each
)

// take is room for up to n bytes: a slice of length 0 and capacity n,
// for the caller to append to and then keep.
func (r *sharedRoom) take(n int) []byte {
	if n > sharedBytes/4 {
		return make([]byte, 0, n)
	}
	if cap(r.bytes)-len(r.bytes) < n {
		r.bytes = make([]byte, 0, sharedBytes)
	}
	k := len(r.bytes)
	return r.bytes[k : k : k+n]
}

// keep marks b, filled from the last take, as used.
func (r *sharedRoom) keep(b []byte) {
	if k := len(r.bytes); len(b) > 0 && k < cap(r.bytes) && &r.bytes[:k+1][k] == &b[0] {
		r.bytes = r.bytes[:k+len(b)]
	}
}

// string is b copied into the room.
func (r *sharedRoom) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	c := append(r.take(len(b)), b...)
	r.keep(c)
	return unsafe.String(&c[0], len(c))
}

// stringsOf is ss copied into the room.
func (r *sharedRoom) stringsOf(ss []string) []string {
	n := len(ss)
	if n > sharedPaths/4 {
		return slices.Clone(ss)
	}
	if cap(r.strs)-len(r.strs) < n {
		r.strs = make([]string, 0, sharedPaths)
	}
	k := len(r.strs)
	r.strs = append(r.strs, ss...)
	return r.strs[k : k+n : k+n]
}

// partsOf is room for n parts.
func (r *sharedRoom) partsOf(n int) []Part {
	if n > sharedParts/4 {
		return make([]Part, n)
	}
	if cap(r.parts)-len(r.parts) < n {
		r.parts = make([]Part, 0, sharedParts)
	}
	k := len(r.parts)
	r.parts = r.parts[:k+n]
	return r.parts[k : k+n : k+n]
}

func (d *decoder) ws() {
	if d.i < len(d.data) && d.data[d.i] > ' ' {
		return // the stored shape has no white space: the common case
	}
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips white space and consumes c.
func (d *decoder) next(c byte) bool {
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

// keySet is the keys an object of one shape may have, in the order
// marshalMessage writes them, and each as it is written there before its
// value: "key":.
type keySet struct {
	names  []string
	quoted []string
}

// objectKeys is the keySet of names.
func objectKeys(names ...string) *keySet {
	ks := &keySet{names: names}
	for _, n := range names {
		ks.quoted = append(ks.quoted, `"`+n+`":`)
	}
	return ks
}

// object reads {"key": value, ...}, calling field for each key with the
// decoder at the value. keys lists the known keys; an unknown or repeated
// key goes to encoding/json (it folds case and merges repeats).
func (d *decoder) object(keys *keySet, field func(k int) error) error {
	if !d.next('{') {
		return errSlow
	}
	if d.next('}') {
		return nil
	}
	var seen uint32
	k := -1
	for {
		d.ws()
		// Keys come in the order marshalMessage writes them, some
		// left out: the ones after the last are looked for as they
		// are spelled there, then any key in any other spelling. (Each
		// read a byte at a time and then looked up, a record of
		// BenchmarkDecodeRoom took 10,857 instructions; so, 9,786.)
		if k = d.key(keys, k+1); k < 0 {
			name, err := d.rawString()
			if err != nil {
				return err
			}
			if k = keys.index(name); k < 0 || !d.next(':') {
				return errSlow
			}
		}
		if seen&(1<<k) != 0 {
			return errSlow
		}
		seen |= 1 << k
		d.ws()
		if err := field(k); err != nil {
			return err
		}
		if d.next(',') {
			continue
		}
		if d.next('}') {
			return nil
		}
		return errSlow
	}
}

// key consumes the first of keys from from on that the input holds next as
// marshalMessage spells it ("key":), and returns its index; -1: none.
func (d *decoder) key(keys *keySet, from int) int {
	rest := d.data[d.i:]
	for i := from; i < len(keys.quoted); i++ {
		if q := keys.quoted[i]; len(rest) >= len(q) && string(rest[:len(q)]) == q {
			d.i += len(q)
			return i
		}
	}
	return -1
}

// index is the index of key b among keys; -1: none.
func (keys *keySet) index(b []byte) int {
	for i, n := range keys.names {
		if n == string(b) {
			return i
		}
	}
	return -1
}

// paths reads a message's source paths. One that a part names too (most
// tool results read one file) is decoded as the part's: the same string.
func (d *decoder) paths(parts []Part) ([]string, error) {
	if !d.next('[') {
		return nil, errSlow
	}
	if d.next(']') {
		return []string{}, nil
	}
	// Into room on the stack, then copied to a slice of their number (or
	// the read's shared room): grown by append from none, a search
	// result's three paths took three allocations.
	var room [8]string
	out := room[:0]
	next := 0 // the part after the last one a path was found in
	for {
		d.ws()
		s, err := d.path(parts, &next)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		if d.next(',') {
			continue
		}
		if d.next(']') {
			if d.shared != nil {
				return d.shared.stringsOf(out), nil
			}
			return slices.Clone(out), nil
		}
		return nil, errSlow
	}
}

// path reads a source path, looked for among parts from *next on, then
// before: a message's paths follow its parts' order (SyncSourcePaths), so
// each is found at once, where a search from the first part was quadratic
// in a search result's many files.
func (d *decoder) path(parts []Part, next *int) (string, error) {
	start := d.i
	b, err := d.rawString()
	if err != nil {
		d.i = start
		return d.str()
	}
	for k := range parts {
		i := (*next + k) % len(parts)
		if parts[i].SourcePath == string(b) {
			*next = i + 1
			return parts[i].SourcePath, nil
		}
	}
	return string(b), nil
}

// known reads a string that is most often one of vals, and returns that
// one of vals rather than a copy.
func (d *decoder) known(vals []string) (string, error) {
	start := d.i
	if b, err := d.rawString(); err == nil {
		for _, v := range vals {
			if v == string(b) {
				return v, nil
			}
		}
	}
	d.i = start
	return d.short()
}

// smallRoom is the room a record's short strings share.
const smallRoom = 128

// short reads a string that is short and belongs to the record (its ID, a
// tool's name, a call's ID). Such strings share one allocation of
// smallRoom bytes (a tool result's three were three allocations), which
// each of them keeps alive; none is ever written again. A longer string,
// or one with escapes or past ASCII, is a string of its own.
//
// A tool result's record took twelve allocations; with what known and
// paths spare too, five (TestDecodeSharesStrings).
func (d *decoder) short() (string, error) {
	start := d.i
	b, err := d.rawString()
	if err != nil {
		d.i = start
		return d.str()
	}
	if d.shared != nil {
		return d.shared.string(b), nil
	}
	if len(b) == 0 || len(b) > smallRoom/2 {
		return string(b), nil
	}
	if cap(d.small)-len(d.small) < len(b) {
		d.small = make([]byte, 0, smallRoom)
	}
	n := len(d.small)
	d.small = append(d.small, b...)
	return unsafe.String(&d.small[n], len(b)), nil
}

// time hands the quoted value to time.Time's own UnmarshalJSON, as
// encoding/json does.
func (d *decoder) timeInto(t *time.Time) error {
	start := d.i
	if _, err := d.rawString(); err != nil {
		return err
	}
	return t.UnmarshalJSON(d.data[start:d.i])
}

func (d *decoder) bool() (bool, error) {
	rest := d.data[d.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		d.i += 4
		return true, nil
	case len(rest) >= 5 && string(rest[:5]) == "false":
		d.i += 5
		return false, nil
	}
	return false, errSlow
}

// uint reads a JSON integer without sign, fraction or exponent.
func (d *decoder) uint() (uint64, error) {
	start := d.i
	var n uint64
	for d.i < len(d.data) && '0' <= d.data[d.i] && d.data[d.i] <= '9' {
		c := uint64(d.data[d.i] - '0')
		if n > (1<<64-1-c)/10 {
			return 0, errSlow
		}
		n = n*10 + c
		d.i++
	}
	digits := d.i - start
	if digits == 0 || digits > 1 && d.data[start] == '0' {
		return 0, errSlow
	}
	if d.i < len(d.data) {
		switch d.data[d.i] {
		case '.', 'e', 'E':
			return 0, errSlow
		}
	}
	return n, nil
}

// rawString reads a string that needs no unescaping and returns its bytes
// (aliasing the input).
func (d *decoder) rawString() ([]byte, error) {
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return nil, errSlow
	}
	start := d.i + 1
	for i := start; i < len(d.data); i++ {
		if c := d.data[i]; notRaw[c] {
			if c != '"' {
				return nil, errSlow
			}
			d.i = i + 1
			return d.data[start:i], nil
		}
	}
	return nil, errSlow
}

// notRaw marks the bytes that end a string rawString reads (a quote) or
// send it to str: a backslash, a control character, a byte past ASCII.
var notRaw = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

// str reads a string value. A string without escapes is copied once; one
// with escapes is decoded into a buffer sized by a first pass, which then
// becomes the string without another copy.
func (d *decoder) str() (string, error) { return d.strIn(nil) }

// text is str for a part's text: cut from the read's shared room, if any.
func (d *decoder) text() (string, error) { return d.strIn(d.shared) }

// strIn is str, its bytes in room if not nil.
func (d *decoder) strIn(room *sharedRoom) (string, error) {
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return "", errSlow
	}
	start := d.i + 1
	i := start + plainRun(d.data[start:])
	if i >= len(d.data) {
		return "", errSlow
	}
	switch d.data[i] {
	case '"':
		s := d.data[start:i]
		if !utf8.Valid(s) {
			return "", errSlow // encoding/json substitutes U+FFFD
		}
		d.i = i + 1
		if room != nil {
			return room.string(s), nil
		}
		return string(s), nil
	case '\\':
		return d.escaped(start, room)
	}
	return "", errSlow // a control character
}

// escaped decodes the string starting at data[start] that holds escapes.
func (d *decoder) escaped(start int, room *sharedRoom) (string, error) {
	end := start
	for {
		k := bytes.IndexByte(d.data[end:], '"')
		if k < 0 {
			return "", errSlow
		}
		end += k
		odd := false // an odd run of backslashes escapes the quote
		for j := end - 1; j >= start && d.data[j] == '\\'; j-- {
			odd = !odd
		}
		if !odd {
			break
		}
		end++
	}
	var buf []byte // escapes only shrink: end-start is room enough
	if room != nil {
		buf = room.take(end - start)
	} else {
		buf = make([]byte, 0, end-start)
	}
	for i := start; i < end; {
		j := i + plainRun(d.data[i:end])
		buf = append(buf, d.data[i:j]...)
		if i = j; i >= end {
			break
		}
		if d.data[i] != '\\' {
			return "", errSlow // a control character
		}
		var ok bool
		if buf, i, ok = unescape(buf, d.data[:end], i); !ok {
			return "", errSlow
		}
	}
	// What escapes write is whole runes, so the string is valid UTF-8
	// exactly when its runs of plain bytes are.
	if !utf8.Valid(buf) {
		return "", errSlow
	}
	d.i = end + 1
	if len(buf) == 0 {
		return "", nil
	}
	if room != nil {
		room.keep(buf)
	}
	// buf is never written again: the string may own it.
	return unsafe.String(&buf[0], len(buf)), nil
}

// plainRun is how many bytes b starts with that a JSON string holds as they
// are: not a quote, a backslash or a control character (bytes past ASCII
// are plain here; the caller checks they are UTF-8). It looks at 8 bytes a
// step, where a loop a byte a step decoded a rune at every non-ASCII byte:
// BenchmarkUnmarshalMessage 243–248 → 269–291 MB/s (decoding was 2.4 s of
// the 18 s of CPU of the TUI's first count at a million messages).
func plainRun(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, bs := x^('"'*ones), x^('\\'*ones)
		// A high bit marks each byte below 0x20, equal to a quote or
		// to a backslash; a borrow can mark a byte past the first
		// such, never one before it.
		m := (x-0x20*ones)&^x&highs | (q-ones)&^q&highs | (bs-ones)&^bs&highs
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// unescape decodes the escape at data[i] (a backslash) onto buf.
func unescape(buf, data []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(data) {
		return buf, i, false
	}
	switch c := data[i+1]; c {
	case '"', '\\', '/':
		return append(buf, c), i + 2, true
	case 'b':
		return append(buf, '\b'), i + 2, true
	case 'f':
		return append(buf, '\f'), i + 2, true
	case 'n':
		return append(buf, '\n'), i + 2, true
	case 'r':
		return append(buf, '\r'), i + 2, true
	case 't':
		return append(buf, '\t'), i + 2, true
	case 'u':
		if i+6 > len(data) {
			return buf, i, false
		}
		var r rune
		for _, h := range data[i+2 : i+6] {
			switch {
			case '0' <= h && h <= '9':
				r = r<<4 | rune(h-'0')
			case 'a' <= h && h <= 'f':
				r = r<<4 | rune(h-'a'+10)
			case 'A' <= h && h <= 'F':
				r = r<<4 | rune(h-'A'+10)
			default:
				return buf, i, false
			}
		}
		if 0xD800 <= r && r <= 0xDFFF {
			return buf, i, false // surrogate pairs: encoding/json's rules
		}
		return utf8.AppendRune(buf, r), i + 6, true
	}
	return buf, i, false
}

// raw reads an object or array and returns a copy of its bytes, as
// json.RawMessage's UnmarshalJSON does, after encoding/json has checked it.
func (d *decoder) raw() (json.RawMessage, error) {
	start := d.i
	depth := 0
	for d.i < len(d.data) {
		switch c := d.data[d.i]; c {
		case '"':
			if _, err := d.skipString(); err != nil {
				return nil, err
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return nil, errSlow
			}
		case ',':
			if depth == 0 {
				return nil, errSlow // a bare scalar: rare, left to encoding/json
			}
		}
		d.i++
		if depth == 0 && (d.data[d.i-1] == '}' || d.data[d.i-1] == ']') {
			return d.checkRaw(start)
		}
	}
	return nil, errSlow
}

func (d *decoder) checkRaw(start int) (json.RawMessage, error) {
	v := d.data[start:d.i]
	if len(v) == 0 || v[0] == 'n' || !json.Valid(v) {
		return nil, errSlow // null and anything odd: encoding/json decides
	}
	return append(json.RawMessage(nil), v...), nil
}

func (d *decoder) skipString() (int, error) {
	for i := d.i + 1; i < len(d.data); i++ {
		switch d.data[i] {
		case '"':
			d.i = i + 1
			return i, nil
		case '\\':
			i++
		}
	}
	return 0, errSlow
}
