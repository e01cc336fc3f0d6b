package policy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"strings"
)

// Fingerprint identifies what decides paths and content for tier t: its
// patterns as expanded (so a moved home folder or a symlinked pattern folder
// changes it), its keys beyond paths and the team files it reads. Figures
// kept from an earlier run (package tally) hold only while it is the same.
// The state of the team files themselves is TeamSnapshot's.
func (p *Policy) Fingerprint(t *Tier) string {
	h := sha256.New()
	field := func(s string) {
		h.Write(binary.AppendUvarint(nil, uint64(len(s))))
		h.Write([]byte(s))
	}
	field("scrim policy fingerprint 1")
	field(t.Name)
	field(t.Label)
	for _, list := range [][]Pattern{t.Read, t.Deny} {
		field("patterns")
		for _, pat := range list {
			field(strings.Join(pat.Expanded(), "\x00"))
		}
	}
	for _, f := range t.DenyFiles {
		field(f.Name)
	}
	field(t.UnknownSource)
	field(t.Derived)
	field(t.Secrets)
	return hex.EncodeToString(h.Sum(nil))
}

// TeamSnapshot is the state of every folder the policy's team-file lookups
// have looked in so far (and of the global files): what decisions made
// since it was created depended on. ok is false when the policy reads no
// team files, or when it has forgotten folders (past maxTeamDirs) and so
// cannot say.
func (p *Policy) TeamSnapshot() (snap []byte, ok bool) {
	c := p.team
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forgot {
		return nil, false
	}
	if c.glob != nil {
		snap = appendDirState(snap, "\x00globals", c.glob.seen, c.glob.problem)
	}
	for path, e := range c.dirs {
		snap = appendDirState(snap, path, e.seen, e.problem)
	}
	return snap, true
}

func appendDirState(b []byte, path string, seen []stamp, problem string) []byte {
	b = binary.AppendUvarint(b, uint64(len(path)))
	b = append(b, path...)
	return binary.BigEndian.AppendUint64(b, stampsHash(seen, problem))
}

func stampsHash(seen []stamp, problem string) uint64 {
	h := fnv.New64a()
	var buf []byte
	for _, s := range seen {
		buf = buf[:0]
		if s.exists {
			buf = append(buf, 1)
		}
		buf = binary.BigEndian.AppendUint64(buf, uint64(s.size))
		buf = binary.BigEndian.AppendUint64(buf, uint64(s.mtime))
		buf = binary.BigEndian.AppendUint64(buf, s.ino)
		h.Write(buf)
	}
	h.Write([]byte(problem))
	return h.Sum64()
}

// TeamUnchanged reports whether every folder of snap (a TeamSnapshot of a
// policy with the same Fingerprint) holds what it held then: each is looked
// at again. Anything it cannot read is a change.
func (p *Policy) TeamUnchanged(snap []byte) bool {
	c := p.team
	if c == nil {
		return false
	}
	for len(snap) > 0 {
		n, w := binary.Uvarint(snap)
		if w <= 0 || uint64(len(snap)-w) < n+8 {
			return false
		}
		path := string(snap[w : w+int(n)])
		want := binary.BigEndian.Uint64(snap[w+int(n):])
		snap = snap[w+int(n)+8:]
		var seen []stamp
		var problem string
		if path == "\x00globals" {
			seen, problem = c.globalStamps()
		} else {
			seen, problem = c.look(path)
		}
		if stampsHash(seen, problem) != want {
			return false
		}
	}
	return true
}
