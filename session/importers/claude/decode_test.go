package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// sameAsEncodingJSON fails t unless decodeLine reads raw as unmarshalLine
// (decodeLine without the fast path: encoding/json reads all of it) does:
// both accept it or both reject it, and when they accept it they decode
// the same line.
func sameAsEncodingJSON(t *testing.T, raw []byte) {
	t.Helper()
	var fast, slow line
	okFast, okSlow := decodeLine(raw, &fast), unmarshalLine(raw, &slow)
	if okFast != okSlow {
		t.Fatalf("fast path ok=%v, encoding/json ok=%v: %q", okFast, okSlow, raw)
	}
	if !okFast {
		return
	}
	if !reflect.DeepEqual(fast.ToolUseResult, slow.ToolUseResult) {
		t.Fatalf("toolUseResult %+v, encoding/json %+v, line %q", fast.ToolUseResult, slow.ToolUseResult, raw)
	}
	fast.ToolUseResult, slow.ToolUseResult = nil, nil
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("line decoded as %+v, encoding/json %+v: %q", fast, slow, raw)
	}
}

// bigResult is a user line whose one tool_result block has content and,
// after it, extra members.
func bigResult(content, extra string) string {
	return `{"type":"user","uuid":"u1","message":{"role":"user","content":[{"type":"text","text":"hi"},{"type":"tool_result","tool_use_id":"t1","content":` + content + extra + `}]}}`
}

// nested is a toolUseResult holding n arrays one inside the other: with the
// line and toolUseResult around them, n+2 containers open at once.
func nested(n int) string {
	return `{"type":"user","toolUseResult":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
}

// decodeCases are lines the fast path must read as encoding/json does; ok is
// what encoding/json says (checked too). The rejected ones were all taken
// in by the fast path once, which skipped toolUseResult without checking it.
var decodeCases = []struct {
	name, line string
	ok         bool
}{
	// A tool_result's content of bigContent bytes or more is kept from
	// encoding/json (withoutContents): it must come back the same, and
	// anything unusual around it must be read the usual way.
	{"big array content", bigResult(`[{"type":"text","text":"`+strings.Repeat("x", 300)+`"}]`, ""), true},
	{"big string content", bigResult(`"`+strings.Repeat(`y\n`, 200)+`"`, ""), true},
	{"big content with a bad escape", bigResult(`"`+strings.Repeat("y", 300)+`\q"`, ""), false},
	{"big content not closed", bigResult(`[{"type":"text","text":"`+strings.Repeat("y", 300)+`"}`, ""), false},
	{"big content twice in a block", bigResult(`"`+strings.Repeat("a", 300)+`"`, `,"Content":"second"`), true},
	{"big content, a type error beside it", bigResult(`"`+strings.Repeat("a", 300)+`"`, `,"is_error":"yes"`), true},
	{"big content, message twice", `{"type":"user","message":{"role":"user"},` + bigResult(`"`+strings.Repeat("a", 300)+`"`, "")[1:], true},
	{"big content, content twice in message", `{"type":"user","message":{"content":"x","role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"` + strings.Repeat("a", 300) + `"}]}}`, true},
	{"bad escape", `{"type":"user","toolUseResult":{"file":{"filePath":"/a\q"}}}`, false},
	{"bad \\u escape", `{"type":"user","toolUseResult":{"filePath":"/a\u12g4"}}`, false},
	{"short \\u escape", `{"type":"user","toolUseResult":{"filePath":"/a\u12"}}`, false},
	{"bad escape in a key", `{"type":"user","toolUseResult":{"file\Path":"/a"}}`, false},
	{"unterminated string", `{"type":"user","toolUseResult":{"stdout":"ok}, "stderr":"}}`, false},
	{"control character in a string", "{\"type\":\"user\",\"toolUseResult\":{\"stdout\":\"a\x01b\"}}", false},
	{"raw newline in a string", "{\"type\":\"user\",\"toolUseResult\":{\"stdout\":\"a\nb\"}}", false},
	{"trailing comma in an array", `{"type":"user","toolUseResult":{"filenames":["/a","/b",]}}`, false},
	{"trailing comma in an object", `{"type":"user","toolUseResult":{"mode":"content",}}`, false},
	{"number 01", `{"type":"user","toolUseResult":{"numLines":01}}`, false},
	{"number 1.", `{"type":"user","toolUseResult":{"numLines":1.}}`, false},
	{"number -", `{"type":"user","toolUseResult":{"numLines":-}}`, false},
	{"number 1e", `{"type":"user","toolUseResult":{"numLines":1e}}`, false},
	{"number +1", `{"type":"user","toolUseResult":{"numLines":+1}}`, false},
	{"cut value 01", `{"type":"user","toolUseResult":01}`, false},
	{"cut value 01 that leaves valid JSON", `{"n":1,"toolUseResult":01}`, false},
	{"bad literal", `{"type":"user","toolUseResult":{"interrupted":tru}}`, false},
	{"literal too long", `{"type":"user","toolUseResult":{"interrupted":truex}}`, false},
	{"missing colon", `{"type":"user","toolUseResult":{"stdout" "ok"}}`, false},
	{"missing comma", `{"type":"user","toolUseResult":{"stdout":"ok" "stderr":""}}`, false},
	{"unbalanced brackets", `{"type":"user","toolUseResult":{"filenames":["/a"}]}`, false},
	{"stray byte after the value", `{"type":"user","toolUseResult":{}x}`, false},
	{"trailing comma after the cut member", `{"toolUseResult":{},}`, false},
	{"trailing comma and space after the cut member", `{"toolUseResult":{} , }`, false},
	{"byte that is not UTF-8 outside a string", "{\"type\":\"user\",\"toolUseResult\":{\"n\":\xff1}}", false},
	{"nesting beyond encoding/json's limit", nested(9999), false},
	{"garbage after the line", `{"toolUseResult":{}} x`, false},

	{"nesting at encoding/json's limit", nested(9998), true},
	{"byte that is not UTF-8 in a string", "{\"type\":\"user\",\"toolUseResult\":{\"filePath\":\"/a\xff\xed\xa0\x80b\"}}", true},
	{"escaped key", `{"type":"user","toolUseResult":{"file\u0050ath":"/a","m\u006fde":"content"}}`, true},
	{"key in another case", `{"type":"user","toolUseResult":{"FILEPATH":"/a","File":{"filepath":"/b"}}}`, true},
	{"key folded by Unicode", `{"type":"user","toolUseResult":{"filenameſ":["/a"],"bac\u212agroundTaskId":"b1","ﬁlePath":"/b"}}`, true},
	{"toolUseResult key in another case", `{"type":"user","ToolUseResult":{"filePath":"/a"}}`, true},
	{"toolUseResult twice", `{"toolUseResult":{"mode":"a","file":{"filePath":"/a"}},"type":"user","toolUseResult":{"filePath":"/b","file":{}}}`, true},
	{"toolUseResult in two cases", `{"TOOLUSERESULT":{"mode":"a"},"toolUseResult":{"mode":"b","filePath":"/b"}}`, true},
	{"toolUseResult then null", `{"toolUseResult":{"mode":"a"},"toolUseResult":null}`, true},
	{"null fields", `{"type":"user","toolUseResult":{"filePath":"/a","filePath":null,"file":{"filePath":"/b"},"file":null,"filenames":null}}`, true},
	{"fields of the wrong type", `{"type":"user","toolUseResult":{"filePath":1,"mode":{},"file":"x","filenames":["/a",2]}}`, true},
	{"toolUseResult a string", `{"type":"user","toolUseResult":"Error: file not found"}`, true},
	{"toolUseResult an array", `{"type":"user","toolUseResult":[{"filePath":"/a"}]}`, true},
	{"escapes and surrogates", `{"type":"user","toolUseResult":{"filePath":"/a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\udc00"}}`, true},
	{"white space everywhere", " { \"toolUseResult\" : { \"filePath\" : \"/a\" , \"filenames\" : [ \"/b\" , \"/c\" ] } , \"type\" : \"user\" } \t\r\n", true},
	{"numbers", `{"type":"user","toolUseResult":{"n":[0,-0,1.5,-1e10,2E+3,4e-2,1e999]}}`, true},
	{"empty containers", `{"type":"user","toolUseResult":{"a":{},"b":[],"c":""}}`, true},
}

// TestDecodeLineAgreesWithEncodingJSON: the fast path accepts exactly the
// lines encoding/json accepts, and reads those as it does.
func TestDecodeLineAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		t.Run(c.name, func(t *testing.T) {
			if json.Valid([]byte(c.line)) != c.ok {
				t.Fatalf("encoding/json says valid=%v, the case says %v", !c.ok, c.ok)
			}
			var l line
			if decodeLine([]byte(c.line), &l) != c.ok {
				t.Fatalf("decodeLine ok=%v, want %v", !c.ok, c.ok)
			}
			sameAsEncodingJSON(t, []byte(c.line))
		})
	}
}

// A line the fast path rejects is skipped and counted like any malformed
// line, and the import goes on.
func TestMalformedToolUseResultSkipped(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	lines := `{"type":"user","sessionId":"s","uuid":"u1","message":{"role":"user","content":"read /a"}}
{"type":"assistant","sessionId":"s","uuid":"a1","message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}}]}}
{"type":"user","sessionId":"s","uuid":"r1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"secret"}]},"toolUseResult":{"file":{"filePath":"/a\q","content":"secret"}}}
{"type":"user","sessionId":"s","uuid":"u2","message":{"role":"user","content":"thanks"}}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	res, err := importers.Import(st, Agent, file, New)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 1 || res.Messages != 3 || !strings.Contains(res.String(), "3 messages, 0 tool results tagged, 0 unknown-source results, 1 skipped line") {
		t.Fatalf("%s", res)
	}
	msgs, _, _ := st.Messages(res.SessionID)
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"assistant model=anthropic/claude-sonnet-4-5 parts=[call:t1:Read] paths=nil note=no result recorded for tool call t1 (Read)",
		"user parts=[text] paths=nil",
	})
}

// mutations returns variants of a valid line that break (or, for a byte
// that is not UTF-8 inside a string, keep) it inside its toolUseResult,
// the part the fast path skips: each kind of error a skipper can miss.
func mutations(raw []byte) [][]byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || len(m["toolUseResult"]) < 2 {
		return nil
	}
	at := bytes.Index(raw, m["toolUseResult"])
	end := at + len(m["toolUseResult"])
	str := at + bytes.IndexByte(raw[at:end], '"') // a string's opening quote
	closing := at + bytes.LastIndexByte(raw[at:end], '"')
	edit := func(i, drop int, insert string) []byte {
		return append(append(append([]byte(nil), raw[:i]...), insert...), raw[i+drop:]...)
	}
	var out [][]byte
	if str >= at {
		out = append(out,
			edit(str+1, 0, `\q`),     // bad escape
			edit(str+1, 0, `\u12g4`), // bad \u escape
			edit(str+1, 0, "\x01"),   // control character
			edit(str+1, 0, "\xff"),   // not UTF-8, inside a string: encoding/json reads it as U+FFFD
			edit(closing, 1, ""),     // unterminated string
		)
	}
	if raw[end-1] == '}' || raw[end-1] == ']' {
		out = append(out, edit(end-1, 0, ","), edit(at+1, 0, `"n":01,`), edit(at+1, 0, "\xff"))
	}
	return append(out, edit(end, 0, "x"), edit(end, 0, " tru"))
}

// FuzzDecodeLine: the fast path accepts exactly the lines encoding/json
// accepts, malformed ones included, and reads each it accepts as
// encoding/json does. Seeds: the fixtures' lines, their mutations
// (mutations), decodeCases and testdata/fuzz/FuzzDecodeLine.
func FuzzDecodeLine(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			raw := append([]byte(nil), sc.Bytes()...)
			f.Add(raw)
			for _, m := range mutations(raw) {
				f.Add(m)
			}
		}
		fh.Close()
	}
	for _, c := range decodeCases {
		f.Add([]byte(c.line))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameAsEncodingJSON(t, raw) })
}
