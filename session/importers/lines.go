package importers

import (
	"bufio"
	"bytes"
	"errors"
	"hash"
	"io"
)

// MaxLine is the longest line kept; longer ones are skipped (and counted)
// without being held in memory.
const MaxLine = 256 << 20

// lineReader returns whole lines of any length from r, counting (and, when
// h is not nil, hashing) exactly the bytes it hands out as consumed.
type lineReader struct {
	r        *bufio.Reader
	max      int // MaxLine; smaller in tests
	h        hash.Hash
	buf      []byte
	consumed int64 // bytes of complete lines returned
	tooLong  int   // lines skipped for exceeding MaxLine
}

func newLineReader(r io.Reader, h hash.Hash) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 256<<10), h: h, max: MaxLine}
}

// next returns the next line without its newline. At the end of the input
// it returns the unterminated tail (complete false) or io.EOF. The line is
// valid until the next call.
func (l *lineReader) next() (line []byte, complete bool, err error) {
	l.buf = l.buf[:0]
	skipping := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		switch {
		case err == nil:
			if skipping {
				l.consume(chunk)
				l.tooLong++
				return nil, true, nil
			}
			if len(l.buf) == 0 {
				l.consume(chunk)
				return trimEOL(chunk), true, nil
			}
			l.buf = append(l.buf, chunk...)
			l.consume(l.buf)
			return trimEOL(l.buf), true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if skipping {
				l.consume(chunk)
				continue
			}
			if len(l.buf)+len(chunk) > l.max {
				l.consume(l.buf)
				l.consume(chunk)
				l.buf = l.buf[:0]
				skipping = true
				continue
			}
			l.buf = append(l.buf, chunk...)
		case errors.Is(err, io.EOF):
			if skipping {
				// An over-long unterminated tail: consumed, as it can never be read.
				l.consume(chunk)
				l.tooLong++
				return nil, false, io.EOF
			}
			l.buf = append(l.buf, chunk...)
			if len(l.buf) == 0 {
				return nil, false, io.EOF
			}
			return l.buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// consume marks b (read and returned, or skipped) as imported.
func (l *lineReader) consume(b []byte) {
	if l.h != nil {
		l.h.Write(b)
	}
	l.consumed += int64(len(b))
}

// consumeTail takes the unterminated tail returned by next as imported.
func (l *lineReader) consumeTail(tail []byte) { l.consume(tail) }

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
