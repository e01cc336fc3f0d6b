package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"slices"

	"charm.land/fantasy"
	"github.com/tidwall/gjson"

	"github.com/scrim-dev/scrim/session"
)

// RequestWriter writes the body RequestBody returns, a piece of the
// redacted history at a time: what it holds is a piece, not the session
// (RequestBody's whole prompt and body, at a million messages, peaked at
// 4.5–5.2 GB). The provider's client still writes every byte: each piece's
// provider messages go through it as a request of their own, and their
// encodings, taken from that body, are spliced in order into the body of
// a request of only the system prompt and the tools. A provider message is
// encoded the same whatever stands beside it (the client maps the prompt a
// message at a time), so the spliced body is the one RequestBody returns;
// TestRequestWriterIsRequestBody holds the two to that.
type RequestWriter struct {
	ctx     context.Context
	w       io.Writer
	lm      fantasy.LanguageModel
	prov    Provider
	model   string
	tools   []fantasy.Tool
	capture *captureTransport
	p       prompter
	results *laterResults
	frame   []byte // the body of a request of the system prompt and tools alone
	tail    []byte // what follows the history in the body
	err     error
}

// NewRequestWriter starts the body of session sessionID's request to model
// on w: the part before the history (the system prompt) is written now,
// the history as Add is given it, the rest by Close.
func (r *Runner) NewRequestWriter(ctx context.Context, w io.Writer, sessionID, model string) (*RequestWriter, error) {
	h, err := r.store.Get(sessionID)
	if err != nil {
		return nil, err
	}
	tier, _ := r.pol.TierFor(model)
	capture := &captureTransport{}
	lm, prov, err := r.provs.connect(ctx, model, &http.Client{Transport: capture}, true)
	if err != nil {
		return nil, err // one line naming the provider and what to set, as for a send
	}
	results := &laterResults{seen: newHashedIDs(), read: func(after uint64, add func(id string)) error {
		if after >= h.Count {
			return nil
		}
		_, err := r.store.Scan(sessionID, after+1, h.Count, func(m *session.Message) error {
			if m.Role == session.RoleTool && m.ToolCallID != "" {
				add(m.ToolCallID)
			}
			return nil
		})
		return err
	}}
	rw := &RequestWriter{ctx: ctx, w: w, lm: lm, prov: prov, model: model, tools: toolDefs(tier), capture: capture,
		p: prompter{calls: newHashedIDs(), answered: results.has}, results: results}
	frame, err := rw.body(rw.frameRequest().Prompt)
	if err != nil {
		return nil, err
	}
	msgs, err := messagesOf(frame)
	if err != nil {
		return nil, err
	}
	// The system prompt's message, the only one, ends where the history
	// goes: {"messages":[{system}<here>],...}.
	at, end := -1, -1
	if len(msgs) == 1 {
		at = bytes.Index(frame, []byte(msgs[0]))
		end = at + len(msgs[0])
	}
	if at < 1 || frame[at-1] != '[' || end >= len(frame) || frame[end] != ']' {
		return nil, fmt.Errorf("provider %q: its client wrote a request whose messages scrim cannot find", prov.Name)
	}
	if _, err := w.Write(frame[:end]); err != nil {
		return nil, err
	}
	rw.frame, rw.tail = frame, frame[end:]
	return rw, nil
}

// frameRequest is the request of the system prompt and the tools alone:
// the one whose body is frame, and the one a streamed send has its client
// send (spliceTransport puts the whole body in its place).
func (rw *RequestWriter) frameRequest() Request {
	return Request{Prompt: fantasy.Prompt{systemMessage(DefaultSystem)}, Tools: rw.tools}
}

// Add writes the provider messages of hist, the next piece of the redacted
// history (runner.Request's History, a piece at a time, in order).
func (rw *RequestWriter) Add(hist []session.Message) error {
	if rw.err != nil {
		return rw.err
	}
	rw.results.piece(hist)
	rw.err = rw.write(rw.p.add(nil, hist))
	return rw.err
}

// Close writes what follows the history: an answer for a call the history
// never answers, then the rest of the body. It does not close w.
func (rw *RequestWriter) Close() error {
	if rw.err != nil {
		return rw.err
	}
	if rw.err = rw.write(rw.p.flush(nil)); rw.err != nil {
		return rw.err
	}
	_, rw.err = rw.w.Write(rw.tail)
	return rw.err
}

// write writes the encodings of prompt's messages, each after a comma.
func (rw *RequestWriter) write(prompt fantasy.Prompt) error {
	if rw.results.err != nil {
		return rw.results.err
	}
	if len(prompt) == 0 {
		return nil
	}
	body, err := rw.body(prompt)
	if err != nil {
		return err
	}
	msgs, err := messagesOf(body)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if _, err := io.WriteString(rw.w, ","); err != nil {
			return err
		}
		if _, err := io.WriteString(rw.w, m); err != nil {
			return err
		}
	}
	return nil
}

// body is the body the provider's client writes for prompt and the tools.
func (rw *RequestWriter) body(prompt fantasy.Prompt) ([]byte, error) {
	body, err := rw.capture.of(rw.ctx, rw.lm, fantasy.Call{Prompt: prompt, Tools: rw.tools})
	if err != nil {
		return nil, describe(rw.prov, rw.model, err)
	}
	return body, nil
}

// messagesOf returns the encoding of each message of body, a request's
// body, as written there. gjson finds them without decoding them
// (encoding/json's Unmarshal into raw messages validated and copied every
// byte: 4.4 of the 24 CPU-s of a million-message preview).
func messagesOf(body []byte) ([]string, error) {
	msgs := gjson.GetBytes(body, "messages")
	if !msgs.IsArray() {
		return nil, errors.New("the provider's client wrote a request without messages")
	}
	var out []string
	msgs.ForEach(func(_, m gjson.Result) bool {
		out = append(out, m.Raw)
		return true
	})
	return out, nil
}

// laterResults says whether a call has a result anywhere in the history,
// as toPrompt's set of every result does, from the pieces given so far
// and, asked about a call none of them answers (rare: a call cut off), the
// rest of the stored session, read once.
type laterResults struct {
	seen  *hashedIDs // results in the pieces given so far
	ahead *hashedIDs // results after them, once read
	after uint64     // the Seq of the last message of those pieces
	read  func(after uint64, add func(id string)) error
	err   error
}

// piece notes the results of hist, the next piece, before its calls are
// flushed: a call's result may come in the same piece.
func (l *laterResults) piece(hist []session.Message) {
	for i := range hist {
		if hist[i].Role == session.RoleTool && hist[i].ToolCallID != "" {
			l.seen.add(hist[i].ToolCallID)
		}
	}
	if len(hist) > 0 {
		l.after = hist[len(hist)-1].Seq
	}
}

func (l *laterResults) has(id string) bool {
	if l.seen.has(id) {
		return true
	}
	if l.ahead == nil {
		l.ahead = newHashedIDs()
		l.err = l.read(l.after, l.ahead.add)
	}
	return l.ahead.has(id)
}

// hashedIDs holds a 64-bit hash of each ID under a seed of its own (not
// one a history could be made to collide under): the hashes in a sorted
// slice, the latest in a small map until there are enough of them to
// merge in. A map of every hash took about 32 bytes an ID, 16 MB of a
// streamed send of a million messages; this takes 8, and up to 4 more
// for the map.
type hashedIDs struct {
	seed   maphash.Seed
	sorted []uint64
	recent map[uint64]struct{}
}

func newHashedIDs() *hashedIDs {
	return &hashedIDs{seed: maphash.MakeSeed(), recent: map[uint64]struct{}{}}
}

// mergeEvery is the fewest hashes the map holds before they are merged
// into the slice (or an eighth of the slice, if more): a merge copies the
// slice.
const mergeEvery = 4096

func (s *hashedIDs) add(id string) {
	s.recent[maphash.String(s.seed, id)] = struct{}{}
	if len(s.recent) >= max(mergeEvery, len(s.sorted)/8) {
		s.merge()
	}
}

// merge moves the map's hashes into the slice.
func (s *hashedIDs) merge() {
	add := make([]uint64, 0, len(s.recent))
	for h := range s.recent {
		add = append(add, h)
	}
	slices.Sort(add)
	merged := make([]uint64, 0, len(s.sorted)+len(add))
	i, j := 0, 0
	for i < len(s.sorted) || j < len(add) {
		var h uint64
		switch {
		case j == len(add) || i < len(s.sorted) && s.sorted[i] < add[j]:
			h, i = s.sorted[i], i+1
		case i == len(s.sorted) || add[j] < s.sorted[i]:
			h, j = add[j], j+1
		default: // in both
			h, i, j = add[j], i+1, j+1
		}
		merged = append(merged, h)
	}
	s.sorted = merged
	clear(s.recent)
}

func (s *hashedIDs) has(id string) bool {
	h := maphash.String(s.seed, id)
	if _, ok := s.recent[h]; ok {
		return true
	}
	_, ok := slices.BinarySearch(s.sorted, h)
	return ok
}
