package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"charm.land/fantasy"

	"github.com/scrim-dev/scrim/redact"
)

// demoReply is the demo's answer, decoded from either wire form.
type demoReply struct {
	text     string
	toolName string
	toolArgs string
	finish   string
}

func postDemo(t *testing.T, url string, body map[string]any) demoReply {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var r demoReply
	type choice struct {
		Message, Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Function struct{ Name, Arguments string } `json:"function"`
			} `json:"tool_calls"`
		}
		FinishReason *string `json:"finish_reason"`
	}
	take := func(c choice, m struct {
		Content   string `json:"content"`
		ToolCalls []struct {
			Function struct{ Name, Arguments string } `json:"function"`
		} `json:"tool_calls"`
	}) {
		r.text += m.Content
		for _, tc := range m.ToolCalls {
			r.toolName, r.toolArgs = tc.Function.Name, tc.Function.Arguments
		}
		if c.FinishReason != nil {
			r.finish = *c.FinishReason
		}
	}
	if stream, _ := body["stream"].(bool); !stream {
		var out struct{ Choices []choice }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		take(out.Choices[0], out.Choices[0].Message)
		return r
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	done := false
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			break
		}
		var chunk struct{ Choices []choice }
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		for _, c := range chunk.Choices {
			take(c, c.Delta)
		}
	}
	if !done {
		t.Fatal("stream did not end with [DONE]")
	}
	return r
}

func TestDemoAnswers(t *testing.T) {
	srv := httptest.NewServer(DemoHandler())
	defer srv.Close()
	ph := func(path, tier string) string { return redact.Placeholder(path, tier) }
	readTool := []any{map[string]any{"type": "function", "function": map[string]any{"name": "read", "parameters": map[string]any{}}}}
	msg := func(role, text string) map[string]any { return map[string]any{"role": role, "content": text} }
	cases := []struct {
		name     string
		messages []any
		tools    []any
		want     []string
		wantRead string // path of the requested read; "" for none
	}{
		{
			name:     "plain",
			messages: []any{msg("system", "form: "+ph("PATH", "LABEL")), msg("user", "hello")},
			want:     []string{"demo/limited here. I received 2 messages (1 system, 1 user).", "No part arrived as a placeholder."},
		},
		{
			name: "placeholders of two tiers",
			messages: []any{msg("user", "x"), msg("tool", ph("/w/a.env", "limited")+"\n"+ph("/w/b.env", "limited")),
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "see " + ph("/w/c", "public")}}}},
			want: []string{"3 parts arrived as placeholders: 2 for trust tier \"limited\" (/w/a.env, /w/b.env); 1 for trust tier \"public\" (/w/c)."},
		},
		{
			name:     "read with the tool offered",
			messages: []any{msg("user", "please read /w/README.md.")},
			tools:    readTool,
			want:     []string{"Reading /w/README.md."},
			wantRead: "/w/README.md",
		},
		{
			name:     "read without the tool",
			messages: []any{msg("user", "read /w/README.md")},
			want:     []string{"I would read /w/README.md, but no read tool was offered."},
		},
		{
			name:     "after a tool result it reports without repeating content",
			messages: []any{msg("user", "read /w/x"), msg("tool", "     1\tTOPSECRET\n     2\tmore\n")},
			tools:    readTool,
			want:     []string{"The tool returned 2 lines (", "I will not repeat file content."},
		},
		{
			name:     "after a denied read",
			messages: []any{msg("user", "read /w/x"), msg("tool", `read denied: trust tier "limited" does not have read access to /w/x`)},
			tools:    readTool,
			want:     []string{"The tool returned an error: read denied"},
		},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", c.name, stream), func(t *testing.T) {
				body := map[string]any{"model": "limited", "messages": c.messages, "stream": stream}
				if c.tools != nil {
					body["tools"] = c.tools
				}
				r := postDemo(t, srv.URL, body)
				for _, w := range c.want {
					if !strings.Contains(r.text, w) {
						t.Fatalf("answer %q lacks %q", r.text, w)
					}
				}
				if strings.Contains(r.text, "TOPSECRET") {
					t.Fatal("the demo repeated tool content")
				}
				wantFinish := "stop"
				if c.wantRead != "" {
					wantFinish = "tool_calls"
					var args map[string]string
					if r.toolName != "read" || json.Unmarshal([]byte(r.toolArgs), &args) != nil || args["path"] != c.wantRead {
						t.Fatalf("tool call %q %q, want read of %s", r.toolName, r.toolArgs, c.wantRead)
					}
				} else if r.toolName != "" {
					t.Fatalf("unexpected tool call %s", r.toolName)
				}
				if r.finish != wantFinish {
					t.Fatalf("finish %q, want %q", r.finish, wantFinish)
				}
			})
		}
	}
}

func TestDemoRejectsGarbage(t *testing.T) {
	srv := httptest.NewServer(DemoHandler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader("{nope"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// The demo provider through the real client, both wire forms, on a real
// loopback listener.
func TestDemoProviderThroughClient(t *testing.T) {
	ps := mustProviders(t, "")
	defer ps.Close()
	lm, p, err := ps.Connect(context.Background(), "demo/public", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.BaseURL, "http://127.0.0.1:") {
		t.Fatalf("demo listens on %s", p.BaseURL)
	}
	call := fantasy.Call{Prompt: fantasy.Prompt{fantasy.NewUserMessage("hi")}}
	resp, err := lm.Generate(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Content.Text(); !strings.HasPrefix(got, "demo/public here. I received 1 message (1 user).") {
		t.Fatalf("generate: %q", got)
	}
	stream, err := lm.Stream(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	deltas := 0
	for part := range stream {
		if part.Type == fantasy.StreamPartTypeTextDelta {
			b.WriteString(part.Delta)
			deltas++
		}
		if part.Type == fantasy.StreamPartTypeError {
			t.Fatal(part.Error)
		}
	}
	if b.String() != resp.Content.Text() || deltas < 2 {
		t.Fatalf("stream %q in %d deltas, generate %q", b.String(), deltas, resp.Content.Text())
	}
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(p.BaseURL + "/models"); err == nil {
		t.Fatal("demo server still answers after Close")
	}
}

func TestPlaceholders(t *testing.T) {
	text := "a " + redact.Placeholder("/x/a b.env", "cloud") + " b " + redact.Placeholder("/y", "lim ited") + "\n" + redact.Placeholder("/z", "t")
	paths, tiers := Placeholders(text)
	if strings.Join(paths, "|") != "/x/a b.env|/y|/z" || strings.Join(tiers, "|") != "cloud|lim ited|t" {
		t.Fatalf("paths %q tiers %q", paths, tiers)
	}
}

// Whatever a request holds, the demo answers with text and, at most, one read
// call whose arguments are valid JSON naming a non-empty path.
func FuzzDemoAnswer(f *testing.F) {
	f.Add("user", "read /etc/hosts", "tool", redact.Placeholder("/a", "x"))
	f.Add("user", "read \"", "assistant", "[Content from  filtered — trust tier \"\" does not have read access]")
	f.Add("tool", "", "user", "READ\t./x.")
	f.Fuzz(func(t *testing.T, role1, text1, role2, text2 string) {
		req := ChatRequest{Model: "m", Messages: []ChatMessage{
			{Role: role1, Content: mustJSON(text1)}, {Role: role2, Content: mustJSON(text2)}}}
		req.Tools = append(req.Tools, struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}{})
		req.Tools[0].Function.Name = "read"
		text, call := demoAnswer(req)
		if !strings.HasPrefix(text, "demo/m here. I received 2 messages") {
			t.Fatalf("answer %q", text)
		}
		if call != nil {
			var args map[string]string
			if call.name != "read" || json.Unmarshal([]byte(call.args), &args) != nil || args["path"] == "" {
				t.Fatalf("call %+v", call)
			}
		}
	})
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
