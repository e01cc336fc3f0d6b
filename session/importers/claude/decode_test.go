package claude

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"
)

// decodeLineSlow is decodeLine without the fast path for toolUseResult:
// encoding/json decodes everything.
func decodeLineSlow(raw []byte, l *line) bool {
	var withTUR struct {
		line
		TUR json.RawMessage `json:"toolUseResult"`
	}
	err := json.Unmarshal(raw, &withTUR)
	var ute *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &ute) {
		return false
	}
	*l = withTUR.line
	var t toolUseResult
	if len(withTUR.TUR) > 0 && withTUR.TUR[0] == '{' && json.Unmarshal(withTUR.TUR, &t) == nil {
		l.ToolUseResult = &t
	}
	return true
}

// FuzzDecodeLine: the fast path decodes every line encoding/json reads
// without error exactly as encoding/json would. Seeds: the fixtures' lines
// and testdata/fuzz/FuzzDecodeLine.
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
			f.Add(append([]byte(nil), sc.Bytes()...))
		}
		fh.Close()
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast line
		okFast := decodeLine(raw, &fast)
		var strict line
		if json.Unmarshal(raw, &strict) != nil || !utf8.Valid(raw) {
			return // lenient paths may differ; they only must not panic
		}
		var slow line
		decodeLineSlow(raw, &slow)
		if !okFast {
			t.Fatalf("fast path rejected a line encoding/json reads: %q", raw)
		}
		if !reflect.DeepEqual(fast.ToolUseResult, slow.ToolUseResult) {
			t.Fatalf("toolUseResult %+v, encoding/json %+v, line %q", fast.ToolUseResult, slow.ToolUseResult, raw)
		}
		fast.ToolUseResult, slow.ToolUseResult = nil, nil
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("line decoded as %+v, encoding/json %+v", fast, slow)
		}
	})
}
