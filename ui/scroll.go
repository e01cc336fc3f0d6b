package ui

import "sort"

// Scrolling moves the anchor (the first visible line) and the current
// message. Every step looks at the rows of the messages it passes and of
// one screen, never at the session as a whole.

func (t *transcript) scrollDown(n int) {
	for n > 0 {
		h := t.heightOf(t.top.seq)
		if t.top.off+n < h {
			t.top.off += n
			break
		}
		n -= h - t.top.off
		nx, ok := t.next(t.top.seq)
		if !ok {
			t.top.off = h - 1
			break
		}
		t.top = anchor{nx, 0}
	}
	t.clampEnd()
}

func (t *transcript) scrollUp(n int) {
	for n > 0 {
		if t.top.off >= n {
			t.top.off -= n
			return
		}
		n -= t.top.off
		pv, ok := t.prev(t.top.seq)
		if !ok {
			t.top.off = 0
			return
		}
		t.top = anchor{pv, t.heightOf(pv)}
	}
}

// clampEnd keeps the viewport full: the last message's end never rises
// above the bottom row. It looks at no more than a screenful of rows.
func (t *transcript) clampEnd() {
	if t.empty() || t.top.seq == 0 {
		return
	}
	if h := t.heightOf(t.top.seq); t.top.off >= h {
		t.top.off = h - 1
	}
	avail, seq := t.heightOf(t.top.seq)-t.top.off, t.top.seq
	for avail < t.height {
		nx, ok := t.next(seq)
		if !ok {
			break
		}
		seq, avail = nx, avail+t.heightOf(nx)
	}
	if avail < t.height {
		t.scrollUp(t.height - avail)
	}
}

// relPos is the row of seq's first line relative to the top of the
// viewport, when seq is within about two screens of it.
func (t *transcript) relPos(seq uint64) (int, bool) {
	limit := 2 * t.height
	switch {
	case seq == t.top.seq:
		return -t.top.off, true
	case seq > t.top.seq:
		pos, s := t.heightOf(t.top.seq)-t.top.off, t.top.seq
		for pos <= limit {
			nx, ok := t.next(s)
			if !ok {
				return 0, false
			}
			if nx == seq {
				return pos, true
			}
			s, pos = nx, pos+t.heightOf(nx)
		}
	default:
		pos, s := -t.top.off, t.top.seq
		for pos >= -limit {
			pv, ok := t.prev(s)
			if !ok {
				return 0, false
			}
			pos -= t.heightOf(pv)
			if pv == seq {
				return pos, true
			}
			s = pv
		}
	}
	return 0, false
}

// down reads on: first the rest of the current message, then the next one.
func (t *transcript) down() {
	if t.empty() {
		return
	}
	if pos, ok := t.relPos(t.sel); ok && pos+t.heightOf(t.sel) > t.height {
		t.scrollDown(1)
		return
	}
	nx, ok := t.next(t.sel)
	if !ok {
		return
	}
	t.sel = nx
	t.reveal(nx)
}

// up is down's mirror: the part of the current message above, then the
// previous message (its end first when it is taller than the screen).
func (t *transcript) up() {
	if t.empty() {
		return
	}
	if pos, ok := t.relPos(t.sel); ok && pos < 0 {
		t.scrollUp(1)
		return
	}
	pv, ok := t.prev(t.sel)
	if !ok {
		return
	}
	t.sel = pv
	pos, ok := t.relPos(pv)
	if ok && pos >= 0 && pos < t.height {
		return
	}
	h := t.heightOf(pv)
	t.top = anchor{pv, max(0, h-t.height)}
	t.clampEnd()
}

func (t *transcript) pageDown() {
	before := t.top
	t.scrollDown(max(1, t.height-1))
	if t.top == before {
		if l, ok := t.last(); ok {
			t.sel = l
		}
		return
	}
	t.selectTop()
}

func (t *transcript) pageUp() {
	before := t.top
	t.scrollUp(max(1, t.height-1))
	if t.top == before {
		if f, ok := t.first(); ok {
			t.sel = f
		}
		return
	}
	t.selectTop()
}

// selectTop makes the first message whose start is visible current.
func (t *transcript) selectTop() {
	t.sel = t.top.seq
	if t.top.off > 0 {
		if nx, ok := t.next(t.top.seq); ok {
			if pos, ok := t.relPos(nx); ok && pos < t.height {
				t.sel = nx
			}
		}
	}
}

func (t *transcript) home() {
	if f, ok := t.first(); ok {
		t.jump(f)
	}
}

func (t *transcript) end() {
	l, ok := t.last()
	if !ok {
		return
	}
	t.sel = l
	t.top = anchor{l, 0}
	t.clampEnd()
}

// jump makes seq current and puts it at the top (as far as the end allows).
func (t *transcript) jump(seq uint64) {
	t.sel = seq
	t.top = anchor{seq, 0}
	t.clampEnd()
}

// --- redactions ---

// nextRedaction makes the next redacted message current, wrapping around
// at the end; wrapped says it did.
// walked is what n and N walk: the redacted messages, or (w) those whose
// content of unknown source is sent unchecked.
func (t *transcript) walked() []uint64 {
	if t.walkUnknown {
		return t.unknowns
	}
	return t.redacted
}

func (t *transcript) nextRedaction() (found, wrapped bool) {
	list := t.walked()
	if len(list) == 0 {
		return false, false
	}
	i := sort.Search(len(list), func(i int) bool { return list[i] > t.sel })
	if i == len(list) {
		i, wrapped = 0, true
	}
	t.jump(list[i])
	return true, wrapped
}

func (t *transcript) prevRedaction() (found, wrapped bool) {
	list := t.walked()
	if len(list) == 0 {
		return false, false
	}
	i := sort.Search(len(list), func(i int) bool { return list[i] >= t.sel })
	if i == 0 {
		i, wrapped = len(list), true
	}
	t.jump(list[i-1])
	return true, wrapped
}

// redactionIndex is the 1-based place of the current message among the
// walked ones, 0 when it is not one of them.
func (t *transcript) redactionIndex() int {
	list := t.walked()
	i := sort.Search(len(list), func(i int) bool { return list[i] >= t.sel })
	if i < len(list) && list[i] == t.sel {
		return i + 1
	}
	return 0
}

// setHide switches hiding unchanged messages, keeping the place as well as
// it can.
func (t *transcript) setHide(on bool) {
	t.hide = on
	if t.empty() {
		return
	}
	if on {
		i := sort.Search(len(t.redacted), func(i int) bool { return t.redacted[i] >= t.sel })
		switch {
		case len(t.redacted) == 0:
			t.top, t.sel = anchor{}, 0
			return
		case i == len(t.redacted):
			i--
		}
		t.jump(t.redacted[i])
		return
	}
	if t.sel == 0 {
		t.end()
		return
	}
	t.jump(t.sel)
}

// setRedacted takes a longer list of redacted messages from the counter.
func (t *transcript) setRedacted(seqs []uint64) {
	t.redacted = seqs
	if t.hide && t.sel == 0 && len(seqs) > 0 {
		t.jump(seqs[0])
	}
}
