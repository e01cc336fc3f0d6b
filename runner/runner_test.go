package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
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

// Building the request for a 10,000-message session with 2,500 redacted
// tool results: redaction plus mapping to provider messages.
func BenchmarkBuild(b *testing.B) {
	e := newEnv(b, nil)
	id := e.newSession(b)
	for range 2500 {
		e.seedTrustedRead(b, id)
	}
	msgs := e.messages(b, id)
	b.ReportAllocs()
	for b.Loop() {
		req := Build(msgs, id, "fake/limited", e.pol)
		if req.Report.RedactedParts != 2500 {
			b.Fatal(req.Report)
		}
	}
}
