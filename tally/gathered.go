package tally

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// A tier's gathering (the fingerprints of what it withholds of a session,
// redact.Stream.Gathered) is kept beside the session as a count record, so
// that the next preview or export of the same session reads the session
// once instead of three times. The record says what it was made from: the
// session's revision, how many messages were gathered and the tier's
// fingerprint; it is taken only when all three still hold exactly (a
// message appended may withhold content, or show content that makes a
// fingerprint not distinctive), and the gathering itself has every path
// decided again before it is used (redact.Stream.Resume).

func gatheredName(tier *policy.Tier) string { return "gathered/" + tier.Name }

const gatheredVersion = 2

// LoadGathered returns the gathering kept for model's tier of session sid
// if it was made at revision rev, over count messages, with the tier as it
// is now.
func LoadGathered(st *session.Store, pol *policy.Policy, sid, model string, rev, count uint64) ([]byte, bool, error) {
	return loadKept(st, pol, sid, model, gatheredName, gatheredVersion, rev, count)
}

// loadKept reads the record named for model's tier of session sid, and
// returns what follows its head if it is of version and was made at
// revision rev, over count messages, with the tier as it is now.
func loadKept(st *session.Store, pol *policy.Policy, sid, model string, name func(*policy.Tier) string, version byte, rev, count uint64) ([]byte, bool, error) {
	tier, _ := pol.TierFor(model)
	if tier == nil {
		return nil, false, nil
	}
	raw, found, err := st.CountRecord(sid, name(tier))
	if err != nil || !found {
		return nil, false, err
	}
	if len(raw) == 0 || raw[0] != version {
		return nil, false, nil
	}
	r := &reader{b: raw[1:]}
	fp := string(r.bytes())
	gotRev, gotCount := r.uvarint(), r.uvarint()
	if r.err != nil || fp != pol.Fingerprint(tier) || gotRev != rev || gotCount != count {
		return nil, false, nil
	}
	return r.b, true, nil
}

// keptHead is the head of a record of version for tier, made at revision
// rev over count messages, that loadKept checks.
func keptHead(pol *policy.Policy, tier *policy.Tier, version byte, rev, count uint64) []byte {
	b := []byte{version}
	b = appendBytes(b, []byte(pol.Fingerprint(tier)))
	b = binary.AppendUvarint(b, rev)
	return binary.AppendUvarint(b, count)
}

// SaveGathered keeps model's tier's gathering of session sid's first count
// messages at revision rev, which gathered appends to b if that makes at
// most most bytes (redact.Stream.Gathered). A gathering too long for a
// record of the store is not kept (nor made): the next one gathers again.
func SaveGathered(st *session.Store, pol *policy.Policy, sid, model string, rev, count uint64, gathered func(b []byte, most int) []byte) error {
	_, _, err := KeepGathered(st, pol, sid, model, rev, count, gathered)
	return err
}

// KeepGathered is SaveGathered, which also says whether the gathering was
// kept and, if so, its name for SaveMatches and LoadMatches.
func KeepGathered(st *session.Store, pol *policy.Policy, sid, model string, rev, count uint64, gathered func(b []byte, most int) []byte) (uint64, bool, error) {
	tier, _ := pol.TierFor(model)
	if tier == nil {
		return 0, false, nil
	}
	b := keptHead(pol, tier, gatheredVersion, rev, count)
	head := len(b)
	if b = gathered(b, st.MaxCountRecord()); b == nil {
		return 0, false, nil
	}
	if err := st.PutCountRecord(sid, gatheredName(tier), b); err != nil {
		return 0, false, err
	}
	return GatheredName(b[head:]), true, nil
}

// GatheredName names a kept gathering (what LoadGathered returns) for the
// matches found with it: a hash of all of it.
func GatheredName(kept []byte) uint64 { return xxhash.Sum64(kept) }

// Where a preview found the fingerprints of a kept gathering in the
// session (redact.Stream.Matched) is kept beside it, so that the next
// preview with the same gathering over the same messages searches none of
// the session. The record names what it was found with: the gathering (a
// hash of the kept record: another gathering of the same session, even an
// equal one, may number its paths and fingerprints otherwise), the
// session's revision, its message count and the tier's fingerprint; it is
// taken only when all four hold.

func matchesName(tier *policy.Tier) string { return "matched/" + tier.Name }

const matchesVersion = 2

// SaveMatches keeps where a preview of model's tier found the fingerprints
// of the gathering named gathering (KeepGathered) in session sid's first
// count messages at revision rev, which matched appends to b if that makes
// at most most bytes (redact.Stream.Matched): best effort, a cache.
func SaveMatches(st *session.Store, pol *policy.Policy, sid, model string, rev, count, gathering uint64, matched func(b []byte, most int) []byte) error {
	tier, _ := pol.TierFor(model)
	if tier == nil {
		return nil
	}
	b := binary.BigEndian.AppendUint64(keptHead(pol, tier, matchesVersion, rev, count), gathering)
	if b = matched(b, st.MaxCountRecord()); b == nil {
		return nil
	}
	return st.PutCountRecord(sid, matchesName(tier), b)
}

// LoadMatches returns where a preview found the fingerprints of the
// gathering named gathering in session sid, if it was over count messages
// at revision rev, with the tier as it is now.
func LoadMatches(st *session.Store, pol *policy.Policy, sid, model string, rev, count, gathering uint64) ([]byte, bool, error) {
	b, ok, err := loadKept(st, pol, sid, model, matchesName, matchesVersion, rev, count)
	if !ok || len(b) < 8 || binary.BigEndian.Uint64(b) != gathering {
		return nil, false, err
	}
	return b[8:], true, nil
}
