package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
)

// wholeJSON is `scrim show --format json` as it was written from the whole
// session in memory: the header, then every message json.Marshal writes.
func wholeJSON(t *testing.T, h session.Header, msgs []session.Message) []byte {
	t.Helper()
	var b bytes.Buffer
	hb, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "{\"session\":%s,\"messages\":[", hb)
	for i := range msgs {
		mb, err := json.Marshal(&msgs[i])
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			b.WriteString("\n")
		} else {
			b.WriteString(",\n")
		}
		b.Write(mb)
	}
	b.WriteString("\n]}\n")
	return b.Bytes()
}

// wholeText is `scrim show` in text from the whole session in memory.
func wholeText(t *testing.T, h session.Header, msgs []session.Message) []byte {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "session %s  %s\n", inertLine(h.ID), inertLine(h.Title))
	fmt.Fprintf(&b, "created %s  updated %s  messages %d  last model %s\n",
		h.CreatedAt.Local().Format(timeLayout), h.UpdatedAt.Local().Format(timeLayout), h.Count, orDash(inertLine(h.LastModel)))
	if h.Origin != "" {
		fmt.Fprintf(&b, "origin %s\n", inertLine(h.Origin))
	}
	if h.WorkDir != "" {
		fmt.Fprintf(&b, "workdir %s\n", inertLine(h.WorkDir))
	}
	for i := range msgs {
		if err := writeTextMessage(&b, &msgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// TestShowMatchesWholeSession: show streams a session, and writes, byte for
// byte, what marshalling the whole session loaded in memory writes, in JSON
// and in text, whole and with --last: for no messages, one, a few thousand
// (past the store's parallel decoding threshold, and across any batching
// of the stream), and at the edges of those.
func TestShowMatchesWholeSession(t *testing.T) {
	t.Parallel()
	isolate(t)
	for _, n := range []int{0, 1, 2, 255, 256, 257, 2047, 2048, 2049, 4096, 5000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			if testing.Short() && n > 300 {
				t.Skip("a big session")
			}
			dir := filepath.Join(t.TempDir(), "store")
			id := writeBigSession(t, dir, n)
			st, err := session.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			h, err := st.Get(id)
			if err != nil {
				t.Fatal(err)
			}
			all, bad, err := st.Messages(id)
			st.Close()
			if err != nil || len(bad) > 0 || len(all) != n || h.Count != uint64(n) {
				t.Fatalf("loaded %d of %d messages (count %d), %v %v", len(all), n, h.Count, bad, err)
			}
			for _, last := range []int{0, 1, 256, n - 1, n, n + 1} {
				if last < 0 {
					continue
				}
				msgs := all
				args := []string{"--store", dir, "show", id}
				if last > 0 {
					args = append(args, "--last", strconv.Itoa(last))
					msgs = all[max(0, n-last):]
				}
				for _, format := range []string{"json", "text"} {
					out, errOut, code := scrim(t, "", append(args, "--format", format)...)
					if code != 0 || errOut != "" {
						t.Fatalf("%v: exit %d %q", args, code, errOut)
					}
					want := wholeJSON(t, h, msgs)
					if format == "text" {
						want = wholeText(t, h, msgs)
					}
					if out != string(want) {
						t.Errorf("show %s --last %d: %d bytes, not the %d of the whole session; first difference at %d",
							format, last, len(out), len(want), firstDiff(out, string(want)))
					}
					if format == "json" && !json.Valid([]byte(out)) {
						t.Errorf("show json --last %d is not valid JSON", last)
					}
				}
			}
		})
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// The generated session has every kind of message the store holds.
func TestBigSessionHasEveryShape(t *testing.T) {
	t.Parallel()
	var roles = map[session.Role]int{}
	var paths, multi, noFiles, unknown, errs, calls int
	for i := range 64 {
		m := bigMessage(randFor(i), i)
		if err := m.Validate(); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		roles[m.Role]++
		if m.Meta.SourcePaths != nil {
			paths++
		}
		if m.Attributed() {
			multi++
		}
		if m.Meta.NoFiles {
			noFiles++
		}
		if m.Meta.UnknownSource != "" {
			unknown++
		}
		if m.IsError {
			errs++
		}
		for _, p := range m.Parts {
			if p.Kind == session.PartToolCall {
				calls++
			}
		}
	}
	if roles[session.RoleUser] == 0 || roles[session.RoleAssistant] == 0 || roles[session.RoleTool] == 0 ||
		paths == 0 || multi == 0 || noFiles == 0 || unknown == 0 || errs == 0 || calls == 0 {
		t.Fatalf("roles %v, sourcePaths %d, attributed parts %d, noFiles %d, unknown %d, errors %d, calls %d",
			roles, paths, multi, noFiles, unknown, errs, calls)
	}
	if s := bigMessage(randFor(0), 0).Text(); !strings.HasPrefix(s, "please ") {
		t.Fatalf("message 0 is not a prompt: %q", s)
	}
}

func randFor(i int) *rand.Rand { return rand.New(rand.NewPCG(uint64(i), 7)) }
