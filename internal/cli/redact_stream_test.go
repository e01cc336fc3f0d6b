package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
)

// streamPolicy is bigPolicy with a third tier that withholds content of
// unknown source and redacts derived content.
const streamPolicy = bigPolicy + `
[tiers.strict]
label          = "strict"
read           = ["/**"]
deny           = ["/home/dev/src/app/pkg3/**"]
derived        = "redact"
unknown_source = "withhold"

[[models]]
match = "strict/*"
tier  = "strict"
`

// Lines of the crafted messages: quoted, withheld, then quoted again.
const (
	quotedFirst = "const sharedConfigLine = loadTheSharedConfiguration(ctx)"
	withheldOne = "const vaultUnlockPhrase = deriveTheVaultUnlockPhrase(masterKey)"
	streamCred  = "export GITHUB_TOKEN=ghp_R9bX2kQm7LpZ4vT8nW1cY6dF3hJ5sA0eG2uI"
)

// streamPolicyFile writes streamPolicy to a file of its own and returns its
// path.
func streamPolicyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(path, []byte(streamPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeStreamSession writes a session of n generated messages with, at
// their places, what the batches must agree on: a line an allowed file has
// in the first batch before a denied read has it in the third (not
// distinctive, so never redacted: the gathering pass must be read again), a
// line only that read has, quoted after it (derived), a credential and a
// model switch.
//
// With short, the other messages are a few bytes each, so that batches end
// at redactBatch messages rather than at redactBytes of text.
func writeStreamSession(tb testing.TB, dir string, n int, short bool) string {
	tb.Helper()
	st, err := session.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	b, err := st.BeginBulk()
	if err != nil {
		tb.Fatal(err)
	}
	id, err := b.NewSession(session.Header{Title: "crafted", WorkDir: "/home/dev/src/app"})
	if err != nil {
		tb.Fatal(err)
	}
	denied, allowed := "/home/dev/src/app/pkg3/vault.go", "/home/dev/src/app/pkg1/config.go"
	at := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	crafted := map[int]*session.Message{
		3: {Role: session.RoleTool, Tool: "read", Meta: session.Meta{SourcePaths: []string{allowed}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: quotedFirst + "\n", SourcePath: allowed}}},
		n - 40: {Role: session.RoleTool, Tool: "read", Meta: session.Meta{SourcePaths: []string{denied}},
			Parts: []session.Part{{Kind: session.PartToolResult, Text: quotedFirst + "\n" + withheldOne + "\n", SourcePath: denied}}},
		n - 30: {Role: session.RoleAssistant, Model: "anthropic/x", Parts: []session.Part{{Kind: session.PartText, Text: "it says\n" + withheldOne + "\nand\n" + quotedFirst + "\n"}}},
		n - 20: {Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "my token:\n" + streamCred + "\n"}}},
		n - 10: {Role: session.RoleEvent, Parts: []session.Part{{Kind: session.PartText, Text: "model switched"}}},
	}
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range n {
		m := crafted[i]
		switch {
		case m != nil:
		case short:
			m = &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: fmt.Sprint("ok ", i)}}}
		default:
			m = bigMessage(r, i)
		}
		m.CreatedAt = at.Add(time.Duration(i) * time.Second)
		if err := b.Add(id, m); err != nil {
			b.Cancel()
			tb.Fatal(err)
		}
	}
	if err := b.Commit(nil); err != nil {
		tb.Fatal(err)
	}
	return id
}

// wholeRedact is `scrim redact` as it was written from the whole session
// in memory: runner.BuildWith over every stored message, then the output.
func wholeRedact(t *testing.T, dir, polFile, id, model, format string) string {
	t.Helper()
	pol, err := policy.Load(polFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, bad, err := st.Messages(id)
	if err != nil || len(bad) > 0 {
		t.Fatal(bad, err)
	}
	ctx, err := runner.Context(st, id, msgs, model, pol)
	if err != nil {
		t.Fatal(err)
	}
	tier, _ := pol.TierFor(model)
	req := runner.BuildWith(msgs, id, model, pol, ctx)
	per := redact.PerMessage(msgs, req.History)
	var w bytes.Buffer
	if format == "json" {
		wholeRedactJSON(t, &w, req, per)
		return w.String()
	}
	fmt.Fprintf(&w, "What %s would be sent of session %s (tier %s, label %q)\n\n", model, id, tier.Name, tier.Label)
	for i := range req.History {
		writeRedactMessage(&w, &req.History[i])
	}
	writeRedactReport(&w, tier, req.Report, len(msgs), pol.File)
	if len(per) > 0 {
		fmt.Fprintln(&w, "  per message:")
	}
	for _, r := range per {
		writePerMessage(&w, r, req.History)
	}
	return w.String()
}

// wholeRedactJSON is the JSON writer from before redact streamed.
func wholeRedactJSON(t *testing.T, w io.Writer, req runner.Request, per []redact.MessageReport) {
	head, err := json.Marshal(struct {
		Session string      `json:"session"`
		Model   string      `json:"model"`
		Tier    redact.Tier `json:"tier"`
	}{req.SessionID, req.Model, req.Report.Tier})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, strings.TrimSuffix(string(head), "}")+`,"messages":[`)
	for i := range req.History {
		b, err := json.Marshal(&req.History[i])
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			io.WriteString(w, ",")
		}
		io.WriteString(w, "\n")
		w.Write(b)
	}
	rep, err := json.Marshal(struct {
		redact.Report
		Messages []redact.MessageReport `json:"messages"`
	}{req.Report, per})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(w, "\n],\"report\":%s}\n", rep)
}

// TestRedactMatchesWholeSession: redact streams a session in batches and
// writes, byte for byte, what redacting it whole wrote, in JSON and in text,
// for a tier that filters paths, one that also redacts derived content and
// credentials, and one that withholds content of unknown source; for a
// session shorter than a batch and for ones across many, cut by size and by
// count.
func TestRedactMatchesWholeSession(t *testing.T) {
	t.Parallel()
	isolate(t)
	pol := streamPolicyFile(t)
	for _, tc := range []struct {
		n     int
		short bool
	}{{41, false}, {9092, false}, {2*redactBatch + 900, true}} {
		t.Run(fmt.Sprint(tc.n, tc.short), func(t *testing.T) {
			t.Parallel()
			if testing.Short() && tc.n > 100 {
				t.Skip("a big session")
			}
			dir := filepath.Join(t.TempDir(), "store")
			id := writeStreamSession(t, dir, tc.n, tc.short)
			for _, model := range []string{"paths/x", "anthropic/x", "strict/x"} {
				for _, format := range []string{"json", "text"} {
					out, errOut, code := scrim(t, "", "--store", dir, "--policy", pol, "redact", id, "--model", model, "--format", format)
					if code != 0 || errOut != "" {
						t.Fatalf("%s %s: exit %d %q", model, format, code, errOut)
					}
					want := wholeRedact(t, dir, pol, id, model, format)
					if out != want {
						i := firstDiff(out, want)
						t.Fatalf("redact %s %s: %d bytes, not the %d of the whole session; first difference at %d:\n%.300s\nwant\n%.300s",
							model, format, len(out), len(want), i, out[max(0, i-100):], want[max(0, i-100):])
					}
					if format == "json" && !json.Valid([]byte(out)) {
						t.Fatalf("redact %s json is not valid JSON", model)
					}
					checkCrafted(t, model, format, out)
				}
			}
		})
	}
}

// TestStreamStopsAtAFailingWrite: a write that fails (stdout closed) ends
// the stream with its error, while the next batch is being redacted and
// more are read: nothing is written after it, and nothing waits forever
// on a batch's room.
func TestStreamStopsAtAFailingWrite(t *testing.T) {
	t.Parallel()
	isolate(t)
	pol, err := policy.Load(streamPolicyFile(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "store")
	id := writeStreamSession(t, dir, 3000, false)
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := st.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"paths/x", "anthropic/x"} {
		closed := errors.New("stdout closed")
		calls, seen := 0, 0
		_, _, _, err := streamRedacted(st, pol, h, model, func(stored, sent []session.Message) error {
			calls++
			if seen += len(stored); calls == 3 {
				return closed
			}
			return nil
		})
		if !errors.Is(err, closed) || calls != 3 || seen >= int(h.Count) {
			t.Fatalf("%s: %v after %d writes of %d of %d messages", model, err, calls, seen, h.Count)
		}
	}
}

// checkCrafted: the crafted lines fare as the tier says, so the comparison
// above compares redactions that happened.
func checkCrafted(t *testing.T, model, format, out string) {
	t.Helper()
	if !strings.Contains(out, quotedFirst) {
		t.Errorf("%s %s: a line allowed content has too was redacted", model, format)
	}
	derived := model != "paths/x"
	if strings.Count(out, withheldOne) != map[bool]int{true: 0, false: 1}[derived] {
		t.Errorf("%s %s: the withheld line appears %d times", model, format, strings.Count(out, withheldOne))
	}
	if strings.Contains(out, streamCred) == (model == "anthropic/x") {
		t.Errorf("%s %s: credential present: %v", model, format, strings.Contains(out, streamCred))
	}
}
