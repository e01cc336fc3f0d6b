package importers

import (
	"bufio"
	"crypto/sha256"
	"io"
	"strings"
	"testing"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("a", 300<<10) // longer than the read buffer
	huge := strings.Repeat("b", 600<<10) // longer than max below
	for _, tc := range []struct {
		name, in string
		lines    []string
		tail     string
		tooLong  int
	}{
		{"plain", "x\ny\n", []string{"x", "y"}, "", 0},
		{"crlf", "x\r\ny\r\n", []string{"x", "y"}, "", 0},
		{"long line", "x\n" + long + "\ny\n", []string{"x", long, "y"}, "", 0},
		{"unterminated tail", "x\n{\"a\":", []string{"x"}, "{\"a\":", 0},
		{"over-long line skipped", "x\n" + huge + "\ny\n", []string{"x", "", "y"}, "", 1},
		{"over-long tail", "x\n" + huge, []string{"x"}, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := sha256.New()
			l := newLineReader(strings.NewReader(tc.in), h)
			l.r = bufio.NewReaderSize(strings.NewReader(tc.in), 64<<10)
			l.max = 512 << 10
			var got []string
			tail := ""
			for {
				line, complete, err := l.next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if !complete {
					tail = string(line)
					break
				}
				got = append(got, string(line))
			}
			if strings.Join(got, "|") != strings.Join(tc.lines, "|") || tail != tc.tail || l.tooLong != tc.tooLong {
				t.Fatalf("lines %d %q tail %q tooLong %d", len(got), short(got), tail, l.tooLong)
			}
			// Exactly the consumed bytes are hashed: all but an unread tail.
			want := sha256.Sum256([]byte(tc.in[:len(tc.in)-len(tc.tail)]))
			if int(l.consumed) != len(tc.in)-len(tc.tail) || string(h.Sum(nil)) != string(want[:]) {
				t.Errorf("consumed %d of %d bytes", l.consumed, len(tc.in))
			}
		})
	}
}

func short(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		if len(x) > 10 {
			x = x[:10] + "…"
		}
		out[i] = x
	}
	return out
}
