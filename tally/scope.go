package tally

import (
	"encoding/binary"
	"sort"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// Scope is what a tier's figures of a session rest on beside the session
// itself: for a tier with derived = "redact", the sessions of its agent run
// whose withheld content it may repeat; for any other tier, nothing.
//
// Those are its subagents' sessions (session.Store.Subagents), whose answers
// it holds, whole; and its parents' (session.Store.Parents), whose words its
// prompts repeat, up to its last message: what a parent read after that
// cannot be in this session, and a parent that runs on must not make its
// subagents be gathered and counted again at each of its messages.
type Scope struct {
	// Own is the session's own revision (session.Store.Revision), which a
	// gathering's second read checks (ReadAt).
	Own uint64
	// Rev is what a kept figure is kept at: Own when there are no Related,
	// else a digest of Own and each one's ID, revision and Upto, so that a
	// subagent imported, grown or rewritten since (or a parent rewritten,
	// or grown before this session's end) makes the figure be made again.
	Rev     uint64
	Related []Related
}

// Related is a session of a Scope, read from its first message to its
// Upto-th.
type Related struct {
	ID     string
	Upto   uint64
	Parent bool // a parent's, up to this session's last message; else a subagent's, whole
}

// ScopeOf returns session sid's scope for model's tier now.
func ScopeOf(st *session.Store, pol *policy.Policy, sid, model string) (Scope, error) {
	own, err := st.Revision(sid)
	if err != nil {
		return Scope{}, err
	}
	sc := Scope{Own: own, Rev: own}
	if tier, _ := pol.TierFor(model); !tier.RedactsDerived() {
		return sc, nil
	}
	parents, subs, err := st.Related(sid)
	if err != nil {
		return Scope{}, err
	}
	for _, h := range subs {
		sc.Related = append(sc.Related, Related{ID: h.ID, Upto: h.Count})
	}
	if len(parents) > 0 {
		end, err := lastTime(st, sid)
		if err != nil {
			return Scope{}, err
		}
		for _, h := range parents {
			upto, err := upTo(st, h, end)
			if err != nil {
				return Scope{}, err
			}
			sc.Related = append(sc.Related, Related{ID: h.ID, Upto: upto, Parent: true})
		}
	}
	if len(sc.Related) == 0 {
		return sc, nil
	}
	b := binary.AppendUvarint(nil, own)
	for _, r := range sc.Related {
		rev, err := st.Revision(r.ID)
		if err != nil {
			return Scope{}, err
		}
		b = append(b, r.ID...)
		b = binary.AppendUvarint(append(b, 0), rev)
		b = binary.AppendUvarint(b, r.Upto)
	}
	sc.Rev = xxhash.Sum64(b)
	return sc, nil
}

// lastTime is when session sid's last message was made; zero when it has
// none or does not say.
func lastTime(st *session.Store, sid string) (time.Time, error) {
	h, err := st.Get(sid)
	if err != nil || h.Count == 0 {
		return time.Time{}, err
	}
	msgs, _, err := st.Range(sid, h.Count, h.Count)
	if err != nil || len(msgs) == 0 {
		return time.Time{}, err
	}
	return msgs[0].CreatedAt, nil
}

// upTo is how many of parent p's first messages were made by end: a
// session's messages are in the order they were made. A zero end, or a
// message whose time is not known, takes them all (more is gathered, never
// less). Found by halves, a message read at each step, and remembered for
// the parent as it is (ID, revision, count) and end.
func upTo(st *session.Store, p session.Header, end time.Time) (uint64, error) {
	if end.IsZero() {
		return p.Count, nil
	}
	rev, err := st.Revision(p.ID)
	if err != nil {
		return 0, err
	}
	k := boundKey{st.Dir(), p.ID, rev, p.Count, end.UnixNano()}
	bounds.Lock()
	n, ok := bounds.m[k]
	bounds.Unlock()
	if ok {
		return n, nil
	}
	var readErr error
	// The first message made after end; those before it are taken.
	i := sort.Search(int(p.Count), func(i int) bool {
		if readErr != nil {
			return true
		}
		msgs, _, err := st.Range(p.ID, uint64(i)+1, uint64(i)+1)
		if err != nil {
			readErr = err
			return true
		}
		return len(msgs) == 1 && !msgs[0].CreatedAt.IsZero() && msgs[0].CreatedAt.After(end)
	})
	if readErr != nil {
		return 0, readErr
	}
	n = uint64(i)
	bounds.Lock()
	if len(bounds.m) >= 4096 {
		clear(bounds.m) // a cache: what is let go is found again
	}
	bounds.m[k] = n
	bounds.Unlock()
	return n, nil
}

type boundKey struct {
	store      string // sessions of two stores may share an ID (a copy)
	id         string
	rev, count uint64
	end        int64
}

// bounds remembers upTo's answers: the TUI asks at every page it builds.
// Keyed by the store's folder, not the store, which it would keep alive.
var bounds = struct {
	sync.Mutex
	m map[boundKey]uint64
}{m: map[boundKey]uint64{}}

// IDs returns the IDs of sc's related sessions, in order (nil when none).
func (sc Scope) IDs() []string {
	var out []string
	for _, r := range sc.Related {
		out = append(out, r.ID)
	}
	return out
}

// Recheck hands fn, in order and in pieces of piece messages, the messages
// that carry a source path of session sid from its first to its count-th,
// then of sc's related sessions, each from its first to its Upto-th, then
// nothing with last set: all that a stale gathering checks again
// (redact.DerivedBuilder.Recheck).
func (sc Scope) Recheck(st *session.Store, sid string, count, piece uint64, fn func(msgs []session.Message, last bool)) error {
	each := func(msgs []session.Message, _ bool) error {
		fn(msgs, false)
		return nil
	}
	if err := st.SourcedPieces(sid, 1, count, piece, each); err != nil {
		return err
	}
	for _, r := range sc.Related {
		if err := st.SourcedPieces(r.ID, 1, r.Upto, piece, each); err != nil {
			return err
		}
	}
	fn(nil, true)
	return nil
}

// Beside hands add, in order, the messages that carry a source path of sc's
// related sessions, each from its first to its Upto-th, in pieces of piece
// messages that prepare readied on every core
// (session.Store.SourcedPiecesPrepared).
func (sc Scope) Beside(st *session.Store, piece uint64, prepare func(msgs []session.Message) any, add func(prepared any)) error {
	for _, r := range sc.Related {
		err := st.SourcedPiecesPrepared(r.ID, 1, r.Upto, piece, prepare, func(_ []session.Message, p any, _ bool) error {
			add(p)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
