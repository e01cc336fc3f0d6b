package redact

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/scrim-dev/scrim/internal/cores"
	"github.com/scrim-dev/scrim/session"
)

// layout is how a call cuts up its work. Tests cut small histories as finely
// as long ones are cut.
type layout struct {
	chunkMin  int // fewest messages worth a goroutine of their own
	maxChunks int // at most this many chunks (and goroutines); 0: one per core
	block     int // messages copied as one piece of work
}

// defaultLayout starts a goroutine only for 2,048 messages or more, and
// copies 1,024 messages at a time: their parts are one allocation of about
// 110 KiB, few for the garbage collector to track, and a 100,000-message
// history is still about a hundred pieces to share out. (Measured against
// blocks of 64, 256, 2,048 and 4,096: none was faster.)
var defaultLayout = layout{chunkMin: 2048, block: 1024}

// streamLayout shares a Stream's batches out from 128 messages a core: they
// are a few hundred messages each (scrim redact ends them at 256 KiB of
// text), and with the default layout the derived filter, most of the time
// of a preview with derived = "redact", ran on one core for every batch.
var streamLayout = layout{chunkMin: 128, block: 128}

// split cuts msgs into at most one chunk per core (eight at most), each of at
// least chunkMin messages; there is always at least one chunk.
func (l layout) split(msgs []session.Message) []*chunk {
	most := l.maxChunks
	if most == 0 {
		most = min(cores.N(), 8)
	}
	n := max(1, min(most, len(msgs)/l.chunkMin))
	chunks := make([]*chunk, n)
	for i := range chunks {
		lo, hi := len(msgs)*i/n, len(msgs)*(i+1)/n
		chunks[i] = &chunk{id: i, block: l.block, in: msgs[lo:hi:hi]}
	}
	return chunks
}

// each runs fn on every chunk at once, the first on this goroutine, and
// returns when all are done.
func each(chunks []*chunk, fn func(*chunk)) {
	var wg sync.WaitGroup
	for _, c := range chunks[1:] {
		wg.Go(func() { fn(c) })
	}
	fn(chunks[0])
	wg.Wait()
}

// chunk is a run of the input and what History learns of it. Its paths are
// noted in a map of its own, so that chunks are noted at once; merging then
// maps its indexes to the call's.
type chunk struct {
	id     int
	block  int // messages copied as one piece of work
	in     []session.Message
	at     int // where the chunk's copies start in the output
	blocks []block
	events int

	set    pathSet  // the chunk's distinct paths, by local index
	global []int32  // local index to the call's; nil if the same
	tagged []tagged // messages that carry paths: the only ones redaction can change
	// unknown are the copies (from the chunk's start in the output) of
	// messages of unknown source that carry no path, noted only when the
	// tier withholds them.
	unknown  []int32
	withhold bool
	// idx holds, for each tagged message, the local index of each of its
	// sourcePaths and then of each part's path (-1 for a part without):
	// each path is hashed once, when it is noted.
	idx []int32

	unknownSource int
	tally         // of the blocks this chunk's goroutine fixed up
}

// block is where a block's copies start, from the chunk's start in the
// output, and where its tagged and unknown messages start in chunk.tagged
// and chunk.unknown.
type block struct{ out, tagged, unknown int32 }

// tally counts what redaction changed. unknownWithheld counts messages of
// unknown source that were not sent unchecked: withheld whole, for a denied
// path known to have been read or because the tier withholds them;
// withheld counts the latter.
type tally struct {
	redactedMessages, redactedParts, unknownWithheld, withheld int
	spans                                                      spanTally
	gather                                                     *gathered // what derived redaction needs, when it is gathered
}

// withhold replaces, in the copy m of a message of unknown source, what
// no path placeholder replaced by the one placeholder that says so (tool
// calls, the model's own words, stay). redacted says m already counts as
// redacted.
func (t *tally) withhold(d *decisions, m *session.Message, redacted bool) {
	kind := session.PartToolResult
	kept := make([]session.Part, 0, len(m.Parts)+1)
	n := 0
	for _, p := range m.Parts {
		if p.Kind == session.PartToolCall || p.Redacted {
			kept = append(kept, p)
			continue
		}
		kind = p.Kind
		n++
	}
	if n == 0 {
		t.unknownWithheld++ // all of it was replaced by path placeholders
		return
	}
	m.Parts = append(kept, session.Part{Kind: kind, Text: d.withheld, Redacted: true})
	t.redactedParts += n
	if !redacted {
		t.redactedMessages++
	}
	t.unknownWithheld++
	t.withheld++
}

// tagged is where a message's copy is, from the chunk's start in the output,
// where its path indexes start in chunk.idx, and whether its parts carry
// their own paths.
type tagged struct {
	out, first int32 // 12 bytes a message, not 24: there can be many
	attributed bool
}

// scan counts the chunk's events, block by block, and tool results of
// unknown source, and notes the paths of every message that carries any.
// Events are dropped, so their paths are never noted.
func (c *chunk) scan() {
	c.blocks = make([]block, 0, (len(c.in)+c.block-1)/c.block)
	// The paths' map made once, for as many as the messages name at most:
	// grown from none, it was 49 MB of what the 20k benchmark session's
	// first preview allocated (its search results name a path a part, 30
	// to a message), made so 33.
	named := 0
	for i := range c.in {
		named += len(c.in[i].Meta.SourcePaths)
	}
	if named > 0 {
		c.set.index = make(map[string]int32, min(named, maxPathHint))
	}
	out := 0
	for i := range c.in {
		if i%c.block == 0 {
			c.blocks = append(c.blocks, block{int32(out), int32(len(c.tagged)), int32(len(c.unknown))})
		}
		m := &c.in[i]
		if m.Role == session.RoleEvent {
			c.events++
			continue
		}
		c.note(m, out)
		out++
	}
}

// note counts m if it is of unknown source (with or without the paths known
// to have been read), and notes its paths if it carries any; its copy will
// be the chunk's nth.
func (c *chunk) note(m *session.Message, nth int) {
	_, unknown := m.Unknown()
	unknown = unknown && hasContent(m.Parts) // nothing to check without content
	if unknown {
		c.unknownSource++
	}
	attributed := m.Attributed()
	if len(m.Meta.SourcePaths) == 0 && !attributed {
		if unknown && c.withhold {
			c.unknown = append(c.unknown, int32(nth))
		}
		return
	}
	first := len(c.idx)
	c.tagged = append(c.tagged, tagged{int32(nth), int32(first), attributed})
	meta := m.Meta.SourcePaths
	for _, path := range meta {
		c.idx = append(c.idx, c.noteOne(path))
	}
	for j := range m.Parts {
		// A part's path is almost always one of the message's
		// sourcePaths, just noted: for a few, comparing costs less than
		// hashing.
		path := m.Parts[j].SourcePath
		k := int32(-1)
		if i := indexSmall(meta, path); i >= 0 {
			k = c.idx[first+i]
		} else if path != "" {
			k = c.noteOne(path)
		}
		c.idx = append(c.idx, k)
	}
}

// indexSmall is slices.Index for a few paths, -1 for more: a search that
// costs more than a hash is not worth it.
func indexSmall(paths []string, path string) int {
	if len(paths) > 8 || path == "" {
		return -1
	}
	return slices.Index(paths, path)
}

// noteOne returns path's local index, noting it if it is new; -1 for no path.
func (c *chunk) noteOne(path string) int32 {
	if path == "" {
		return -1
	}
	return c.set.add(path)
}

// maxPathHint bounds the room a chunk's paths' map is made with.
const maxPathHint = 4096

// pathSet numbers distinct paths in order of first appearance.
type pathSet struct {
	index map[string]int32
	paths []string
}

// add returns path's number, giving it the next one if it is new.
func (ps *pathSet) add(path string) int32 {
	k, ok := ps.index[path]
	if !ok {
		if ps.index == nil {
			ps.index = map[string]int32{}
		}
		k = int32(len(ps.paths))
		ps.index[path] = k
		ps.paths = append(ps.paths, path)
	}
	return k
}

// copy copies block b of the chunk, less events, to out. Runs between events
// are copied whole, which costs less than one by one. Each copy gets parts,
// tool inputs and sourcePaths of its own, cut from one allocation of each
// per block, with capacities that end where they do: an append to one
// message's parts reallocates rather than writing into the next one's.
func (c *chunk) copy(out []session.Message, b int) {
	lo, hi := b*c.block, min((b+1)*c.block, len(c.in))
	start := c.at + int(c.blocks[b].out)
	k := start
	for i := lo; i < hi; {
		j := i
		for j < hi && (c.events == 0 || c.in[j].Role != session.RoleEvent) {
			j++
		}
		k += copy(out[k:], c.in[i:j])
		i = j + 1
	}
	copies := out[start:k]
	nparts, npaths, ninput := 0, 0, 0
	for i := range copies {
		m := &copies[i]
		nparts += len(m.Parts)
		npaths += len(m.Meta.SourcePaths)
		for j := range m.Parts {
			ninput += len(m.Parts[j].Input)
		}
	}
	parts, paths, inputs := make([]session.Part, nparts), make([]string, npaths), make([]byte, ninput)
	for i := range copies {
		m := &copies[i]
		if m.Parts != nil {
			n := copy(parts, m.Parts)
			m.Parts, parts = parts[:n:n], parts[n:]
			for j := range m.Parts {
				if in := m.Parts[j].Input; in != nil {
					n := copy(inputs, in)
					m.Parts[j].Input, inputs = inputs[:n:n], inputs[n:]
				}
			}
		}
		if m.Meta.SourcePaths != nil {
			n := copy(paths, m.Meta.SourcePaths)
			m.Meta.SourcePaths, paths = paths[:n:n], paths[n:]
		}
	}
}

// hasContent reports whether parts hold anything but tool calls and
// placeholders: text that may be sent unchecked.
func hasContent(parts []session.Part) bool {
	for i := range parts {
		if parts[i].Kind != session.PartToolCall && !parts[i].Redacted {
			return true
		}
	}
	return false
}

// blocks lists every block of every chunk, in order, for the goroutines of
// a call to take one at a time.
type blocks struct {
	all  []blockRef
	next atomic.Int64
}

type blockRef struct{ c, b int32 }

func newBlocks(chunks []*chunk) *blocks {
	bs := &blocks{}
	for _, c := range chunks {
		for b := range c.blocks {
			bs.all = append(bs.all, blockRef{int32(c.id), int32(b)})
		}
	}
	return bs
}

// take returns the next block not yet taken, if any is left.
func (bs *blocks) take() (blockRef, bool) {
	i := int(bs.next.Add(1) - 1)
	if i >= len(bs.all) {
		return blockRef{}, false
	}
	return bs.all[i], true
}

// globalize turns the chunk's path indexes into the call's.
func (c *chunk) globalize() {
	if c.global == nil {
		return
	}
	for i, k := range c.idx {
		if k >= 0 {
			c.idx[i] = c.global[k]
		}
	}
}

// fixUp redacts the copies in out of block b's tagged messages, just copied
// and so still in cache, counting what it changes in t; for a tier that
// withholds content of unknown source, it withholds the block's messages of
// unknown source that no denied path already replaced.
func (c *chunk) fixUp(out []session.Message, b int, d *decisions, t *tally) {
	end, uend := len(c.tagged), len(c.unknown)
	if b+1 < len(c.blocks) {
		end, uend = int(c.blocks[b+1].tagged), int(c.blocks[b+1].unknown)
	}
	for _, u := range c.unknown[c.blocks[b].unknown:uend] {
		t.withhold(d, &out[c.at+int(u)], false)
	}
	for _, tg := range c.tagged[c.blocks[b].tagged:end] {
		m := &out[c.at+int(tg.out)]
		first := int(tg.first)
		meta := c.idx[first : first+len(m.Meta.SourcePaths)]
		parts := c.idx[first+len(meta) : first+len(meta)+len(m.Parts)]
		_, unknown := m.Unknown()
		unknown = unknown && hasContent(m.Parts)
		before := t.redactedMessages
		order := int64(c.at+int(tg.out)) << 16
		if t.gather != nil {
			t.gather.unknown, t.gather.seq = unknown, m.Seq
		}
		if !tg.attributed || d.unattributedDenied(m, meta) {
			m.Parts = t.redactWhole(d, m, meta, parts, order)
		} else {
			m.Parts = t.redactParts(d, m.Parts, parts, order)
		}
		switch redacted := t.redactedMessages > before; {
		case unknown && c.withhold:
			t.withhold(d, m, redacted) // what no path placeholder replaced is not known
		case unknown && redacted && !hasContent(m.Parts):
			t.unknownWithheld++ // every part was from a denied path: none of it is sent
		}
	}
}
