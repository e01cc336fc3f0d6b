package session

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"
)

func codecSamples() map[string]*Message {
	at := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 5*3600+1800))
	return map[string]*Message{
		"zero":      {},
		"nil parts": {ID: "a", Role: RoleUser},
		"every field": {ID: "s-1", SessionID: "s", Seq: 1<<64 - 1, Role: RoleTool, Model: "m/x", Tool: "grep",
			ToolCallID: "c", IsError: true, CreatedAt: at,
			Parts: []Part{
				{Kind: PartToolResult, Text: "t", SourcePath: "/a", Redacted: true, CallID: "i", Name: "n",
					Input: json.RawMessage(` { "a" : [1, "<b>"] } `)},
				{Kind: PartText},
			},
			Meta: Meta{SourcePaths: []string{"/a", "/b"}, Note: "n"}},
		"escapes": {Role: "user", Parts: []Part{{Kind: PartText,
			Text: "q\"b\\s/\b\f\n\r\t\x00\x01\x1f\x7f <>& \u2028\u2029 é 😀 \xff\xfe bad \xed\xa0\x80 surrogate"}}},
		"note only":         {Role: "event", Meta: Meta{Note: "x"}},
		"empty sourcePaths": {Role: "tool", Meta: Meta{SourcePaths: []string{}}},
		"unicode keys text": {Role: "assistant", Model: "ü", Parts: []Part{{Kind: PartText, Text: strings.Repeat("line\twith\ttabs\n", 50)}}},
		// Short strings past what one record's room holds, one too long
		// for it, and kinds and roles of no known value.
		"many short strings": {ID: strings.Repeat("i", 60), SessionID: "s", Role: "robot", Model: strings.Repeat("m", 64),
			Tool: strings.Repeat("t", 65), ToolCallID: strings.Repeat("c", 50), Parts: []Part{
				{Kind: "image", CallID: strings.Repeat("k", 40), Name: "n\u00e9"},
				{Kind: PartToolCall, CallID: "x", Name: strings.Repeat("n", 30)}},
			Meta: Meta{SourcePaths: []string{"/b", "/a\tb"}}},
	}
}

// marshalMessage must write the bytes json.Marshal writes: records from
// either are the same records.
func TestMarshalMatchesEncodingJSON(t *testing.T) {
	for name, m := range codecSamples() {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshalMessage(m)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("marshalMessage:\n got %s (%v)\nwant %s", got, err, want)
			}
		})
	}
	// AppendMessageJSON writes the same after what b holds, reusing it.
	b := []byte("prefix,")
	for name, m := range codecSamples() {
		want, _ := json.Marshal(m)
		var err error
		if b, err = AppendMessageJSON(b[:len("prefix,")], m); err != nil || string(b) != "prefix,"+string(want) {
			t.Fatalf("AppendMessageJSON %s:\n got %s (%v)\nwant prefix,%s", name, b, err, want)
		}
	}
	if _, err := AppendMessageJSON(nil, &Message{Parts: []Part{{Input: json.RawMessage("{bad")}}}); err == nil {
		t.Fatal("AppendMessageJSON: invalid tool input accepted")
	}
	if _, err := marshalMessage(&Message{Parts: []Part{{Input: json.RawMessage("{bad")}}}); err == nil {
		t.Fatal("invalid tool input accepted")
	}
	if _, err := marshalMessage(&Message{CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Fatal("year 10000 accepted")
	}
}

// checkDecode asserts unmarshalMessage agrees with encoding/json on data and
// reports whether the fast path handled it.
func checkDecode(t *testing.T, data []byte) (fast bool) {
	t.Helper()
	var want, got, direct Message
	wantErr := json.Unmarshal(data, &want)
	gotErr := unmarshalMessage(data, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: error %v, encoding/json says %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
	}
	d := decoder{data: data}
	if d.message(&direct) != nil {
		return false
	}
	if wantErr != nil || !reflect.DeepEqual(direct, want) {
		t.Fatalf("%q: fast path accepted it as %#v; encoding/json: %#v, %v", data, direct, want, wantErr)
	}
	// Read as a record of its own session, or of another, it is the same.
	for _, sid := range []string{want.SessionID, "other"} {
		var of Message
		if err := unmarshalMessageOf(sid, data, &of); err != nil || !reflect.DeepEqual(of, want) {
			t.Fatalf("%q read as session %q's: %#v, %v; encoding/json: %#v", data, sid, of, err, want)
		}
	}
	// So it is decoded into a room shared with other records (ScanShared),
	// twice in a row: the second is not written over the first.
	room := new(sharedRoom)
	var first, second Message
	if err := unmarshalMessageIn(room, want.SessionID, data, &first); err != nil || !reflect.DeepEqual(first, want) {
		t.Fatalf("%q decoded in a shared room: %#v, %v; encoding/json: %#v", data, first, err, want)
	}
	if err := unmarshalMessageIn(room, want.SessionID, data, &second); err != nil || !reflect.DeepEqual(first, want) || !reflect.DeepEqual(second, want) {
		t.Fatalf("%q decoded twice in a shared room: %#v and %#v, %v; encoding/json: %#v", data, first, second, err, want)
	}
	return true
}

// A tool result's short strings share one allocation, its role, kind and
// session ID are not copied, and its source path is decoded once: the
// first count at a million messages decodes every message, most of them
// short, and the decoder's allocations were about a twelfth of its CPU.
func TestDecodeSharesStrings(t *testing.T) {
	m := &Message{ID: "0192f5c4-7e3a-7b1d-9c2e-5a4b3c2d1e0f", SessionID: "s-1", Seq: 7, Role: RoleTool, Tool: "read",
		ToolCallID: "toolu_01AbCdEfGhIjKlMnOpQrStUv", Model: "anthropic/claude-sonnet-4-5", CreatedAt: time.Now().UTC(),
		Parts: []Part{{Kind: PartToolResult, Text: "package x\n", SourcePath: "/src/x.go"}}}
	m.SyncSourcePaths()
	data, err := marshalMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	var got Message
	// The parts, the text, the path, the paths, the short strings.
	if n := testing.AllocsPerRun(100, func() { got = Message{}; _ = unmarshalMessageOf("s-1", data, &got) }); n > 5 {
		t.Errorf("a tool result's record decoded in %v allocations, want at most 5", n)
	}
	if !reflect.DeepEqual(&got, m) {
		t.Fatalf("decoded %#v, want %#v", got, *m)
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	if !same(got.Meta.SourcePaths[0], got.Parts[0].SourcePath) || !same(string(got.Role), string(RoleTool)) ||
		!same(string(got.Parts[0].Kind), string(PartToolResult)) {
		t.Error("the path, the role or the kind was copied")
	}
}

func TestUnmarshalMatchesEncodingJSON(t *testing.T) {
	for name, m := range codecSamples() {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			fast := checkDecode(t, b)
			// Records without invalid UTF-8 or U+FFFD substitutes must take the fast path.
			if !fast && name != "escapes" {
				t.Fatalf("a record in the stored shape missed the fast path: %s", b)
			}
		})
	}
	odd := []string{
		`{"ID":"x","role":"user"}`, // other case: encoding/json folds it
		`{"id":"a","id":"b"}`,
		`{"parts":[{"kind":"text","kind":"x"}]}`,
		`{"parts":null,"meta":null,"createdAt":null,"id":null}`,
		`{"meta":{"sourcePaths":null}}`,
		`{"meta":{"sourcePaths":[]}}`,
		`{"meta":{"sourcePaths":["/a",null]}}`,
		` { "id" : "a" , "seq" : 7 , "parts" : [ { "kind" : "text" } ] } `,
		`{"seq":01}`, `{"seq":-1}`, `{"seq":1e3}`, `{"seq":1.0}`, `{"seq":18446744073709551616}`, `{"seq":"1"}`,
		`{"isError":tru}`, `{"isError":null}`, `{"isError":1}`,
		`{"id":"\ud83d\ude00 \ud800 \u00e9 \u0000 \/"}`,
		`{"id":"bad \x01 control"}`, `{"id":"\xff"}`, `{"id":"\q"}`, `{"id":"\u12"}`,
		`{"createdAt":"2025-01-02T03:04:05Z"}`, `{"createdAt":"yesterday"}`, `{"createdAt":"2025-01-02T03:04:05\u005a"}`,
		`{"parts":[{"input":{"a":"}]"}},{"input":[1,{"b":null}]}]}`,
		`{"parts":[{"input":{"a":01}}]}`, `{"parts":[{"input":null}]}`, `{"parts":[{"input":"s"}]}`, `{"parts":[{"input":3}]}`,
		`{"unknown":1}`, `{"id":"a"} x`, `{"id":"a"`, `[]`, `null`, ``, `{`, `{"id":"a",}`, `{,}`,
		"\ufeff{}", `{"parts":[{}],"meta":{}}`, `{"parts":[],"meta":{"note":"n","sourcePaths":["/x"]}}`,
		// Keys as the store does not spell them: looked up, not matched.
		`{"seq":1,"id":"a"}`, `{"toolCallId":"c","tool":"t"}`, `{"tool":"t","toolCallId":"c","tool":"u"}`,
		`{"ids":"a","id":"b"}`, `{"id" :"a"}`, `{"i\u0064":"a"}`, `{"id"`, `{"id":`, `{"sessionId"}`,
	}
	for _, s := range odd {
		t.Run(s, func(t *testing.T) { checkDecode(t, []byte(s)) })
	}
}

// Every field of Message, Part and Meta must go through the codec: a field
// added to the schema but not to the codec fails here.
func TestCodecCoversEveryField(t *testing.T) {
	m := Message{}
	fillAll(reflect.ValueOf(&m).Elem())
	want, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalMessage(&m)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("marshalMessage misses a field:\n got %s\nwant %s", got, want)
	}
	if !checkDecode(t, want) {
		t.Fatalf("fast decoder misses a field: %s", want)
	}
}

// fillAll sets every field reachable from v to a non-zero value.
func fillAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC)))
			return
		}
		for i := range v.NumField() {
			fillAll(v.Field(i))
		}
	case reflect.String:
		v.SetString("x" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Uint64:
		v.SetUint(42)
	case reflect.Int:
		v.SetInt(7)
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.SetBytes([]byte(`{"k":"v"}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillAll(v.Index(i))
		}
	default:
		panic("fillAll: add a case for " + v.Kind().String())
	}
}

// FuzzUnmarshalMessage: on any input, the codec agrees with encoding/json,
// and whatever the fast path accepts, encoding/json reads the same way.
func FuzzUnmarshalMessage(f *testing.F) {
	for _, m := range codecSamples() {
		b, _ := json.Marshal(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
		checkHeaderDecode(t, data)
	})
}

// FuzzMarshalMessage: for any texts, marshalMessage writes json.Marshal's
// bytes and the record reads back as the message.
func FuzzMarshalMessage(f *testing.F) {
	f.Add("read", "1\tpackage a\n", "/src/a.go", "note", uint64(3))
	f.Add("<&>", "\x00\xff\u2028\"\\", "/é", "", uint64(0))
	f.Fuzz(func(t *testing.T, tool, text, path, note string, seq uint64) {
		m := &Message{ID: tool + text, Seq: seq, Role: Role(tool), Tool: tool, Model: note,
			Parts: []Part{{Kind: PartKind(tool), Text: text, SourcePath: path, Name: note}},
			Meta:  Meta{SourcePaths: []string{path}, Note: note}}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalMessage(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("marshalMessage:\n got %s (%v)\nwant %s", got, err, want)
		}
		checkDecode(t, got)
	})
}

// checkHeaderDecode asserts unmarshalHeader agrees with encoding/json on
// data and reports whether the fast path handled it.
func checkHeaderDecode(t *testing.T, data []byte) (fast bool) {
	t.Helper()
	var want, got, direct Header
	wantErr := json.Unmarshal(data, &want)
	gotErr := unmarshalHeader(data, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: error %v, encoding/json says %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
	}
	d := decoder{data: data}
	if d.header(&direct) != nil {
		return false
	}
	if wantErr != nil || !reflect.DeepEqual(direct, want) {
		t.Fatalf("%q: fast path accepted it as %#v; encoding/json: %#v, %v", data, direct, want, wantErr)
	}
	return true
}

func TestHeaderDecodeMatchesEncodingJSON(t *testing.T) {
	var full Header
	fillAll(reflect.ValueOf(&full).Elem())
	samples := []Header{{}, full, {ID: "a", Title: "tab\there <b> \u2028 ✓", Count: 1<<64 - 1,
		CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("", -3600))}}
	for _, h := range samples {
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if !checkHeaderDecode(t, b) {
			t.Fatalf("a header in the stored shape missed the fast path: %s", b)
		}
	}
	for _, s := range []string{`{"id":"a","messages":-1}`, `{"ID":"a"}`, `{"title":null}`, `{"id":"a","id":"b"}`,
		`{"updatedAt":"bad"}`, `{"id":"a"}]`, `{"messages":1.5}`, `{"extra":true}`} {
		checkHeaderDecode(t, []byte(s))
	}
}

// special8 and the plain table say the same thing, a word and a byte at a
// time: appendString uses one for the body of a string and the other for
// its tail.
func TestSpecial8AgreesWithPlain(t *testing.T) {
	for c := range 256 {
		want := c >= utf8.RuneSelf || !plain[c]
		for pos := range 8 {
			word := uint64('a') * ones
			word = word&^(0xff<<(8*pos)) | uint64(c)<<(8*pos)
			m := special8(word)
			if got := m != 0 && bits.TrailingZeros64(m)/8 == pos; got != want {
				t.Errorf("byte %#x at %d: special8 flags it %v, plain says %v", c, pos, got, want)
			}
		}
	}
}

// A search result's paths are one allocation however many there are (they
// were grown by append, one allocation a doubling), and none of their own
// in a read's shared room.
func TestDecodePathsOnce(t *testing.T) {
	m := &Message{ID: "0192f5c4-7e3a-7b1d-9c2e-5a4b3c2d1e0f", SessionID: "s-1", Seq: 7, Role: RoleTool, Tool: "grep",
		CreatedAt: time.Now().UTC(), Parts: []Part{
			{Kind: PartToolResult, Text: "a.go:3:x", SourcePath: "/src/a.go"},
			{Kind: PartToolResult, Text: "b.go:9:y", SourcePath: "/src/b.go"},
			{Kind: PartToolResult, Text: "c.go:1:z", SourcePath: "/src/c.go"}}}
	m.SyncSourcePaths()
	data, err := marshalMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	var got Message
	// The short strings, the parts, three texts, three paths, the paths' slice.
	if n := testing.AllocsPerRun(100, func() { got = Message{}; _ = unmarshalMessageOf("s-1", data, &got) }); n > 9 {
		t.Errorf("a three-file search result decoded in %v allocations, want at most 9", n)
	}
	room := new(sharedRoom)
	// In a shared room: the three paths alone (a path never shares it).
	if n := testing.AllocsPerRun(100, func() { got = Message{}; _ = unmarshalMessageIn(room, "s-1", data, &got) }); n > 3.5 {
		t.Errorf("in a shared room, %v allocations, want the three paths'", n)
	}
	if !reflect.DeepEqual(&got, m) {
		t.Fatalf("decoded %#v, want %#v", got, *m)
	}
}
