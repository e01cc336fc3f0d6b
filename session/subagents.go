package session

import (
	"errors"
	"slices"
	"strings"
	"sync"
)

// A subagent's conversation is a session of its own (the importers make
// one per subagent transcript, sidechain or child session), but what it
// reads reaches its parent: the parent's model is sent the subagent's
// answer (a Task result), and repeats it. So a tier that redacts derived
// content gathers what it withholds of a session's subagents too. The link
// is the one the importers write into each subagent's Origin.

// ParentOrigins returns the Origin of the session that the session of
// origin o is a subagent of, as the importers (session/importers) write
// them:
//
//	imported from claude: A (subagent of P)               → imported from claude: P
//	imported from claude: F (sidechain)                   → imported from claude: F
//	imported from crush: F (session C) (subagent of P)    → imported from crush: F (session P)
//	imported from opencode: F (session C) (subagent of P) → imported from opencode: F (session P)
//	imported from codex: F (subagent of thread T)         → the rollout named …-T.jsonl (selves)
//	imported from gemini: D/chats/P/C.jsonl (subagent of session P) → D/chats/session-…-<P's first 8>.jsonl (selves)
//
// It is nil for a session that is no one's subagent. A file name that holds
// " (subagent of " makes the mark ambiguous: each reading is returned, so
// that a session is linked to more subagents than it has, and more is
// withheld, never less.
func ParentOrigins(o string) []string {
	const from, side, sub = "imported from ", " (sidechain)", " (subagent of "
	if !strings.HasPrefix(o, from) {
		return nil
	}
	if rest, ok := strings.CutSuffix(o, side); ok {
		if strings.Contains(rest, ": ") {
			return []string{rest}
		}
		return nil
	}
	if !strings.HasSuffix(o, ")") {
		return nil
	}
	var out []string
	for i := len(from); ; {
		j := strings.Index(o[i:], sub)
		if j < 0 {
			return out
		}
		i += j
		rest, p := o[:i], o[i+len(sub):len(o)-1]
		i += len(sub)
		if p == "" {
			continue
		}
		if k := strings.LastIndex(rest, " (session "); k >= 0 && strings.HasSuffix(rest, ")") {
			// A child session of a database: its parent is in the same one.
			out = append(out, rest[:k]+" (session "+p+")")
			continue
		}
		agent, file, ok := strings.Cut(rest[len(from):], ": ")
		if id, isSession := strings.CutPrefix(p, "session "); ok && agent == "gemini" && isSession && len(id) >= 8 {
			// chats/<parent ID>/<ID>.jsonl: the parent is chats/session-…-<parent ID's first 8>.
			out = append(out, geminiSession(parentDir(parentDir(file)), id[:8]))
			continue
		}
		if ok {
			out = append(out, from+agent+": "+p)
		}
	}
}

// links is who is whose subagent, read from the sessions' headers when
// first asked, and kept up to date by the writers that make or delete
// sessions (an import, a new session, a delete), which call changed once
// their transaction has committed: the sessions they name are read again
// at the next question, not all of them (10 ms at 5,000 sessions, after
// every file of a watcher's pass).
type links struct {
	mu       sync.Mutex
	read     bool                // the headers were read
	stale    map[string]bool     // sessions changed since, to read again
	origin   map[string]string   // session ID → its Origin
	children map[string][]string // Origin → the IDs of its subagents
	bySelf   map[string][]string // each of selves(Origin) → the IDs of the sessions that have it
}

// changed says sessions ids were made, changed or deleted.
func (l *links) changed(ids ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.read {
		return
	}
	if l.stale == nil {
		l.stale = map[string]bool{}
	}
	for _, id := range ids {
		l.stale[id] = true
	}
}

// add files session id, of origin o.
func (l *links) add(id, o string) {
	l.origin[id] = o
	for _, self := range selves(o) {
		l.bySelf[self] = append(l.bySelf[self], id)
	}
	for _, p := range ParentOrigins(o) {
		l.children[p] = append(l.children[p], id)
	}
}

// drop unfiles session id.
func (l *links) drop(id string) {
	o, ok := l.origin[id]
	if !ok {
		return
	}
	delete(l.origin, id)
	without := func(m map[string][]string, keys []string) {
		for _, k := range keys {
			if ids := slices.DeleteFunc(m[k], func(x string) bool { return x == id }); len(ids) > 0 {
				m[k] = ids
			} else {
				delete(m, k)
			}
		}
	}
	without(l.bySelf, selves(o))
	without(l.children, ParentOrigins(o))
}

// Subagents returns the sessions that are subagents of session id, and
// theirs in turn, by ID: every conversation whose reads can reach id's
// through an answer. A session with none (most, and every session made in
// scrim) gives nil. The headers are as stored now.
func (s *Store) Subagents(id string) ([]Header, error) {
	h, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(h.Origin, "imported from ") {
		return nil, nil
	}
	var ids []string
	err = s.linked(func(l *links) {
		ids = l.walk(id, h.Origin, func(o string) []string {
			var out []string
			for _, self := range selves(o) {
				out = append(out, l.children[self]...)
			}
			return out
		})
	})
	if err != nil {
		return nil, err
	}
	return s.headers(ids)
}

// Parents returns the sessions that session id is a subagent of, and
// theirs in turn, by ID: the sessions whose derived redaction reads id's
// (see Subagents). A subagent's import changes what they withhold.
func (s *Store) Parents(id string) ([]Header, error) {
	h, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	if len(ParentOrigins(h.Origin)) == 0 {
		return nil, nil
	}
	var ids []string
	err = s.linked(func(l *links) {
		ids = l.walk(id, h.Origin, func(o string) []string {
			var out []string
			for _, p := range ParentOrigins(o) {
				out = append(out, l.bySelf[p]...)
			}
			return out
		})
	})
	if err != nil {
		return nil, err
	}
	return s.headers(ids)
}

// Related returns session id's parents and its subagents (Parents,
// Subagents): the sessions of its agent run whose figures, for a tier with
// derived = "redact", rest on its, or its on theirs.
func (s *Store) Related(id string) (parents, subagents []Header, err error) {
	if parents, err = s.Parents(id); err != nil {
		return nil, nil, err
	}
	if subagents, err = s.Subagents(id); err != nil {
		return nil, nil, err
	}
	return parents, subagents, nil
}

// IDs returns the IDs of hs, in order.
func IDs(hs []Header) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// walk returns the sessions next leads to from session id, of origin o,
// and from them in turn (by their origins), each once, id left out.
func (l *links) walk(id, o string, next func(o string) []string) []string {
	var out []string
	seen := map[string]bool{id: true}
	for queue := next(o); len(queue) > 0; queue = queue[1:] {
		c := queue[0]
		if seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
		queue = append(queue, next(l.origin[c])...)
	}
	return out
}

// codexThread is the thread of a Codex rollout imported whole (origin
// "imported from codex: …/rollout-<time>-<thread>.jsonl"), which its
// subagents' rollouts name: "imported from codex: F (subagent of thread
// <thread>)".
func codexThread(o string) string {
	f, ok := strings.CutPrefix(o, "imported from codex: ")
	if !ok {
		return ""
	}
	f, ok = strings.CutSuffix(f, ".jsonl")
	if !ok || len(f) < 36 {
		return ""
	}
	id := f[len(f)-36:]
	for i, c := range id {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return ""
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
			return ""
		}
	}
	return id
}

// geminiSession names the Gemini CLI session of the folder chats whose ID
// begins with short (selves, ParentOrigins).
func geminiSession(chats, short string) string {
	return "imported from gemini: " + chats + " session " + short
}

// parentDir is the folder f is in, by either separator (an origin's path
// may be a Windows one).
func parentDir(f string) string {
	if i := strings.LastIndexAny(f, `/\`); i >= 0 {
		return f[:i]
	}
	return ""
}

// selves returns the origins a subagent of the session of origin o names
// as its parent's: o, and o without its own subagent mark (a sidechain of a
// subagent's transcript names the transcript; each reading of an ambiguous
// mark, as ParentOrigins).
func selves(o string) []string {
	out := []string{o}
	if t := codexThread(o); t != "" {
		out = append(out, "imported from codex: thread "+t)
	}
	if f, ok := strings.CutPrefix(o, "imported from gemini: "); ok {
		// chats/session-<time>-<ID's first 8>.json(l), which its
		// subagents name by the whole ID.
		name := f[strings.LastIndexAny(f, `/\`)+1:]
		name = strings.TrimSuffix(strings.TrimSuffix(name, ".jsonl"), ".json")
		if strings.HasPrefix(name, "session-") && len(name) > len("session-")+8 {
			out = append(out, geminiSession(parentDir(f), name[len(name)-8:]))
		}
	}
	if !strings.HasSuffix(o, ")") {
		return out
	}
	const sub = " (subagent of "
	for i := 0; ; {
		j := strings.Index(o[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, o[:i+j])
		i += j + len(sub)
	}
}

// linked runs fn on the store's links as they are now.
func (s *Store) linked(fn func(l *links)) error {
	l := &s.links
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.read {
		all, _, err := s.List()
		if err != nil {
			return err
		}
		l.origin, l.children, l.bySelf = map[string]string{}, map[string][]string{}, map[string][]string{}
		for _, h := range all {
			l.add(h.ID, h.Origin)
		}
		l.read = true
	}
	for id := range l.stale {
		h, err := s.Get(id)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		l.drop(id)
		if err == nil {
			l.add(id, h.Origin)
		}
		delete(l.stale, id)
	}
	fn(l)
	return nil
}

// headers reads the headers of ids as stored now, sorted by ID; one gone
// meanwhile is left out.
func (s *Store) headers(ids []string) ([]Header, error) {
	slices.Sort(ids)
	var out []Header
	for _, id := range ids {
		h, err := s.Get(id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}
