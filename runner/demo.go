package runner

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
)

// DemoModels are the demo provider's listed models. Any demo/<name> works;
// these are the ones the demo policy gives tiers.
var DemoModels = []string{"trusted", "limited", "public"}

// DemoServer is the offline demo provider: a real HTTP server on a loopback
// port speaking the OpenAI chat-completions API, so the demo goes through the
// same client, wire format and redaction as a real provider.
type DemoServer struct {
	srv *http.Server
	url string
}

// StartDemo starts a demo server on 127.0.0.1 and a free port.
func StartDemo() (*DemoServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &DemoServer{
		srv: &http.Server{Handler: DemoHandler(), ReadHeaderTimeout: 10 * time.Second},
		url: "http://" + ln.Addr().String() + "/v1",
	}
	go func() { _ = d.srv.Serve(ln) }() // returns ErrServerClosed on Close
	return d, nil
}

// URL is the base URL, ending in /v1.
func (d *DemoServer) URL() string { return d.url }

// Close stops the server and its connections.
func (d *DemoServer) Close() error { return d.srv.Close() }

// DemoHandler answers chat completions with an account of what it received:
// how many messages, how many parts arrived as placeholders and for which
// tier. When the last message is a user prompt saying "read <path>" and a
// read tool is offered, it asks for that one read instead.
func DemoHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", demoChat)
	mux.HandleFunc("POST /chat/completions", demoChat)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		var data []map[string]any
		for _, m := range DemoModels {
			data = append(data, map[string]any{"id": m, "object": "model", "owned_by": DemoProvider})
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
	})
	return mux
}

// ChatRequest is the part of an OpenAI chat-completions request the demo reads.
type ChatRequest struct {
	Model    string        `json:"model"`
	Messages []ChatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// ChatMessage is one message of a chat-completions request.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

// Text is the message's text: content as a string, or its text parts joined.
func (m ChatMessage) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func demoChat(w http.ResponseWriter, r *http.Request) {
	var req ChatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": "request body is not a chat-completions request: " + err.Error(), "type": "invalid_request_error"}})
		return
	}
	text, call := demoAnswer(req)
	id := fmt.Sprintf("demo-%d", time.Now().UnixNano())
	if req.Stream {
		streamDemo(w, id, req.Model, text, call)
		return
	}
	msg := map[string]any{"role": "assistant", "content": text}
	finish := "stop"
	if call != nil {
		msg["tool_calls"] = []any{call.wire(nil)}
		finish = "tool_calls"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	})
}

type demoCall struct{ id, name, args string }

func (c *demoCall) wire(index *int) map[string]any {
	m := map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}}
	if index != nil {
		m["index"] = *index
	}
	return m
}

// streamDemo sends the answer as server-sent events, a few words per chunk.
func streamDemo(w http.ResponseWriter, id, model, text string, call *demoCall) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any) {
		chunk := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil)
	words := strings.SplitAfter(text, " ")
	for i := 0; i < len(words); i += 4 {
		send(map[string]any{"content": strings.Join(words[i:min(i+4, len(words))], "")}, nil)
	}
	finish := "stop"
	if call != nil {
		zero := 0
		send(map[string]any{"tool_calls": []any{call.wire(&zero)}}, nil)
		finish = "tool_calls"
	}
	send(map[string]any{}, finish)
	usage, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "model": model, "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", usage)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// placeholderRE matches redact.Placeholder's text.
var placeholderRE = regexp.MustCompile(`\[Content from (.+?) filtered \x{2014} trust tier "([^"\n]*)" does not have read access\]`)

var readRE = regexp.MustCompile(`(?i)(?:^|\s)read\s+(\S+)`)

// Placeholders finds the placeholders in text: path → tier label, in order.
func Placeholders(text string) (paths, tiers []string) {
	for _, line := range strings.Split(text, "\n") {
		for _, m := range placeholderRE.FindAllStringSubmatch(line, -1) {
			paths = append(paths, m[1])
			tiers = append(tiers, m[2])
		}
	}
	return paths, tiers
}

// demoAnswer composes the demo's reply: an account of what arrived and, for
// "read <path>" in the newest prompt, a read tool call.
func demoAnswer(req ChatRequest) (string, *demoCall) {
	model := DemoProvider + "/" + req.Model
	roles := map[string]int{}
	byTier := map[string][]string{}
	parts := 0
	for _, m := range req.Messages {
		roles[m.Role]++
		if m.Role == "system" || m.Role == "developer" {
			continue // scrim's system prompt describes the placeholder form
		}
		paths, tiers := Placeholders(m.Text())
		parts += len(paths)
		for i, p := range paths {
			byTier[tiers[i]] = append(byTier[tiers[i]], p)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s here. I received %d %s (%s). ", model, len(req.Messages), plural(len(req.Messages), "message", "messages"), roleCounts(roles))
	if parts == 0 {
		b.WriteString("No part arrived as a placeholder.")
	} else {
		fmt.Fprintf(&b, "%d %s: ", parts, plural(parts, "part arrived as a placeholder", "parts arrived as placeholders"))
		b.WriteString(tierAccount(byTier))
		b.WriteString(".")
	}
	if len(req.Messages) == 0 {
		return b.String(), nil
	}
	last := req.Messages[len(req.Messages)-1]
	switch last.Role {
	case "tool":
		b.WriteString(" " + toolAccount(last.Text()))
	case "user":
		m := readRE.FindStringSubmatch(last.Text())
		if m == nil {
			break
		}
		path := strings.TrimRight(strings.Trim(m[1], "\"'`"), ",;:!?")
		if len(path) > 1 {
			path = strings.TrimSuffix(path, ".")
		}
		if path == "" {
			break
		}
		if !offers(req, "read") {
			fmt.Fprintf(&b, " I would read %s, but no read tool was offered.", path)
			break
		}
		args, _ := json.Marshal(map[string]string{"path": path})
		fmt.Fprintf(&b, " Reading %s.", path)
		return b.String(), &demoCall{id: fmt.Sprintf("call_%d", len(req.Messages)), name: "read", args: string(args)}
	}
	return b.String(), nil
}

func offers(req ChatRequest, tool string) bool {
	for _, t := range req.Tools {
		if t.Function.Name == tool {
			return true
		}
	}
	return false
}

func roleCounts(roles map[string]int) string {
	var out []string
	for _, r := range []string{"system", "user", "assistant", "tool"} {
		if n := roles[r]; n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, r))
			delete(roles, r)
		}
	}
	rest := make([]string, 0, len(roles))
	for r := range roles {
		rest = append(rest, r)
	}
	sort.Strings(rest)
	for _, r := range rest {
		out = append(out, fmt.Sprintf("%d %s", roles[r], r))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func tierAccount(byTier map[string][]string) string {
	tiers := make([]string, 0, len(byTier))
	for t := range byTier {
		tiers = append(tiers, t)
	}
	sort.Strings(tiers)
	var out []string
	for _, t := range tiers {
		paths := uniq(byTier[t])
		shown := paths
		if len(shown) > 3 {
			shown = shown[:3]
		}
		s := fmt.Sprintf("%d for trust tier %q (%s", len(byTier[t]), t, strings.Join(shown, ", "))
		if len(paths) > len(shown) {
			s += fmt.Sprintf(" and %d more", len(paths)-len(shown))
		}
		out = append(out, s+")")
	}
	return strings.Join(out, "; ")
}

// toolAccount describes a tool result without repeating its content: the
// demo's own answer is not file content and would never be redacted.
func toolAccount(text string) string {
	if paths, tiers := Placeholders(text); len(paths) > 0 {
		return fmt.Sprintf("The tool result arrived as a placeholder for trust tier %q.", tiers[0])
	}
	first, _, _ := strings.Cut(text, "\n")
	if strings.Contains(strings.ToLower(first), "denied") || strings.HasPrefix(strings.ToLower(first), "error") {
		return "The tool returned an error: " + clip(first, 160)
	}
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return fmt.Sprintf("The tool returned %d %s (%d bytes); I will not repeat file content.", n, plural(n, "line", "lines"), len(text))
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
