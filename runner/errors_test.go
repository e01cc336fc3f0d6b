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

	"github.com/scrim-dev/scrim/session"
)

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
