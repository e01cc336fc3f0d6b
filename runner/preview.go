package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"charm.land/fantasy"
)

// errPreviewed ends a request a preview captured: it never leaves the
// process.
var errPreviewed = errors.New("request captured for the preview")

// captureTransport keeps the body of the first request and answers none.
type captureTransport struct{ body []byte }

func (c *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.body == nil && req.Body != nil {
		b, err := readBody(req)
		if err != nil {
			return nil, err
		}
		c.body = b
	}
	return nil, errPreviewed
}

// readBody reads req's body into a slice of its length, where the client
// tells it: io.ReadAll reads into pieces of growing size and copies them
// into one of the body's size, twice the body made and cleared (for
// RequestBody at a million messages, a gigabyte and a tenth of its CPU).
func readBody(req *http.Request) ([]byte, error) {
	if req.ContentLength <= 0 {
		return io.ReadAll(req.Body)
	}
	b := bytes.NewBuffer(make([]byte, 0, req.ContentLength+bytes.MinRead)) // ReadFrom reads MinRead at a time
	_, err := b.ReadFrom(req.Body)
	return b.Bytes(), err
}

// RequestBody is the exact body scrim send --continue would send to model's
// provider for the session now: the system prompt, the tools offered to the
// model's tier and the redacted history, as the provider's client library
// writes them. The client runs as it does for a send, against a transport
// that keeps the body and sends nothing; no API key is needed. It holds
// the whole session's prompt and body, as a send does; RequestWriter
// writes the same bytes a piece at a time.
func (r *Runner) RequestBody(ctx context.Context, sessionID, model string) ([]byte, error) {
	req, err := r.Request(sessionID, model)
	if err != nil {
		return nil, err
	}
	capture := &captureTransport{}
	lm, p, err := r.provs.connect(ctx, model, &http.Client{Transport: capture}, true)
	if err != nil {
		return nil, err // one line naming the provider and what to set, as for a send
	}
	call := fantasy.Call{Prompt: req.Prompt, Tools: req.Tools}
	req = Request{} // the redacted history, which the prompt no longer needs, can go while the client writes the body
	body, err := capture.of(ctx, lm, call)
	if err != nil {
		return nil, describe(p, model, err)
	}
	return body, nil
}

// of runs call through lm, whose client sends through c, and returns the
// body c kept.
func (c *captureTransport) of(ctx context.Context, lm fantasy.LanguageModel, call fantasy.Call) ([]byte, error) {
	c.body = nil
	stream, err := lm.Stream(ctx, call)
	if err == nil {
		for range stream {
		}
	}
	if c.body == nil {
		if err == nil {
			err = errors.New("the provider's client sent no request")
		}
		return nil, err
	}
	return bytes.TrimSpace(c.body), nil
}
