package redact

import (
	"bufio"
	"fmt"
	"hash/maphash"
	"io"
	"unsafe"

	"github.com/scrim-dev/scrim/internal/spool"
)

// spilled holds the texts of a gathering's candidates in a temporary file
// while the session is read (Stream.Spill), in the order the candidates
// were made, and in memory only each one's hash, length and a second hash.
// The candidates of a whole session are compared with what is read by
// hash alone, so their texts are wanted only once the gathering is done,
// and then only those no readable content has too (unspill). On the 20k
// benchmark session the texts were 1.7-2.0 MB of the first preview's
// gathering, the most of what it held beside what every command holds
// (see README's performance notes for what that did to its peak).
type spilled struct {
	texts spool.Spool
	seed  maphash.Seed // the second hash's
	meta  chunked[spillMeta]
	size  int64 // bytes of texts
}

// spillMeta is what a candidate whose text is spilled keeps of it beside
// its hash (in the candidate's text ref): its length and 32 bits of a
// hash under a seed of its own. Two texts the candidates take for one
// have both hashes and the length in common: at 2^-96 a comparison, the
// odds that a million-message session's few million lookups meet one are
// under 2^-70.
type spillMeta struct{ n, h2 uint32 }

func newSpilled(dir string) *spilled {
	return &spilled{texts: spool.Spool{Dir: dir}, seed: maphash.MakeSeed()}
}

// hash2 is the second hash of s.
func (sp *spilled) hash2(s string) uint32 { return uint32(maphash.String(sp.seed, s)) }

// add spills text, whose hash is h, and returns the ref a candidate holds
// for it: h itself.
func (sp *spilled) add(text string, h uint64) ref {
	sp.texts.Write(unsafe.Slice(unsafe.StringData(text), len(text))) // not strict: it does not fail
	sp.meta.add(spillMeta{n: uint32(len(text)), h2: sp.hash2(text)})
	sp.size += int64(len(text))
	return ref{lo: uint32(h), hi: uint32(h >> 32)}
}

// hashOf is candidate i's hash.
func (c *candidates) hashOf(i int32) uint64 {
	if c.spill == nil {
		return maphash.String(c.seed, c.textOf(i))
	}
	r := c.list.at(i).text
	return uint64(r.hi)<<32 | uint64(r.lo)
}

// unspill reads the spilled texts back, those of the candidates no
// readable content has too into c.text (each candidate's ref then its
// place there, as if never spilled), and lets the file go. The others
// keep their hashes: c must be dropped once built (build).
func (c *candidates) unspill() error {
	sp := c.spill
	defer sp.texts.Close()
	r, err := sp.texts.Reader()
	if err != nil {
		return fmt.Errorf("reading back the gathering's texts: %w", err)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for i := range int32(c.list.n) {
		n := int(sp.meta.at(i).n)
		if c.isAlso(i) {
			if _, err := br.Discard(n); err != nil {
				return fmt.Errorf("reading back the gathering's texts: %w", err)
			}
			continue
		}
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		if _, err := io.ReadFull(br, buf[:n]); err != nil {
			return fmt.Errorf("reading back the gathering's texts: %w", err)
		}
		c.list.at(i).text = c.text.add(unsafe.String(unsafe.SliceData(buf), n))
	}
	c.spill = nil
	return nil
}
