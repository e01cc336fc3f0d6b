package search

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

// where names the kind of content part i of msg is.
func where(msg *session.Message, p *session.Part) string {
	switch {
	case p.Kind == session.PartToolCall:
		return "tool input"
	case msg.Role == session.RoleTool || p.Kind == session.PartToolResult:
		return "tool result"
	case msg.Role == session.RoleUser:
		return "user text"
	case msg.Role == session.RoleAssistant:
		return "assistant text"
	}
	return string(msg.Role) + " text"
}

// messageHits are the lines of msg's parts that match, one hit a line.
func messageHits(h session.Header, msg *session.Message, m *matcher) []Hit {
	var hits []Hit
	for i := range msg.Parts {
		hits = append(hits, partHits(h, msg, i, m, nil)...)
	}
	return hits
}

// partHits are the matching lines of part i of msg: of its text, where
// skip (placeholders redact put there) does not cover them, and of its
// input's strings unless skipInput.
func partHits(h session.Header, msg *session.Message, i int, m *matcher, skip []session.Filtered) []Hit {
	p := &msg.Parts[i]
	hit := func(text string, start, end int) Hit {
		n, ls, le := lineOf(text, start)
		line, s, e := clipAround(text[ls:le], start-ls, min(end, le)-ls)
		return Hit{SessionID: h.ID, Title: h.Title, Seq: msg.Seq, Role: msg.Role, Tool: msg.Tool,
			Where: where(msg, p), Part: i, Source: p.SourcePath, Line: n, Text: line, Start: s, End: e, CreatedAt: msg.CreatedAt}
	}
	var hits []Hit
	lastLine := -1
	for _, r := range contentRanges(p.Text, skip) {
		for _, at := range m.find(p.Text[r[0]:r[1]], -1) {
			start, end := r[0]+at[0], r[0]+at[1]
			if n, _, _ := lineOf(p.Text, start); n == lastLine {
				continue
			}
			h := hit(p.Text, start, end)
			lastLine = h.Line
			hits = append(hits, h)
		}
	}
	if len(p.Input) > 0 && !inputFiltered(skip) {
		in := inputText(p.Input)
		lastLine = -1
		for _, at := range m.find(in, -1) {
			if n, _, _ := lineOf(in, at[0]); n == lastLine {
				continue
			}
			h := hit(in, at[0], at[1])
			lastLine = h.Line
			hits = append(hits, h)
		}
	}
	return hits
}

// contentRanges are the runs of text outside the placeholders of
// filtered that are in it (Key -1).
func contentRanges(text string, filtered []session.Filtered) [][2]int {
	var out [][2]int
	at := 0
	for _, f := range filtered {
		if f.Key >= 0 {
			continue
		}
		if f.Start < at || f.End < f.Start || f.End > len(text) {
			return nil // offsets that do not fit: show nothing of it
		}
		out = append(out, [2]int{at, f.Start})
		at = f.End
	}
	return append(out, [2]int{at, len(text)})
}

func inputFiltered(filtered []session.Filtered) bool {
	return slices.ContainsFunc(filtered, func(f session.Filtered) bool { return f.Key >= 0 })
}

// inputText is what a reader of a tool call's input reads: its string
// values (not its keys), one a line, in order; the input as stored when it
// is not JSON.
func inputText(in json.RawMessage) string {
	if !json.Valid(in) {
		return string(in)
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	type level struct{ object, keyNext bool }
	var levels []level
	var b strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			return b.String()
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				levels = append(levels, level{object: t == '{', keyNext: t == '{'})
				continue
			}
			levels = levels[:len(levels)-1]
		case string:
			if n := len(levels); n > 0 && levels[n-1].keyNext {
				levels[n-1].keyNext = false
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t)
		}
		// A value has ended: in an object, a key is next.
		if n := len(levels); n > 0 && levels[n-1].object {
			levels[n-1].keyNext = true
		}
	}
}

// redactor answers, for one model, which matches are in what the model is
// sent and which are withheld from it.
type redactor struct {
	st    *session.Store
	model string
	pol   *policy.Policy
	// For a tier that redacts derived content, a session's fingerprints
	// are gathered once, in own, and let go once the session is searched
	// (a search of every session holds those it is searching, not all);
	// in shared, the caller's, for a session it has begun on (the TUI's
	// open session, which it gathers anyway: a find while the TUI counts
	// waits for its gathering rather than making a second).
	own, shared *tally.Contexts
}

func newRedactor(st *session.Store, model string, pol *policy.Policy, shared *tally.Contexts) *redactor {
	return &redactor{st: st, model: model, pol: pol, own: tally.NewContexts(), shared: shared}
}

// contextsFor is what builds what is sent of session sid.
func (r *redactor) contextsFor(sid string) *tally.Contexts {
	if r.shared != nil && r.shared.Holds(sid, r.model) {
		return r.shared
	}
	return r.own
}

// done lets go of what was gathered of session sid for the search.
func (r *redactor) done(sid string) { r.own.Forget(sid) }

// considered reports whether msg can be sent at all: events never are.
func (r *redactor) considered(msg *session.Message) bool { return msg.Role != session.RoleEvent }

// hits builds what r's model is sent of found, stored messages of session
// h that match, with x (contextsFor), as the TUI builds a page
// (tally.Contexts.Build: redaction is message by message, and content
// derived from a withheld file is found by the fingerprints of the whole
// session), and returns for each of
// them its hits in what is sent, then one withheld hit for each part and
// place the rest of its matches went to. Text only ever comes from what
// is sent.
func (r *redactor) hits(h session.Header, found []*session.Message, m *matcher, x *tally.Contexts) ([]Hit, error) {
	msgs := make([]session.Message, len(found))
	for i, f := range found {
		msgs[i] = *f
	}
	req, err := x.Build(r.st, r.pol, h.ID, r.model, msgs)
	if err != nil {
		return nil, err
	}
	sent := make(map[uint64]*session.Message, len(found))
	for i := range req.History {
		sent[req.History[i].Seq] = &req.History[i]
	}
	label := req.Report.Tier.Label
	var hits []Hit
	for i := range msgs {
		st, s := &msgs[i], sent[msgs[i].Seq]
		if s != nil {
			for j := range s.Parts {
				if !s.Parts[j].Redacted {
					hits = append(hits, partHits(h, s, j, m, s.Parts[j].Filtered)...)
				}
			}
		}
		hits = append(hits, withheld(h, st, s, m, label)...)
	}
	return hits, nil
}

// withheld are the matches in stored that sent (what the model is sent of
// it; nil when nothing is) does not carry, one hit per part and place,
// with where they went: the denied file, content of unknown source, a
// credential. A part that is not sent as it is stored, and whose
// placeholders do not account for it, is withheld as a whole: fail closed.
func withheld(h session.Header, stored, sent *session.Message, m *matcher, label string) []Hit {
	var unknown bool
	redactedPaths := map[string]bool{}
	var pathOrder []string
	if sent != nil {
		for _, p := range sent.Parts {
			if !p.Redacted {
				continue
			}
			if p.SourcePath == "" {
				unknown = true
			} else if !redactedPaths[p.SourcePath] {
				redactedPaths[p.SourcePath] = true
				pathOrder = append(pathOrder, p.SourcePath)
			}
		}
	}
	spans := redact.StoredSpans(stored, sent)
	var hits []Hit
	add := func(i int, in string, n int) {
		if n == 0 {
			return
		}
		p := &stored.Parts[i]
		hits = append(hits, Hit{SessionID: h.ID, Title: h.Title, Seq: stored.Seq, Role: stored.Role, Tool: stored.Tool,
			Where: where(stored, p), Part: i, Source: p.SourcePath, CreatedAt: stored.CreatedAt,
			Withheld: true, Tier: label, WithheldIn: in, Matches: n})
	}
	for i := range stored.Parts {
		p := &stored.Parts[i]
		text := m.find(p.Text, -1)
		var input [][]int
		if len(p.Input) > 0 {
			input = m.find(inputText(p.Input), -1)
		}
		if len(text)+len(input) == 0 {
			continue
		}
		fs, inside := spans[i]
		switch {
		case inside:
			counts := map[string]int{}
			var order []string
			note := func(in string) {
				if counts[in] == 0 {
					order = append(order, in)
				}
				counts[in]++
			}
			for _, at := range text {
				for _, f := range fs {
					if f.Key < 0 && at[0] < f.StoredEnd && at[1] > f.StoredStart {
						note(describe(f))
						break
					}
				}
			}
			for range input {
				for _, f := range fs {
					if f.Key >= 0 {
						note(describe(f))
						break
					}
				}
			}
			for _, in := range order {
				add(i, in, counts[in])
			}
		case sentAsStored(sent, p):
		case unknown:
			why, _ := stored.Unknown()
			add(i, "content of unknown source ("+why+")", len(text)+len(input))
		case redactedPaths[p.SourcePath]:
			add(i, p.SourcePath, len(text)+len(input))
		case len(pathOrder) > 0:
			add(i, strings.Join(pathOrder, ", "), len(text)+len(input))
		default:
			add(i, "content not sent", len(text)+len(input))
		}
	}
	return hits
}

// sentAsStored reports whether sent carries p unchanged.
func sentAsStored(sent *session.Message, p *session.Part) bool {
	if sent == nil {
		return false
	}
	for _, s := range sent.Parts {
		if !s.Redacted && len(s.Filtered) == 0 && s.Kind == p.Kind && s.Text == p.Text && bytes.Equal(s.Input, p.Input) {
			return true
		}
	}
	return false
}

func describe(f session.Filtered) string {
	switch f.Kind {
	case "secret":
		return "a credential (" + f.Rule + ")"
	case "path":
		return "content of " + f.Path + " (the file the call writes)"
	}
	return "content derived from " + f.Path
}
