// Package search finds text in stored sessions: in what users and
// assistants wrote, in tool inputs and in tool results, newest sessions
// first, streaming hits as they are found. For a model it searches what
// that model would be sent (runner.BuildWith, as scrim redact), and a match
// inside content the model's tier may not read is reported as withheld,
// with the path, never with its text.
//
// It scans the store rather than keeping an index (README, Performance):
// each session's stored records are read in one snapshot, on all cores, and
// only records whose bytes can hold the query are decoded.
package search

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scrim-dev/scrim/internal/cores"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

// Query is what to look for, and where.
type Query struct {
	Text  string
	Regex bool // Text is an RE2 regular expression
	// Model, when set, makes the search one of what Model would be sent,
	// under Policy.
	Model  string
	Policy *policy.Policy
	// Sessions limits the search to these IDs, in this order; nil means
	// every session, most recently updated first.
	Sessions []string
	// Contexts, if not nil, supply what building what Model is sent needs
	// from beyond the messages that match (the TUI's own, whose
	// fingerprints of the open session are gathered already); nil: the
	// search gathers its own.
	Contexts *tally.Contexts
}

// Hit is one line that matches, or, for a model, matches withheld from it.
type Hit struct {
	SessionID string       `json:"session"`
	Title     string       `json:"title"`
	Seq       uint64       `json:"seq"`
	Role      session.Role `json:"role"`
	Tool      string       `json:"tool,omitempty"`
	Where     string       `json:"where"` // user text, assistant text, tool input, tool result, event
	Part      int          `json:"part"`  // index into the message's parts: as sent, with a model; as stored for a withheld hit
	// Source is the file the matching part was read from, "" when it is
	// not file content.
	Source string `json:"source,omitempty"`
	Line   int    `json:"line"` // 1-based, in the part's text or input
	// Text is the matching line, at most about 240 bytes around the match,
	// which is Text[Start:End]. Withheld hits have none.
	Text       string    `json:"text,omitempty"`
	Start      int       `json:"start"`
	End        int       `json:"end"`
	CreatedAt  time.Time `json:"createdAt"`
	Withheld   bool      `json:"withheld,omitempty"`
	Tier       string    `json:"tier,omitempty"`       // withheld: the tier's label
	WithheldIn string    `json:"withheldIn,omitempty"` // withheld: the denied path, or why (unknown source, a credential)
	Matches    int       `json:"matches,omitempty"`    // withheld: how many matches
}

// Stats says what a search read.
type Stats struct {
	Sessions, Messages, Decoded int
	Bad                         []session.DecodeError
}

// errStop ends a search early: emit said so, or the context ended.
var errStop = errors.New("search stopped")

// Run searches st and calls emit with each hit, in order: sessions most
// recently updated first, messages and lines in order. emit is called from
// one goroutine; an error from it stops the search and is returned.
func Run(ctx context.Context, st *session.Store, q Query, emit func(Hit) error) (Stats, error) {
	m, err := newMatcher(q.Text, q.Regex)
	if err != nil {
		return Stats{}, err
	}
	var heads []session.Header
	var stats Stats
	if q.Sessions == nil {
		list, bad, err := st.List()
		if err != nil {
			return stats, err
		}
		heads, stats.Bad = list, bad
	} else {
		for _, id := range q.Sessions {
			h, err := st.Get(id)
			if err != nil {
				return stats, err
			}
			heads = append(heads, h)
		}
	}
	var r *redactor
	if q.Model != "" {
		r = newRedactor(st, q.Model, q.Policy, q.Contexts)
	}

	// Workers take sessions in order and pass each session's hits, in
	// batches as they find them, through its slot; the hits of a session go
	// out once every newer session's have, so output is in order while the
	// scan runs ahead on every core, and the newest session's first hits go
	// out before its scan ends.
	slots := make([]chan batch, len(heads))
	for i := range slots {
		slots[i] = make(chan batch, 256)
	}
	ctx, cancel := context.WithCancel(ctx)
	var next atomic.Int64
	var wg sync.WaitGroup
	defer func() {
		cancel() // a worker waiting on a full slot gives up
		wg.Wait()
	}()
	for range min(cores.N(), max(len(heads), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(heads) || ctx.Err() != nil {
					return
				}
				send := func(b batch) bool {
					select {
					case slots[i] <- b:
						return true
					case <-ctx.Done():
						return false
					}
				}
				last := scanSession(ctx, st, heads[i], m, r, &buf, func(hits []Hit) bool { return send(batch{hits: hits}) })
				last.last = true
				if !send(last) {
					return
				}
			}
		}()
	}
	for i := range heads {
		for done := false; !done; {
			var b batch
			select {
			case b = <-slots[i]:
			case <-ctx.Done():
				return stats, ctx.Err()
			}
			for _, h := range b.hits {
				if err := emit(h); err != nil {
					return stats, err
				}
			}
			if done = b.last; !done {
				continue
			}
			stats.Sessions++
			stats.Messages += b.msgs
			stats.Decoded += b.decoded
			stats.Bad = append(stats.Bad, b.bad...)
			if b.err != nil {
				return stats, b.err
			}
		}
	}
	return stats, nil
}

// batch is hits of one session; the last batch of a session also says
// what its scan read and how it ended.
type batch struct {
	hits          []Hit
	last          bool
	msgs, decoded int
	bad           []session.DecodeError
	err           error
}

// scanSession finds the hits of one session: in the stored messages,
// handed to send as they are found (the first at once, then 64 at a time),
// or, with r, in what r's model would be sent of them, built a
// foundBatch of matching messages at a time. It returns the session's last
// batch. send returns false when the search is over.
func scanSession(ctx context.Context, st *session.Store, h session.Header, m *matcher, r *redactor, buf *[]byte, send func([]Hit) bool) batch {
	var res batch
	var hits []Hit
	var found []*session.Message // with r: the stored messages that match
	var x *tally.Contexts
	if r != nil {
		x = r.contextsFor(h.ID)
		defer r.done(h.ID)
	}
	sent := 0
	bad, err := st.ScanStored(h.ID, func(seq uint64, v []byte) error {
		res.msgs++
		if res.msgs%256 == 0 && ctx.Err() != nil {
			return errStop
		}
		if !m.mayMatch(v, buf) {
			return nil
		}
		res.decoded++
		msg := new(session.Message)
		if err := session.DecodeStored(h.ID, seq, v, msg); err != nil {
			res.bad = append(res.bad, session.DecodeError{SessionID: h.ID, Seq: seq, Err: err})
			return nil
		}
		switch {
		case r == nil:
			hits = append(hits, messageHits(h, msg, m)...)
			if len(hits) > 0 && (sent == 0 || len(hits) >= 64) {
				sent += len(hits)
				if !send(hits) {
					return errStop
				}
				hits = nil
			}
		case r.considered(msg) && len(messageHits(h, msg, m)) > 0:
			found = append(found, msg)
			if len(found) == foundBatch {
				built, err := r.hits(h, found, m, x)
				if err != nil {
					return err
				}
				found = found[:0]
				if len(built) > 0 && !send(built) {
					return errStop
				}
			}
		}
		return nil
	})
	res.bad = append(bad, res.bad...)
	switch {
	case errors.Is(err, errStop):
		res.err = ctx.Err()
	case err != nil:
		res.err = err
	case len(found) > 0:
		res.hits, res.err = r.hits(h, found, m, x)
	default:
		res.hits = hits
	}
	return res
}

// foundBatch is how many matching messages a search for a model builds
// what is sent of at once: the search holds that many decoded, not every
// match of the session (a word in a fifth of a million messages took 3 GB
// that way; 5.5 GB for a tier that redacts derived content, which built
// the whole session).
var foundBatch = 1024 // a variable for tests

// clipAround is the line around [start, end), at most about 240 bytes, and
// where the match is in it; cut at rune boundaries.
func clipAround(line string, start, end int) (string, int, int) {
	const room = 240
	if len(line) <= room {
		return line, start, end
	}
	from := max(0, start-room/3)
	to := min(len(line), max(end, from+room))
	for from > 0 && !isRuneStart(line[from]) {
		from--
	}
	for to < len(line) && !isRuneStart(line[to]) {
		to++
	}
	return line[from:to], start - from, end - from
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// lineOf returns the 1-based number of the line of s that offset at is in,
// and that line's bounds.
func lineOf(s string, at int) (n, start, end int) {
	start = strings.LastIndexByte(s[:at], '\n') + 1
	end = strings.IndexByte(s[at:], '\n')
	if end < 0 {
		end = len(s)
	} else {
		end += at
	}
	return strings.Count(s[:start], "\n") + 1, start, end
}
