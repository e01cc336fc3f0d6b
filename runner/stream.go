package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"charm.land/fantasy"

	"github.com/scrim-dev/scrim/session"
)

// toolCall is one tool call the model made.
type toolCall struct{ id, name, input string }

// answer is one complete model answer.
type answer struct {
	text   strings.Builder
	calls  []toolCall
	finish fantasy.FinishReason
}

// call sends req and collects the streamed answer. Text deltas go to the
// callback as they arrive; the answer counts only once the stream finished.
func (t *turn) call(req Request) (*answer, error) {
	stream, err := t.lm.Stream(t.ctx, fantasy.Call{Prompt: req.Prompt, Tools: req.Tools})
	if err != nil {
		return nil, err
	}
	a := &answer{}
	finished := false
	for part := range stream {
		switch part.Type {
		case fantasy.StreamPartTypeTextDelta:
			if part.Delta != "" {
				a.text.WriteString(part.Delta)
				t.emit(Delta{Kind: DeltaText, Text: part.Delta})
			}
		case fantasy.StreamPartTypeToolCall:
			id := part.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", t.step, len(a.calls))
			}
			input := part.ToolCallInput
			if strings.TrimSpace(input) == "" {
				input = "{}"
			}
			a.calls = append(a.calls, toolCall{id: id, name: part.ToolCallName, input: input})
		case fantasy.StreamPartTypeError:
			return nil, part.Error
		case fantasy.StreamPartTypeFinish:
			finished = true
			a.finish = part.FinishReason
		}
	}
	if err := t.ctx.Err(); err != nil {
		return nil, err
	}
	if !finished {
		return nil, io.ErrUnexpectedEOF
	}
	return a, nil
}

// message is the assistant message to store for a: its text, then its tool
// calls with their IDs, names and inputs.
func (a *answer) message(model string, now time.Time) *session.Message {
	m := &session.Message{Role: session.RoleAssistant, Model: model, CreatedAt: now, Parts: []session.Part{}}
	if s := a.text.String(); s != "" {
		m.Parts = append(m.Parts, session.Part{Kind: session.PartText, Text: s})
	}
	for _, c := range a.calls {
		input := json.RawMessage(c.input)
		if !json.Valid(input) {
			// Keep what the model wrote, as a JSON string: the stored record must
			// stay valid JSON, and the tool run answers with an error.
			b, _ := json.Marshal(c.input)
			input = b
		}
		m.Parts = append(m.Parts, session.Part{Kind: session.PartToolCall, CallID: c.id, Name: c.name, Input: input})
	}
	return m
}

// SendError is a failed provider call, described in one line that names the
// provider and what to do.
type SendError struct {
	Provider string
	Status   int // HTTP status; 0 when none arrived
	Msg      string
	Err      error
}

func (e *SendError) Error() string { return e.Msg }
func (e *SendError) Unwrap() error { return e.Err }

// describe turns an error from a provider call into one line.
func describe(p Provider, model string, err error) error {
	se := &SendError{Provider: p.Name, Err: err}
	name := fmt.Sprintf("provider %q", p.Name)
	var pe *fantasy.ProviderError
	var netErr *net.OpError
	var dnsErr *net.DNSError
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, context.Canceled):
		se.Msg = "send cancelled; the session keeps every message completed before that"
	case errors.Is(err, context.DeadlineExceeded):
		se.Msg = fmt.Sprintf("%s did not answer in time; the session keeps every message completed before that", name)
	case errors.As(err, &pe) && pe.StatusCode != 0:
		se.Status = pe.StatusCode
		se.Msg = statusLine(p, model, pe)
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &dnsErr), errors.As(err, &netErr) && netErr.Op == "dial":
		se.Msg = fmt.Sprintf("%s at %s is unreachable (%s): %s", name, p.BaseURL, reason(err), unreachableHint(p))
	case errors.Is(err, errNotAnswer), errors.As(err, &syn), isDecodeError(err):
		se.Msg = fmt.Sprintf("%s sent an answer scrim cannot read (%s); is %s an OpenAI-compatible endpoint?", name, clip(oneLine(err.Error()), 160), p.BaseURL)
	case errors.Is(err, io.ErrUnexpectedEOF):
		se.Msg = fmt.Sprintf("%s ended its answer before finishing; nothing of it was stored, send again", name)
	default:
		se.Msg = fmt.Sprintf("%s: %s", name, clip(oneLine(err.Error()), 200))
	}
	return se
}

func statusLine(p Provider, model string, pe *fantasy.ProviderError) string {
	status := fmt.Sprintf("%d %s", pe.StatusCode, http.StatusText(pe.StatusCode))
	name := fmt.Sprintf("provider %q", p.Name)
	detail := clip(oneLine(pe.Message), 200)
	switch code := pe.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		if p.APIKeyEnv != "" {
			return fmt.Sprintf("%s refused the request (%s): check the key in %s", name, status, p.APIKeyEnv)
		}
		return fmt.Sprintf("%s refused the request (%s): it may need a key; set api_key_env in %s", name, status, p.configHint())
	case code == http.StatusNotFound:
		return fmt.Sprintf("%s answered %s for %s: check the model name and base_url %s", name, status, model, p.BaseURL)
	case code == http.StatusTooManyRequests:
		return fmt.Sprintf("%s is rate limiting (%s): wait a moment and send again", name, status)
	case code >= 500:
		return fmt.Sprintf("%s failed (%s): %s; send again later", name, status, detail)
	}
	return fmt.Sprintf("%s rejected the request (%s): %s", name, status, detail)
}

func unreachableHint(p Provider) string {
	switch p.Source {
	case SourceConfigured:
		return "is it running? check base_url in " + p.configHint()
	case SourceDemo:
		return "the built-in demo server stopped; run the command again"
	}
	return "check your network connection"
}

func reason(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "no such host " + dnsErr.Name
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return oneLine(op.Err.Error())
	}
	return clip(oneLine(err.Error()), 120)
}

// isDecodeError recognises a JSON decoding failure that arrives without the
// typed error (the SDK wraps some of them as text).
func isDecodeError(err error) bool {
	s := err.Error()
	var ute *json.UnmarshalTypeError
	return errors.As(err, &ute) || strings.Contains(s, "invalid character") || strings.Contains(s, "unexpected end of JSON input")
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}
