package claude

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeBlocksSlow is decodeBlocks with encoding/json reading every array.
func decodeBlocksSlow(raw json.RawMessage) ([]block, bool) {
	if len(raw) > 0 && raw[0] == '[' {
		var bs []block
		if err := json.Unmarshal(raw, &bs); err != nil {
			return nil, false
		}
		return bs, true
	}
	return decodeBlocks(raw)
}

var blockCases = []string{
	`[{"type":"text","text":"a\nb"}]`,
	`[{"type":"text","text":"a"},{"type":"text","text":"\u00e9\ud83d\ude00"}]`,
	`[{"text":"first","type":"text"}]`,
	`[{"type":"text","text":"a","text":"b"}]`,
	`[{"type":"text"}]`,
	`[{"text":"no type"}]`,
	`[{"TYPE":"text","Text":"case"}]`,
	`[{"t\u0079pe":"text","text":"escaped key"}]`,
	`[{"type":"text","text":null}]`,
	`[{"type":"text","text":1}]`,
	`[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]`,
	`[{"type":"text","text":"a"},{"type":"image","source":{"media_type":"image/png"}}]`,
	`[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]`,
	`[{}]`, `[]`, `[1]`, `["s"]`, `[null]`, ` [ { "type" : "text" , "text" : "spaced" } ] `,
	"[{\"type\":\"text\",\"text\":\"bad \xff utf-8\"}]",
}

// The fast reader of text blocks gives what encoding/json gives.
func TestTextBlocksAsEncodingJSON(t *testing.T) {
	for _, c := range blockCases {
		sameBlocks(t, []byte(c))
	}
}

func sameBlocks(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		return // decodeBlocks only sees content encoding/json checked
	}
	got, ok := decodeBlocks(raw)
	want, wok := decodeBlocksSlow(raw)
	if ok != wok || !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: %+v %v; encoding/json %+v %v", raw, got, ok, want, wok)
	}
}

func FuzzTextBlocks(f *testing.F) {
	for _, c := range blockCases {
		f.Add([]byte(c))
	}
	f.Fuzz(sameBlocks)
}
