package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// The acceptance case: content a trusted model read never goes over the wire
// to a limited model, and is sent again after switching back.
func TestSwitchRedactsTheWireBodyAndSwitchBackRestores(t *testing.T) {
	e := newEnv(t, nil)
	id := e.newSession(t)
	e.seedTrustedRead(t, id)

	if err := e.send(t, id, "fake/limited", "what is in the keys file?"); err != nil {
		t.Fatal(err)
	}
	if e.wire.count() != 1 {
		t.Fatalf("%d requests, want 1", e.wire.count())
	}
	limited := e.wire.texts(t, 0)
	if want := redact.Placeholder(e.secret, "limited"); !strings.Contains(limited, want) {
		t.Fatalf("limited request lacks the placeholder %q:\n%s", want, limited)
	}
	for _, line := range e.secretLines {
		for _, body := range []string{limited, string(e.wire.body(0))} {
			if strings.Contains(body, line) {
				t.Fatalf("limited request carries a line of the secret file: %q", line)
			}
		}
		if v := strings.SplitN(line, "=", 2)[1]; strings.Contains(string(e.wire.body(0)), v) {
			t.Fatalf("limited request carries the secret value %q", v)
		}
	}
	// The demo-style provider says what it saw: one placeholder for "limited".
	ans := e.messages(t, id)
	if last := ans[len(ans)-1]; last.Role != session.RoleAssistant || !strings.Contains(last.Text(), `1 part arrived as a placeholder: 1 for trust tier "limited"`) {
		t.Fatalf("answer does not report the placeholder: %q", last.Text())
	}

	if err := e.send(t, id, "fake/trusted", "and now?"); err != nil {
		t.Fatal(err)
	}
	trusted := e.wire.texts(t, 1)
	for _, line := range e.secretLines {
		if !strings.Contains(trusted, line) {
			t.Fatalf("after switching back the request lacks %q:\n%s", line, trusted)
		}
	}
	if strings.Contains(trusted, "[Content from "+e.secret) {
		t.Fatalf("trusted request still carries a placeholder:\n%s", trusted)
	}
	// Redaction never touched the store.
	for _, m := range e.messages(t, id) {
		if m.Tool == "read" && !strings.Contains(m.Text(), e.secretLines[0]) {
			t.Fatalf("stored tool result was changed: %q", m.Text())
		}
	}
}

func TestModelSwitchEvents(t *testing.T) {
	e := newEnv(t, nil)
	id := e.newSession(t)
	steps := []struct {
		model      string
		wantEvents []string // all events in the session after this send
	}{
		{"fake/trusted", nil}, // first model of a fresh session: nothing switched
		{"fake/trusted", nil},
		{"fake/limited", []string{"model switched from fake/trusted (tier trusted) to fake/limited (tier limited)"}},
		{"fake/limited", []string{"model switched from fake/trusted (tier trusted) to fake/limited (tier limited)"}},
		{"fake/other", []string{
			"model switched from fake/trusted (tier trusted) to fake/limited (tier limited)",
			"model switched from fake/limited (tier limited) to fake/other (tier public)"}},
	}
	for i, s := range steps {
		t.Run(fmt.Sprintf("%d-%s", i, s.model), func(t *testing.T) {
			if err := e.send(t, id, s.model, "hello"); err != nil {
				t.Fatal(err)
			}
			msgs := e.messages(t, id)
			got := events(msgs)
			if strings.Join(got, "|") != strings.Join(s.wantEvents, "|") {
				t.Fatalf("events %q, want %q", got, s.wantEvents)
			}
			h, _ := e.store.Get(id)
			if h.LastModel != s.model {
				t.Fatalf("last model %q, want %q", h.LastModel, s.model)
			}
			// The event comes right before the prompt it belongs to.
			if len(s.wantEvents) > 0 && i > 0 && steps[i-1].model != s.model {
				n := len(msgs)
				if msgs[n-3].Role != session.RoleEvent || msgs[n-2].Role != session.RoleUser {
					t.Fatalf("want event, user, assistant at the end; got %s", roles(msgs))
				}
			}
			// Events never go over the wire.
			if strings.Contains(e.wire.texts(t, e.wire.count()-1), "model switched") {
				t.Fatal("an event was sent to the provider")
			}
		})
	}
}

// A session filled by `scrim tool` has no last model in its header; the
// model of its newest message is the one being switched from.
func TestSwitchFromModelOfToolRunsWithoutHeader(t *testing.T) {
	e := newEnv(t, nil)
	id := e.newSession(t)
	if err := e.store.Append(id, &session.Message{Role: session.RoleTool, Tool: "bash", Model: "fake/trusted",
		Parts: []session.Part{{Kind: session.PartToolResult, Text: "ok"}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.send(t, id, "fake/limited", "hi"); err != nil {
		t.Fatal(err)
	}
	if got := events(e.messages(t, id)); len(got) != 1 || !strings.Contains(got[0], "from fake/trusted (tier trusted) to fake/limited") {
		t.Fatalf("events %q", got)
	}
}

// What Request shows is what Send sends.
func TestRequestIsWhatIsSent(t *testing.T) {
	e := newEnv(t, nil)
	id := e.newSession(t)
	e.seedTrustedRead(t, id)
	if err := e.send(t, id, "fake/limited", "first"); err != nil {
		t.Fatal(err)
	}
	// Preview the next request, then send it without a new prompt.
	req, err := e.r.Request(id, "fake/limited")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.r.Send(context.Background(), id, "fake/limited", "", nil); err != nil {
		t.Fatal(err)
	}
	wire := e.wire.request(t, 1)
	if len(wire.Messages) != len(req.Prompt) {
		t.Fatalf("wire has %d messages, Request %d", len(wire.Messages), len(req.Prompt))
	}
	for i, m := range wire.Messages {
		if string(req.Prompt[i].Role) != m.Role {
			t.Fatalf("message %d: wire role %s, Request role %s", i, m.Role, req.Prompt[i].Role)
		}
	}
	if !strings.Contains(e.wire.texts(t, 1), redact.Placeholder(e.secret, "limited")) || req.Report.RedactedParts != 1 {
		t.Fatalf("preview and wire disagree on redaction: report %+v", req.Report)
	}
}

// Provider failures leave the prompt stored, no half answer, and one line.
func TestProviderErrorsLeaveSessionConsistent(t *testing.T) {
	refused := func() string { // an address nothing listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return "http://" + addr + "/v1"
	}()
	cases := []struct {
		name    string
		handler http.HandlerFunc
		baseURL string // instead of the recording server
		want    []string
	}{
		{name: "500", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":{"message":"upstream\nexploded","type":"server_error"}}`)
		}, want: []string{`provider "fake"`, "500 Internal Server Error", "upstream exploded"}},
		{name: "429", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":{"message":"slow down","type":"rate_limit"}}`)
		}, want: []string{`provider "fake"`, "429 Too Many Requests", "wait"}},
		{name: "malformed stream", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"half an ans\"}}]}\n\ndata: {not json at all\n\n")
		}, want: []string{`provider "fake"`, "cannot read"}},
		{name: "malformed body", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices": [ this is not json`)
		}, want: []string{`provider "fake"`, "cannot read", "neither an event stream nor a chat completion"}},
		{name: "truncated stream", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half an ans\"}}]}\n\n")
		}, want: []string{`provider "fake"`, "before finishing"}},
		{name: "connection refused", baseURL: refused, want: []string{`provider "fake"`, "unreachable", "connection refused", "base_url"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Handler(c.handler)
			if h == nil || c.handler == nil {
				h = DemoHandler()
			}
			e := newEnv(t, h)
			if c.baseURL != "" {
				e.provs = mustProviders(t, fmt.Sprintf("[providers.fake]\nbase_url = %q\n", c.baseURL))
				e.r = New(e.store, e.pol, e.provs)
			}
			id := e.newSession(t)
			if err := e.send(t, id, "fake/trusted", "first prompt"); c.baseURL == "" && err == nil {
				t.Fatal("want an error")
			}
			var texts []string
			err := e.send(t, id, "fake/trusted", "second prompt")
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			t.Log(msg)
			if strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Fatalf("error %q lacks %q", msg, w)
				}
			}
			msgs := e.messages(t, id)
			for _, m := range msgs {
				texts = append(texts, m.Text())
				if m.Role == session.RoleAssistant {
					t.Fatalf("an assistant message was stored: %q", m.Text())
				}
			}
			if strings.Join(texts, "|") != "first prompt|second prompt" {
				t.Fatalf("stored %q, want both prompts and nothing else", texts)
			}
			if h, _ := e.store.Get(id); h.Count != 2 || h.LastModel != "fake/trusted" {
				t.Fatalf("header %+v", h)
			}
		})
	}
}

// A gateway that ignores "stream": true and answers with a plain chat
// completion still works, tool calls included.
func TestPlainCompletionAnswer(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"plain answer","tool_calls":[{"id":"call_9","type":"function","function":{"name":"nosuchtool","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`)
	}))
	e.r.MaxSteps = 1
	id := e.newSession(t)
	if err := e.send(t, id, "fake/trusted", "hi"); !errors.Is(err, ErrStepLimit) {
		t.Fatalf("error %v, want the step limit", err)
	}
	msgs := e.messages(t, id)
	a := msgs[1]
	if a.Role != session.RoleAssistant || a.Parts[0].Text != "plain answer" || a.Parts[1].CallID != "call_9" || a.Parts[1].Name != "nosuchtool" {
		t.Fatalf("assistant %+v", a)
	}
}

// After an error, --continue (prompt "") sends the stored history again.
func TestContinueAfterError(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	demo := DemoHandler()
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, `{"error":{"message":"down"}}`, 503)
			return
		}
		demo.ServeHTTP(w, r)
	}))
	id := e.newSession(t)
	if err := e.send(t, id, "fake/trusted", "hello"); err == nil {
		t.Fatal("want an error")
	}
	fail.Store(false)
	if err := e.send(t, id, "fake/trusted", ""); err != nil {
		t.Fatal(err)
	}
	if got := roles(e.messages(t, id)); got != "user,assistant" {
		t.Fatalf("roles %s", got)
	}
}

// Cancelling mid-answer stores nothing of the answer.
func TestCancelMidStreamStoresNothingHalfWritten(t *testing.T) {
	release := make(chan struct{})
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"the first half \"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer close(release)
	id := e.newSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got strings.Builder
	err := e.r.Send(ctx, id, "fake/trusted", "tell me a story", func(d Delta) {
		if d.Kind == DeltaText {
			got.WriteString(d.Text)
			cancel() // the user presses Esc after the first words
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if got.String() != "the first half " {
		t.Fatalf("streamed %q", got.String())
	}
	if r := roles(e.messages(t, id)); r != "user" {
		t.Fatalf("stored %s, want only the user message", r)
	}
	// A cancelled context before anything is stored writes nothing at all.
	if err := e.r.Send(ctx, id, "fake/limited", "again", nil); err == nil {
		t.Fatal("want an error")
	}
	if r := roles(e.messages(t, id)); r != "user" {
		t.Fatalf("after a pre-cancelled send: %s", r)
	}
}

// The loop stops at the step limit; every call still has its result.
func TestStepLimit(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sse(w, "again", [2]string{"nosuchtool", `{"x":1}`})
	}))
	e.r.MaxSteps = 3
	id := e.newSession(t)
	err := e.send(t, id, "fake/trusted", "loop forever")
	if !errors.Is(err, ErrStepLimit) {
		t.Fatalf("error %v, want ErrStepLimit", err)
	}
	if e.wire.count() != 3 {
		t.Fatalf("%d model calls, want 3", e.wire.count())
	}
	msgs := e.messages(t, id)
	if got := roles(msgs); got != "user,assistant,tool,assistant,tool,assistant,tool" {
		t.Fatalf("roles %s", got)
	}
	for _, m := range msgs {
		if m.Role == session.RoleTool && (!m.IsError || !strings.Contains(m.Text(), `unknown tool "nosuchtool"`) || m.ToolCallID == "" || m.Model != "fake/trusted") {
			t.Fatalf("tool result %+v", m)
		}
		if m.Role == session.RoleAssistant {
			if len(m.Parts) != 2 || m.Parts[1].Kind != session.PartToolCall || m.Parts[1].Name != "nosuchtool" || string(m.Parts[1].Input) != `{"x":1}` {
				t.Fatalf("assistant parts %+v", m.Parts)
			}
		}
	}
}

func TestBusySessionRefusesSecondSend(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		sse(w, "done")
	}))
	id := e.newSession(t)
	done := make(chan error, 1)
	go func() { done <- e.send(t, id, "fake/trusted", "one") }()
	<-started
	err := e.r.Send(context.Background(), id, "fake/trusted", "two", nil)
	close(release)
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("second send: %v, want ErrBusy", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := roles(e.messages(t, id)); got != "user,assistant" {
		t.Fatalf("roles %s", got)
	}
}

func TestDeltasCarrySessionAndStreamTheStoredText(t *testing.T) {
	e := newEnv(t, nil)
	id := e.newSession(t)
	e.seedTrustedRead(t, id)
	var text strings.Builder
	var kinds []DeltaKind
	err := e.r.Send(context.Background(), id, "fake/limited", "hi", func(d Delta) {
		if d.SessionID != id || d.Model != "fake/limited" {
			t.Errorf("delta %+v lacks the session or model", d)
		}
		if d.Kind == DeltaText {
			text.WriteString(d.Text)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != d.Kind {
			kinds = append(kinds, d.Kind)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.messages(t, id)
	if last := msgs[len(msgs)-1]; last.Text() != text.String() || last.Model != "fake/limited" {
		t.Fatalf("streamed %q, stored %q", text.String(), last.Text())
	}
	want := []DeltaKind{DeltaSwitch, DeltaStored, DeltaText, DeltaStored}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("delta kinds %v, want %v", kinds, want)
	}
}

func TestSendFailsBeforeWritingWhenProviderIsNotUsable(t *testing.T) {
	e := newEnv(t, nil)
	e.provs = mustProviders(t, fmt.Sprintf("[providers.fake]\nbase_url = %q\napi_key_env = \"FAKE_KEY\"\n", e.wire.URL+"/v1"))
	e.r = New(e.store, e.pol, e.provs)
	id := e.newSession(t)
	cases := []struct{ model, want string }{
		{"fake/trusted", `provider "fake" needs an API key: set FAKE_KEY`},
		{"nowhere/x", `unknown provider "nowhere"`},
		{"bedrock/anthropic.claude", `provider "bedrock" speaks the bedrock API`},
		{"no-slash", "not of the form provider/model"},
		{"openai/gpt-4o", "provider \"openai\" needs an API key: set OPENAI_API_KEY"},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			err := e.send(t, id, c.model, "hello")
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, c.want)
			}
			if n := len(e.messages(t, id)); n != 0 || e.wire.count() != 0 {
				t.Fatalf("%d messages stored, %d requests sent; want none", n, e.wire.count())
			}
		})
	}
}

// The OpenAI SDK reads OPENAI_API_KEY and friends by itself; none of it may
// reach another provider. A configured key goes as a bearer token.
func TestCredentialsOnTheWire(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	t.Setenv("OPENAI_ORG_ID", "org-must-not-leak")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	e := newEnv(t, nil)
	e.provs = mustProviders(t, fmt.Sprintf(`[providers.fake]
base_url = %q
[providers.keyed]
base_url = %q
api_key_env = "KEYED_KEY"
headers = { "X-Team" = "sec", "X-Token" = "${TEAM_TOKEN}" }
`, e.wire.URL+"/v1", e.wire.URL+"/v1"))
	e.provs.Getenv = func(k string) string {
		return map[string]string{"KEYED_KEY": "k-123", "TEAM_TOKEN": "tok-9"}[k]
	}
	e.r = New(e.store, e.pol, e.provs)
	id := e.newSession(t)
	for _, m := range []string{"fake/trusted", "keyed/trusted"} {
		if err := e.send(t, id, m, "hi"); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range []http.Header{e.wire.header(0), e.wire.header(1)} {
		for name, vals := range h {
			if strings.Contains(strings.Join(vals, ","), "must-not-leak") || strings.EqualFold(name, "X-Leak") {
				t.Fatalf("request %d leaks %s: %q", i, name, vals)
			}
		}
	}
	if got := e.wire.header(0).Get("Authorization"); got != "" {
		t.Fatalf("keyless provider got Authorization %q", got)
	}
	h := e.wire.header(1)
	if h.Get("Authorization") != "Bearer k-123" || h.Get("X-Team") != "sec" || h.Get("X-Token") != "tok-9" {
		t.Fatalf("keyed provider headers: %v", h)
	}
}

func TestEmptySessionNeedsPrompt(t *testing.T) {
	e := newEnv(t, nil)
	id := e.newSession(t)
	if err := e.send(t, id, "fake/trusted", ""); err == nil || !strings.Contains(err.Error(), "give a prompt") {
		t.Fatalf("error %v", err)
	}
	if _, err := e.store.Get(id); err != nil {
		t.Fatal(err)
	}
	if n := len(e.messages(t, id)); n != 0 {
		t.Fatalf("%d messages", n)
	}
}

// One Send through the loopback demo on a session of 1,000 messages: load,
// redact, build, HTTP round trip with streaming, store the answer.
func BenchmarkSendLoopback(b *testing.B) {
	e := newEnv(b, nil)
	id := e.newSession(b)
	for range 250 {
		e.seedTrustedRead(b, id)
	}
	ctx := context.Background()
	if err := e.r.Send(ctx, id, "fake/limited", "warm up", nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := e.r.Send(ctx, id, "fake/limited", "", nil); err != nil {
			b.Fatal(err)
		}
	}
}
