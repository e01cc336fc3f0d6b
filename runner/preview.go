package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"charm.land/fantasy"
)

// errPreviewed ends a request RequestBody captured: it never leaves the
// process.
var errPreviewed = errors.New("request captured for the preview")

// captureTransport keeps the body of the first request and answers none.
type captureTransport struct{ body []byte }

func (c *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.body == nil && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		c.body = b
	}
	return nil, errPreviewed
}

// RequestBody is the exact body scrim send --continue would send to model's
// provider for the session now: the system prompt, the tools offered to the
// model's tier and the redacted history, as the provider's client library
// writes them. The client runs as it does for a send, against a transport
// that keeps the body and sends nothing; no API key is needed.
func (r *Runner) RequestBody(ctx context.Context, sessionID, model string) ([]byte, error) {
	req, err := r.Request(sessionID, model)
	if err != nil {
		return nil, err
	}
	capture := &captureTransport{}
	lm, p, err := r.provs.connect(ctx, model, &http.Client{Transport: capture}, true)
	if err != nil {
		return nil, describe(p, model, err)
	}
	stream, err := lm.Stream(ctx, fantasy.Call{Prompt: req.Prompt, Tools: req.Tools})
	if err == nil {
		for range stream {
		}
	}
	if capture.body == nil {
		if err == nil {
			err = errors.New("the provider's client sent no request")
		}
		return nil, describe(p, model, err)
	}
	return bytes.TrimSpace(capture.body), nil
}
