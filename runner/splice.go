package runner

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/scrim-dev/scrim/internal/spool"
)

// errSplice: the provider's client wrote a request other than the one its
// body was written for, and scrim will not send a body the preview did
// not show.
var errSplice = errors.New("its client wrote a request scrim did not write the history for; nothing was sent")

// spliceTransport sends a streamed send's requests. The provider's client
// is asked for a request of the system prompt and the tools alone (frame),
// and the transport sends, in place of that body, the one a RequestWriter
// wrote into a spool for the whole history: the same bytes scrim redact
// --format request prints. The client sends it as its own, and reads the
// answer as its own; a retry reads the spool again from its start.
type spliceTransport struct {
	next http.RoundTripper

	mu    sync.Mutex
	frame []byte
	body  *spool.Spool
}

// newSplice returns a transport that splices, and a copy of hc (nil:
// DefaultHTTPClient) that sends through it.
func newSplice(hc *http.Client) (*spliceTransport, *http.Client) {
	if hc == nil {
		hc = DefaultHTTPClient()
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	s := &spliceTransport{next: next}
	c := *hc
	c.Transport = s
	return s, &c
}

// fill sets the body to send for the next requests whose body is frame
// (nil: none; every request then fails).
func (s *spliceTransport) fill(frame []byte, body *spool.Spool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frame, s.body = frame, body
}

func (s *spliceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	frame, body := s.frame, s.body
	s.mu.Unlock()
	if req.Body == nil || body == nil {
		return nil, errSplice
	}
	got, err := readBody(req)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	// The client's body is the frame, perhaps with white space around it
	// (captureTransport.of trims it), which is sent as the client wrote it.
	trimmed := bytes.TrimSpace(got)
	if !bytes.Equal(trimmed, frame) {
		return nil, errSplice
	}
	lead := got[:len(got)-len(bytes.TrimLeft(got, " \t\r\n"))]
	trail := got[len(bytes.TrimRight(got, " \t\r\n")):]
	n, err := body.Len()
	if err != nil {
		return nil, err
	}
	open := func() (io.ReadCloser, error) {
		r, err := body.Reader()
		if err != nil {
			return nil, err
		}
		return io.NopCloser(io.MultiReader(bytes.NewReader(lead), r, bytes.NewReader(trail))), nil
	}
	out := req.Clone(req.Context())
	if out.Body, err = open(); err != nil {
		return nil, err
	}
	out.GetBody, out.ContentLength = open, int64(len(lead)+len(trail))+n
	return s.next.RoundTrip(out)
}
