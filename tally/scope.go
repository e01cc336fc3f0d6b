package tally

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// Scope is what a tier's figures of a session rest on beside the session
// itself: for a tier with derived = "redact", its subagents' sessions
// (session.Store.Subagents), whose withheld content the session's answers
// may repeat; for any other tier, nothing.
type Scope struct {
	// Own is the session's own revision (session.Store.Revision), which a
	// gathering's second read checks (ReadAt).
	Own uint64
	// Rev is what a kept figure is kept at: Own when there are no Subs, else
	// a digest of Own and each sub's ID, revision and message count, so
	// that a subagent imported, grown or rewritten since makes the figure
	// be made again.
	Rev  uint64
	Subs []session.Header
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
	if sc.Subs, err = st.Subagents(sid); err != nil || len(sc.Subs) == 0 {
		return sc, err
	}
	b := binary.AppendUvarint(nil, own)
	for _, h := range sc.Subs {
		rev, err := st.Revision(h.ID)
		if err != nil {
			return Scope{}, err
		}
		b = append(b, h.ID...)
		b = binary.AppendUvarint(append(b, 0), rev)
		b = binary.AppendUvarint(b, h.Count)
	}
	sc.Rev = xxhash.Sum64(b)
	return sc, nil
}

// Recheck hands fn, in order and in pieces of piece messages, the messages
// that carry a source path of session sid from its first to its count-th,
// then of sc's subagents, each from its first to the count it had when sc
// was taken, then nothing with last set: all that a stale gathering checks
// again (redact.DerivedBuilder.Recheck).
func (sc Scope) Recheck(st *session.Store, sid string, count, piece uint64, fn func(msgs []session.Message, last bool)) error {
	each := func(msgs []session.Message, _ bool) error {
		fn(msgs, false)
		return nil
	}
	if err := st.SourcedPieces(sid, 1, count, piece, each); err != nil {
		return err
	}
	for _, h := range sc.Subs {
		if err := st.SourcedPieces(h.ID, 1, h.Count, piece, each); err != nil {
			return err
		}
	}
	fn(nil, true)
	return nil
}

// Beside hands add, in order, the messages that carry a source path of sc's
// subagents, each session's from its first to the count it had when sc was
// taken, in pieces of piece messages that prepare readied on every core
// (session.Store.SourcedPiecesPrepared).
func (sc Scope) Beside(st *session.Store, piece uint64, prepare func(msgs []session.Message) any, add func(prepared any)) error {
	for _, h := range sc.Subs {
		err := st.SourcedPiecesPrepared(h.ID, 1, h.Count, piece, prepare, func(_ []session.Message, p any, _ bool) error {
			add(p)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
