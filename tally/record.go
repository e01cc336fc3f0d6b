package tally

import (
	"encoding/binary"
	"errors"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// recordVersion changes whenever the layout below does: an older record is
// then counted again, not misread.
const recordVersion = 2

// name is the record's name beside the session: one per tier (every model
// of a tier is sent the same).
func name(tier *policy.Tier) string { return "tier/" + tier.Name }

// Kept is a count read back from the store, with what it still needs.
type Kept struct {
	Counts
	// Revision is the session's revision the count was made at; a count
	// made on top of this one is kept with it.
	Revision uint64
}

// Load returns the kept count of session sid for model when it still holds:
// the same revision, no more messages counted than the session has, the
// tier's fingerprint unchanged and, for a tier with deny_files, every folder
// its decisions looked in unchanged. rev is the session's revision now,
// for the count that is made when none holds.
func Load(st *session.Store, pol *policy.Policy, sid, model string) (k Kept, ok bool, rev uint64, err error) {
	tier, _ := pol.TierFor(model)
	if tier == nil {
		return k, false, 0, nil
	}
	sc, err := ScopeOf(st, pol, sid, model)
	if err != nil {
		return k, false, 0, err
	}
	rev = sc.Rev // for a tier with derived = "redact", its agent run's too
	raw, found, err := st.CountRecord(sid, name(tier))
	if err != nil || !found {
		return k, false, rev, err
	}
	h, err := st.Get(sid)
	if err != nil {
		return k, false, rev, err
	}
	r, err := decode(raw)
	if err != nil || r.revision != rev || r.fingerprint != pol.Fingerprint(tier) || r.counts.Upto > h.Count {
		return k, false, rev, nil
	}
	if len(tier.DenyFiles) > 0 && !pol.TeamUnchanged(r.team) {
		return k, false, rev, nil
	}
	return Kept{Counts: r.counts, Revision: rev}, true, rev, nil
}

// Save keeps c, counted at the session's revision rev, beside session sid.
// A tier with deny_files is kept only when the policy can say what its
// decisions looked at (policy.TeamSnapshot).
func Save(st *session.Store, pol *policy.Policy, sid, model string, rev uint64, c Counts) error {
	tier, _ := pol.TierFor(model)
	if tier == nil {
		return nil
	}
	r := record{fingerprint: pol.Fingerprint(tier), revision: rev, counts: c}
	if len(tier.DenyFiles) > 0 {
		snap, ok := pol.TeamSnapshot()
		if !ok {
			return nil
		}
		r.team = snap
	}
	return st.PutCountRecord(sid, name(tier), r.encode())
}

type record struct {
	fingerprint string
	team        []byte
	revision    uint64
	counts      Counts
}

func (r *record) encode() []byte {
	b := []byte{recordVersion}
	b = appendBytes(b, []byte(r.fingerprint))
	b = appendBytes(b, r.team)
	c := &r.counts
	for _, v := range []uint64{r.revision, c.Upto, uint64(c.Unknown), uint64(c.Sent), uint64(c.Derived), uint64(c.Secrets)} {
		b = binary.AppendUvarint(b, v)
	}
	b = appendSeqs(b, c.Redacted)
	b = appendSeqs(b, c.Unknowns)
	b = binary.AppendUvarint(b, uint64(len(c.Denied)))
	for _, p := range c.Denied {
		b = appendBytes(b, []byte(p))
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

// appendSeqs writes ascending Seqs as differences: most are small.
func appendSeqs(b []byte, seqs []uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(seqs)))
	prev := uint64(0)
	for _, s := range seqs {
		b = binary.AppendUvarint(b, s-prev)
		prev = s
	}
	return b
}

var errRecord = errors.New("count record cannot be read")

// reader reads a record; the first failure sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errRecord
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errRecord
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) seqs() []uint64 {
	n := r.uvarint()
	if n > uint64(len(r.b)) { // each takes a byte at least
		r.err = errRecord
		return nil
	}
	out := make([]uint64, 0, n)
	prev := uint64(0)
	for range n {
		prev += r.uvarint()
		out = append(out, prev)
	}
	return out
}

func decode(raw []byte) (record, error) {
	if len(raw) == 0 || raw[0] != recordVersion {
		return record{}, errRecord
	}
	r := &reader{b: raw[1:]}
	var rec record
	rec.fingerprint = string(r.bytes())
	rec.team = r.bytes()
	rec.revision = r.uvarint()
	c := &rec.counts
	c.Upto = r.uvarint()
	c.Unknown, c.Sent = int(r.uvarint()), int(r.uvarint())
	c.Derived, c.Secrets = int(r.uvarint()), int(r.uvarint())
	c.Redacted = r.seqs()
	c.Unknowns = r.seqs()
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		return record{}, errRecord
	}
	for range n {
		c.Denied = append(c.Denied, string(r.bytes()))
	}
	if r.err != nil || len(r.b) != 0 {
		return record{}, errRecord
	}
	return rec, nil
}
