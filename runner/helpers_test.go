package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// wire is a loopback provider that records every request it receives.
type wire struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

func newWire(t testing.TB, h http.Handler) *wire {
	t.Helper()
	w := &wire{}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.bodies = append(w.bodies, b)
		w.headers = append(w.headers, r.Header.Clone())
		w.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *wire) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.bodies)
}

func (w *wire) body(i int) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bodies[i]
}

func (w *wire) header(i int) http.Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.headers[i]
}

// request decodes recorded request i.
func (w *wire) request(t *testing.T, i int) ChatRequest {
	t.Helper()
	var req ChatRequest
	if err := json.Unmarshal(w.body(i), &req); err != nil {
		t.Fatalf("request %d is not JSON: %v\n%s", i, err, w.body(i))
	}
	return req
}

// texts is every message text of a recorded request, system prompt included.
func (w *wire) texts(t *testing.T, i int) string {
	t.Helper()
	var b strings.Builder
	for _, m := range w.request(t, i).Messages {
		b.WriteString(m.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

// env is one test's world: a workspace with a secret, a policy file, a real
// store and providers pointing "fake/*" at a recording server.
type env struct {
	ws, secret, public string // workspace, a file limited may not read, one it may
	secretLines        []string
	pol                *policy.Policy
	store              *session.Store
	provs              *Providers
	wire               *wire
	r                  *Runner
}

const testPolicy = `default_tier = "public"

[tiers.trusted]
label = "trusted"
read  = ["%[1]s/**"]
tools = ["read", "grep", "glob", "bash", "webfetch"]

[tiers.limited]
label = "limited"
read  = ["%[1]s/**"]
deny  = ["%[1]s/secret/**"]

[tiers.public]
label = "public"
read  = []

[[models]]
match = "*/trusted"
tier  = "trusted"

[[models]]
match = "*/limited"
tier  = "limited"
`

func newEnv(t testing.TB, h http.Handler) *env {
	t.Helper()
	e := &env{}
	root := t.TempDir()
	var err error
	if root, err = policy.Canonical(root); err != nil {
		t.Fatal(err)
	}
	e.ws = filepath.Join(root, "ws")
	e.secret = filepath.Join(e.ws, "secret", "keys.env")
	e.public = filepath.Join(e.ws, "README.md")
	e.secretLines = []string{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY", "DATABASE_PASSWORD=correct-horse-battery-staple", "STRIPE_TOKEN=sk_live_4eC39HqLyjWDarjtT1zdp7dc"}
	mustWrite(t, e.secret, strings.Join(e.secretLines, "\n")+"\n")
	mustWrite(t, e.public, "# Demo workspace\nNothing secret here.\n")
	polFile := filepath.Join(root, "policy.toml")
	mustWrite(t, polFile, fmt.Sprintf(testPolicy, e.ws))
	if e.pol, err = policy.Load(polFile); err != nil {
		t.Fatal(err)
	}
	if e.store, err = session.Open(filepath.Join(root, "store")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.store.Close() })
	if h == nil {
		h = DemoHandler()
	}
	e.wire = newWire(t, h)
	e.provs = mustProviders(t, fmt.Sprintf("[providers.fake]\nbase_url = %q\n", e.wire.URL+"/v1"))
	t.Cleanup(func() { e.provs.Close() })
	e.r = New(e.store, e.pol, e.provs)
	clock := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	e.r.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	return e
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustProviders(t testing.TB, toml string) *Providers {
	t.Helper()
	ps, err := ParseProviders([]byte(toml), "providers.toml")
	if err != nil {
		t.Fatal(err)
	}
	ps.Getenv = func(string) string { return "" }
	return ps
}

func (e *env) newSession(t testing.TB) string {
	t.Helper()
	h, err := e.store.Create(session.Header{Title: "test", WorkDir: e.ws})
	if err != nil {
		t.Fatal(err)
	}
	return h.ID
}

func (e *env) messages(t testing.TB, id string) []session.Message {
	t.Helper()
	msgs, bad, err := e.store.Messages(id)
	if err != nil || len(bad) > 0 {
		t.Fatalf("load session: %v %v", err, bad)
	}
	return msgs
}

func (e *env) send(t *testing.T, id, model, prompt string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return e.r.Send(ctx, id, model, prompt, nil)
}

// seedTrustedRead stores what a trusted model's read of the secret leaves in
// a session: the call and its tagged result.
func (e *env) seedTrustedRead(t testing.TB, id string) {
	t.Helper()
	var numbered []string
	for i, l := range e.secretLines {
		numbered = append(numbered, fmt.Sprintf("%6d\t%s", i+1, l))
	}
	msgs := []*session.Message{
		{Role: session.RoleUser, Model: "fake/trusted", Parts: []session.Part{{Kind: session.PartText, Text: "read the keys"}}},
		{Role: session.RoleAssistant, Model: "fake/trusted", Parts: []session.Part{{Kind: session.PartToolCall, CallID: "call_1", Name: "read", Input: json.RawMessage(fmt.Sprintf(`{"path":%q}`, e.secret))}}},
		{Role: session.RoleTool, Model: "fake/trusted", Tool: "read", ToolCallID: "call_1",
			Parts: []session.Part{{Kind: session.PartToolResult, Text: strings.Join(numbered, "\n"), SourcePath: e.secret}},
			Meta:  session.Meta{SourcePaths: []string{e.secret}}},
		{Role: session.RoleAssistant, Model: "fake/trusted", Parts: []session.Part{{Kind: session.PartText, Text: "I have read the keys file."}}},
	}
	if err := e.store.Append(id, msgs...); err != nil {
		t.Fatal(err)
	}
}

func events(msgs []session.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == session.RoleEvent {
			out = append(out, m.Text())
		}
	}
	return out
}

func roles(msgs []session.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role))
	}
	return strings.Join(out, ",")
}

// sse writes a scripted streamed answer: text, then tool calls, then finish.
func sse(w http.ResponseWriter, text string, calls ...[2]string) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if text != "" {
		chunk(map[string]any{"role": "assistant", "content": text}, nil)
	}
	for i, c := range calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%s_%d", c[0], i), "type": "function",
			"function": map[string]any{"name": c[0], "arguments": c[1]}}}}, nil)
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
}
