package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
)

// wireGuard is the last stop before the network. The OpenAI SDK under fantasy
// reads OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_CUSTOM_HEADERS and more from the
// environment on its own; without this, a user's OpenAI key would be sent to
// ollama, a company gateway or the demo. It makes the credentials and headers
// exactly the ones this provider is configured with.
type wireGuard struct {
	client  *http.Client
	key     string
	headers map[string]string
}

func (g *wireGuard) Do(req *http.Request) (*http.Response, error) {
	req.Header.Del("Authorization")
	for name := range req.Header {
		if strings.HasPrefix(strings.ToLower(name), "openai-") {
			req.Header.Del(name)
		}
	}
	for _, line := range strings.Split(os.Getenv("OPENAI_CUSTOM_HEADERS"), "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok {
			req.Header.Del(strings.TrimSpace(name))
		}
	}
	if g.key != "" {
		req.Header.Set("Authorization", "Bearer "+g.key)
	}
	for k, v := range g.headers {
		req.Header.Set(k, v)
	}
	resp, err := g.client.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" && wantsStream(req) {
		return asEventStream(resp)
	}
	return resp, nil
}

// wantsStream reports whether req asked for a streamed answer.
func wantsStream(req *http.Request) bool {
	if req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	var r struct {
		Stream bool `json:"stream"`
	}
	return json.NewDecoder(body).Decode(&r) == nil && r.Stream
}

// errNotAnswer: a 200 response that is neither an event stream nor a chat completion.
var errNotAnswer = errors.New("the answer is neither an event stream nor a chat completion")

// maxPlainAnswer bounds a non-streamed answer read into memory.
const maxPlainAnswer = 32 << 20

// asEventStream turns a plain chat completion into the event stream scrim
// asked for. Some gateways ignore "stream": true; their answer is still good.
func asEventStream(resp *http.Response) (*http.Response, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPlainAnswer))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var c struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content   *string           `json:"content"`
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotAnswer, err)
	}
	if len(c.Choices) == 0 {
		return nil, fmt.Errorf("%w: it has no choices", errNotAnswer)
	}
	var out bytes.Buffer
	event := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": c.ID, "object": "chat.completion.chunk", "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(&out, "data: %s\n\n", b)
	}
	ch := c.Choices[0]
	delta := map[string]any{"role": "assistant"}
	if ch.Message.Content != nil {
		delta["content"] = *ch.Message.Content
	}
	event(delta, nil)
	for i, tc := range ch.Message.ToolCalls {
		var call map[string]any
		if json.Unmarshal(tc, &call) != nil {
			return nil, fmt.Errorf("%w: tool call %d is not an object", errNotAnswer, i)
		}
		call["index"] = i
		event(map[string]any{"tool_calls": []any{call}}, nil)
	}
	finish := ch.FinishReason
	if finish == "" {
		finish = "stop"
	}
	event(map[string]any{}, finish)
	out.WriteString("data: [DONE]\n\n")
	resp.Body = io.NopCloser(&out)
	resp.ContentLength = int64(out.Len())
	resp.Header.Set("Content-Type", "text/event-stream")
	resp.Header.Del("Content-Length")
	return resp, nil
}
