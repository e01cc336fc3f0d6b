package secrets

// keywordDFA finds the rules' keywords in a lower-cased text: an
// Aho-Corasick automaton with every transition resolved, so that a byte
// costs one look-up in a table of states by byte class. The automaton
// gitleaks itself uses (github.com/BobuSumisu/aho-corasick) keeps 256
// transitions of 8 bytes for each of its states, 2.6 MB for the default
// rules' keywords (1,281 states), and follows failure links where a
// transition is missing: walking a text was 2.6-3.9 ns a byte, and at a
// million messages the first credential scan of every text spent 1.3-1.65
// s of CPU there.
// This table is 215 KB (1,281 states by 43 byte classes). FuzzKeywordDFA
// holds its matches to that automaton's.
type keywordDFA struct {
	class  [256]uint8 // the byte's class: bytes no keyword holds share class 0
	nclass int
	// trans is, for each state (premultiplied: its index times nclass)
	// and class, the next state, with outFlag set where keywords end.
	trans []uint32
	out   map[uint32][]int32 // the keywords that end in a state (by its premultiplied index)
}

const outFlag = 1 << 31

// newKeywordDFA builds the automaton of patterns, which must not be empty.
func newKeywordDFA(patterns []string) *keywordDFA {
	a := &keywordDFA{out: map[uint32][]int32{}}
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			if a.class[p[i]] == 0 {
				a.nclass++
				a.class[p[i]] = uint8(a.nclass)
			}
		}
	}
	a.nclass++ // and class 0
	// The trie: children by class, -1 where there is none.
	type node struct {
		next []int32
		ends []int32
		fail int32
	}
	newNode := func() node {
		n := node{next: make([]int32, a.nclass)}
		for i := range n.next {
			n.next[i] = -1
		}
		return n
	}
	nodes := []node{newNode()}
	for id, p := range patterns {
		s := int32(0)
		for i := 0; i < len(p); i++ {
			c := a.class[p[i]]
			if nodes[s].next[c] < 0 {
				nodes[s].next[c] = int32(len(nodes))
				nodes = append(nodes, newNode())
			}
			s = nodes[s].next[c]
		}
		nodes[s].ends = append(nodes[s].ends, int32(id))
	}
	// Breadth first: each state's failure state is done before it, so its
	// missing transitions and its keywords can be taken from there.
	queue := []int32{}
	for c := range a.nclass {
		if t := nodes[0].next[c]; t < 0 {
			nodes[0].next[c] = 0
		} else {
			nodes[t].fail = 0
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := nodes[s].fail
		nodes[s].ends = append(nodes[s].ends, nodes[f].ends...)
		for c := range a.nclass {
			if t := nodes[s].next[c]; t < 0 {
				nodes[s].next[c] = nodes[f].next[c]
			} else {
				nodes[t].fail = nodes[f].next[c]
				queue = append(queue, t)
			}
		}
	}
	a.trans = make([]uint32, len(nodes)*a.nclass)
	for s := range nodes {
		for c, t := range nodes[s].next {
			v := uint32(t) * uint32(a.nclass)
			if len(nodes[t].ends) > 0 {
				v |= outFlag
			}
			a.trans[s*a.nclass+c] = v
		}
		if len(nodes[s].ends) > 0 {
			a.out[uint32(s*a.nclass)] = nodes[s].ends
		}
	}
	return a
}

// walk calls fn with each keyword that ends in b and where it ends (the
// index after its last byte), at every place, until fn returns false.
func (a *keywordDFA) walk(b []byte, fn func(end int, pattern int32) bool) {
	a.walkFrom(0, b, fn)
}

// walkFrom is walk from state s, where a walk of the bytes before b ended
// (0: b is the text's start); it returns the state b ends in, to go on
// from with the bytes after it.
func (a *keywordDFA) walkFrom(s uint32, b []byte, fn func(end int, pattern int32) bool) uint32 {
	trans, class := a.trans, &a.class
	for i, c := range b {
		s = trans[s+uint32(class[c])]
		if s&outFlag != 0 {
			s &^= outFlag
			for _, p := range a.out[s] {
				if !fn(i+1, p) {
					return s
				}
			}
		}
	}
	return s
}
