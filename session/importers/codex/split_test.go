package codex

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// splitJSONOutputSlow is splitJSONOutput as it was written first, with
// json.Unmarshal reading the whole text.
func splitJSONOutputSlow(text string) (head, body string, ok bool) {
	if !strings.HasPrefix(text, `{"output":`) {
		return "", "", false
	}
	var o struct {
		Output   string `json:"output"`
		Metadata struct {
			ExitCode *int     `json:"exit_code"`
			Duration *float64 `json:"duration_seconds"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(text), &o) != nil {
		return "", "", false
	}
	var b strings.Builder
	if o.Metadata.ExitCode != nil {
		b.WriteString("Exit code: " + strconv.Itoa(*o.Metadata.ExitCode) + "\n")
	}
	if o.Metadata.Duration != nil {
		b.WriteString("Wall time: " + strconv.FormatFloat(*o.Metadata.Duration, 'f', -1, 64) + " seconds\n")
	}
	if b.Len() > 0 {
		b.WriteString("Output:\n")
	}
	return b.String(), o.Output, true
}

// splitCases are shell outputs in (or almost in) Codex's JSON form. The
// malformed ones were once taken apart although json.Unmarshal rejects them.
var splitCases = []string{
	`{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":0.5}}`,
	`{"output":"a\q","metadata":{"exit_code":0}}`,
	`{"output":"ok","metadata":{"exit_code":0},"extra":01}`,
	`{"output":"ok","metadata":{"exit_code":0},"extra":"\u12g4"}`,
	`{"output":"ok","metadata":{"exit_code":0},"extra":[1,]}`,
	`{"output":"ok","metadata":{"exit_code":0},"extra":tru}`,
	`{"output":"ok","metadata":{"exit_code":0}} trailing`,
	`{"output":"ok","metadata":{"exit_code":0}}` + " \n",
	"{\"output\":\"ok\",\"metadata\":{\"exit_code\":0},\"extra\":\"\x01\"}",
	"{\"output\":\"ok\xff\",\"metadata\":{\"exit_code\":0}}",
	`{"output":"ok","metadata":{"exit_code":0},"extra":"unterminated}`,
	`{"output":null,"metadata":{"exit_code":1}}`,
	`{"output":"a","OUTPUT":"b","Metadata":{"exit_code":2},"metadata":{"duration_seconds":1}}`,
	`{"output":"a","outp\u0075t":"b"}`,
	`{"output":1}`,
	`{"output":"a","metadata":{"exit_code":"x"}}`,
	`{"output":"a","metadata":null}`,
	`{"output":"a","metadata":{"exit_code":1e3}}`,
	`{"output":"Exit code: 0` + "\n" + `Output:` + "\n" + `hi"}`,
}

// TestSplitJSONOutputAsEncodingJSON: the one-pass reader takes a JSON
// output apart exactly when json.Unmarshal reads it, and into the same
// header and output.
func TestSplitJSONOutputAsEncodingJSON(t *testing.T) {
	for _, s := range splitCases {
		sameSplit(t, s)
	}
}

func sameSplit(t *testing.T, text string) {
	t.Helper()
	h, b, ok := splitJSONOutput(text)
	wh, wb, wok := splitJSONOutputSlow(text)
	if h != wh || b != wb || ok != wok {
		t.Fatalf("%q: split into %q, %q, %v; encoding/json %q, %q, %v", text, h, b, ok, wh, wb, wok)
	}
}

func FuzzSplitJSONOutput(f *testing.F) {
	for _, s := range splitCases {
		f.Add(s)
	}
	f.Fuzz(sameSplit)
}
