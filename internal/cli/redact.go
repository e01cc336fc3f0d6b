package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/spool"
	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
)

func newRedactCmd(a *app) *cobra.Command {
	var model, format string
	cmd := &cobra.Command{
		Use:   "redact SESSION --model M",
		Short: "Show exactly what model M would be sent of a session, and what was filtered and why",
		Long: "Build the request for model M the way the runner does (runner.Build) and print its history:\n" +
			"content from paths M's trust tier may not read is replaced by placeholders. The stored\n" +
			"session is not changed. The report lists the denied paths and the rule that denied each.",
		Args: usage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "request" {
				if err := checkFormat(format); err != nil {
					return usageError("--format must be text, json or request, not %q", format)
				}
			}
			if model == "" {
				return usageError("scrim redact needs --model M, the model to preview (e.g. --model anthropic/claude-sonnet-4-5)")
			}
			// Collect garbage sooner, as show does: opening the store
			// checks every table, and each batch is decoded, redacted and
			// encoded into short-lived copies.
			defer debug.SetGCPercent(debug.SetGCPercent(25))
			st, h, err := a.resolve(args[0])
			if err != nil {
				return err
			}
			pol, err := a.Policy()
			if err != nil {
				return err
			}
			if format == "request" {
				return a.printRequest(cmd.Context(), st, pol, h, model)
			}
			w := bufio.NewWriterSize(a.stdout, 64<<10)
			var bad []session.DecodeError
			if format == "json" {
				bad, err = writeRedactJSON(w, st, pol, h, model)
			} else {
				bad, err = writeRedactText(w, st, pol, h, model)
			}
			if len(bad) > 0 {
				// They cannot be sent either; say so rather than hide it.
				fmt.Fprintf(a.stderr, "scrim: warning: %d stored messages of session %s cannot be decoded and are left out (first: %v)\n", len(bad), h.ID, bad[0])
			}
			if err != nil {
				return err
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "model to preview, provider/model (required)")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json, or request: the exact JSON body M's provider would get (system prompt, tools for M's tier, history)")
	return cmd
}

// printRequest prints the body scrim send --continue would send to model,
// as the provider's client writes it, a batch of the redacted history at a
// time (runner.RequestWriter); nothing is sent.
func (a *app) printRequest(ctx context.Context, st *session.Store, pol *policy.Policy, h session.Header, model string) error {
	provs, err := a.Providers()
	if err != nil {
		return err
	}
	defer provs.Close()
	w := bufio.NewWriterSize(a.stdout, 64<<10)
	rw, err := runner.New(st, pol, provs).NewRequestWriter(ctx, w, h.ID, model)
	if err != nil {
		return err
	}
	_, _, bad, err := streamRedacted(st, pol, h, model, func(_, sent []session.Message) error { return rw.Add(sent) })
	if len(bad) > 0 {
		fmt.Fprintf(a.stderr, "scrim: warning: %d stored messages of session %s cannot be decoded and are left out (first: %v)\n", len(bad), h.ID, bad[0])
	}
	if err != nil {
		return err
	}
	if err := rw.Close(); err != nil {
		return err
	}
	io.WriteString(w, "\n")
	return w.Flush()
}

// writeRedactJSON streams {"session","model","tier","messages","report"}
// for model, a batch at a time, each message compact on its own line in the
// stored shape, as show does (an indenting encoder would reformat tool-call
// inputs). The report holds the totals and, under "messages", what happened
// to each message; it follows the messages, whose redaction its figures
// count.
func writeRedactJSON(w io.Writer, st *session.Store, pol *policy.Policy, h session.Header, model string) ([]session.DecodeError, error) {
	tier, _ := pol.TierFor(model)
	head, err := json.Marshal(struct {
		Session string      `json:"session"`
		Model   string      `json:"model"`
		Tier    redact.Tier `json:"tier"`
	}{h.ID, model, redact.Tier{Name: tier.Name, Label: tier.Label}})
	if err != nil {
		return nil, err
	}
	io.WriteString(w, strings.TrimSuffix(string(head), "}")+`,"messages":[`)
	var per spool.Spool
	defer per.Close()
	sep, perSep := "\n", ""
	var buf []byte // one message at a time, encoded as json.Marshal would
	rep, _, bad, err := streamRedacted(st, pol, h, model, func(stored, sent []session.Message) error {
		for i := range sent {
			if cap(buf) > 1<<20 {
				buf = nil // an outsized message: do not hold its room for the rest
			}
			var err error
			if buf, err = session.AppendMessageJSON(append(buf[:0], sep...), &sent[i]); err != nil {
				return err
			}
			sep = ",\n"
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		for _, r := range redact.PerMessage(stored, sent) {
			b, err := json.Marshal(&r)
			if err != nil {
				return err
			}
			io.WriteString(&per, perSep)
			if _, err := per.Write(b); err != nil {
				return err
			}
			perSep = ","
		}
		return nil
	})
	if err != nil {
		return bad, err
	}
	totals, err := json.Marshal(rep)
	if err != nil {
		return bad, err
	}
	// The report is the totals with "messages" last, as marshalling them
	// with the per-message reports beside them writes it.
	fmt.Fprintf(w, "\n],\"report\":%s,\"messages\":[", bytes.TrimSuffix(totals, []byte("}")))
	if _, err := per.WriteTo(w); err != nil {
		return bad, err
	}
	_, err = io.WriteString(w, "]}}\n")
	return bad, err
}

// Gutters mark every printed line, so content cannot pass itself off as a
// placeholder: a file that contains placeholder text still prints under the
// content gutter, and only parts that redact marked Redacted get the other.
const (
	gutterContent = "  │ "
	gutterFilter  = "  ✖ "
	gutterInfo    = "  · "
)

// writeRedactText streams what model would be sent of session h, a batch at
// a time, then the report, whose figures count what was streamed, and, last,
// what happened to each message.
func writeRedactText(w io.Writer, st *session.Store, pol *policy.Policy, h session.Header, model string) ([]session.DecodeError, error) {
	tier, _ := pol.TierFor(model)
	fmt.Fprintf(w, "What %s would be sent of session %s (tier %s, label %q)\n\n",
		termsafe.Inert(model), h.ID, termsafe.Inert(tier.Name), termsafe.Inert(tier.Label))
	var per spool.Spool
	defer per.Close()
	flagged := 0
	rep, stored, bad, err := streamRedacted(st, pol, h, model, func(stored, sent []session.Message) error {
		for i := range sent {
			writeRedactMessage(w, &sent[i])
		}
		for _, r := range redact.PerMessage(stored, sent) {
			writePerMessage(&per, r, sent)
			flagged++
		}
		// An empty write returns a bufio.Writer's sticky error: a closed
		// pipe stops the stream.
		_, err := io.WriteString(w, "")
		return err
	})
	if err != nil {
		return bad, err
	}
	writeRedactReport(w, tier, rep, stored, pol.File)
	if flagged > 0 {
		fmt.Fprintln(w, "  per message:")
		if _, err := per.WriteTo(w); err != nil {
			return bad, err
		}
	}
	return bad, nil
}

// writeRedactReport writes the report's totals: stored is how many messages
// of the session were read.
func writeRedactReport(w io.Writer, tier *policy.Tier, rep redact.Report, stored int, policyFile string) {
	fmt.Fprintf(w, "\nReport: %d of %s sent (%s left out: never sent)\n", rep.Messages, plural(stored, "stored message", "stored messages"), plural(rep.Events, "event", "events"))
	fmt.Fprintf(w, "  filtered: %s in %s", plural(rep.RedactedParts, "part", "parts"), plural(rep.RedactedMessages, "message", "messages"))
	if spans := rep.Derived + rep.Secrets; spans > 0 {
		fmt.Fprintf(w, ", and %s inside parts", plural(spans, "span", "spans"))
	}
	fmt.Fprintln(w)
	if len(rep.DeniedPaths) == 0 {
		fmt.Fprintln(w, "  denied paths: none")
	} else {
		fmt.Fprintf(w, "  denied paths (%d):\n", len(rep.DeniedPaths))
	}
	for _, d := range rep.DeniedPaths {
		rule := "no read pattern matches"
		if d.File != "" {
			rule = d.Reason // names the team file, its line and pattern
		} else if d.Pattern != "" {
			rule = fmt.Sprintf("deny pattern %q", d.Pattern)
			if d.Line > 0 {
				rule += fmt.Sprintf(" (%s:%d)", policyFile, d.Line)
			}
		} else if d.Reason != "" {
			rule = d.Reason
		}
		fmt.Fprintf(w, "    %s  — %s\n", inertLine(d.Path), inertLine(rule))
	}
	writeSpanReport(w, tier, rep)
	fmt.Fprintf(w, "  unknown source: %s whose source is not (fully) known (scripts, the web, tools scrim does not know): sent unchecked\n", plural(rep.UnknownSource, "tool result", "tool results"))
	if rep.Withheld > 0 {
		fmt.Fprintf(w, "  withheld: %s of unknown source (tier %s accepts only content whose source is known)\n", plural(rep.Withheld, "result", "results"), termsafe.Inert(rep.Tier.Name))
	}
}

// writePerMessage writes the report's line for one message; sent holds
// what is sent of it.
func writePerMessage(w io.Writer, r redact.MessageReport, sent []session.Message) {
	var what []string
	for _, x := range r.Redacted {
		switch x.Kind {
		case "derived":
			what = append(what, "derived from "+inertLine(x.Path))
		case "secret":
			what = append(what, "secret: "+termsafe.Inert(x.Rule))
		default:
			what = append(what, "filtered "+inertLine(x.Path))
		}
	}
	if r.UnknownSource != nil {
		state := "sent unchecked"
		if r.Withheld {
			state = "withheld"
		} else if len(r.Redacted) > 0 && !hasUnredacted(sent, r.Seq) {
			state = "filtered"
		}
		what = append(what, "unknown source ("+termsafe.Inert(oneLine(*r.UnknownSource))+"): "+state)
	}
	fmt.Fprintf(w, "    #%-5d %s\n", r.Seq, strings.Join(what, "; "))
}

// writeSpanReport says what derived and secret redaction replaced, for a
// tier that asks for them.
func writeSpanReport(w io.Writer, tier *policy.Tier, rep redact.Report) {
	if tier.RedactsDerived() {
		fmt.Fprintf(w, "  derived: %s content of denied files, replaced by that file's placeholder\n", plural(rep.Derived, "span that repeats", "spans that repeat"))
		for _, d := range rep.DerivedFrom {
			fmt.Fprintf(w, "    derived from %s  — %s\n", inertLine(d.Path), plural(d.Spans, "span", "spans"))
		}
		if len(rep.Related) > 0 {
			fmt.Fprintf(w, "    also from what %s of its agent run withheld (subagents, and parents up to its end): %s\n",
				plural(len(rep.Related), "session", "sessions"), strings.Join(rep.Related, ", "))
		}
	}
	if tier.RedactsSecrets() {
		fmt.Fprintf(w, "  secrets: %s replaced (gitleaks default rules)\n", plural(rep.Secrets, "credential", "credentials"))
		for _, r := range rep.SecretRules {
			fmt.Fprintf(w, "    secret: %s  — %d\n", termsafe.Inert(r.Rule), r.Spans)
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// hasUnredacted reports whether the sent message seq, one of sent, still
// holds content that no placeholder replaced.
func hasUnredacted(sent []session.Message, seq uint64) bool {
	for i := range sent {
		if sent[i].Seq != seq {
			continue
		}
		for _, p := range sent[i].Parts {
			if !p.Redacted && p.Kind != session.PartToolCall {
				return true
			}
		}
	}
	return false
}

func writeRedactMessage(w io.Writer, m *session.Message) {
	head := fmt.Sprintf("#%d %s", m.Seq, m.Role)
	if m.Tool != "" {
		head += " " + m.Tool
	}
	if m.Model != "" {
		head += " (" + m.Model + ")"
	}
	if m.IsError {
		head += " error"
	}
	fmt.Fprintln(w, termsafe.Inert(oneLine(head)))
	if why, ok := m.Unknown(); ok && !redactedWhole(m) {
		fmt.Fprintln(w, gutterInfo+"unknown source, sent unchecked: "+termsafe.Inert(oneLine(why)))
	}
	if !m.Attributed() && len(m.Meta.SourcePaths) > 0 && !redactedWhole(m) {
		fmt.Fprintln(w, gutterInfo+"from "+termsafe.Inert(oneLine(strings.Join(m.Meta.SourcePaths, ", "))))
	}
	for _, p := range m.Parts {
		switch {
		case p.Redacted:
			fmt.Fprintln(w, gutterFilter+termsafe.Inert(oneLine(p.Text)))
		case p.Kind == session.PartToolCall:
			gutter := gutterInfo
			if len(p.Filtered) > 0 {
				gutter = gutterFilter // a placeholder inside the input
			}
			fmt.Fprintln(w, gutter+termsafe.Inert(oneLine("call "+p.Name+" "+string(p.Input))))
		default:
			if p.SourcePath != "" {
				fmt.Fprintln(w, gutterInfo+"from "+termsafe.Inert(oneLine(p.SourcePath)))
			}
			writeMarked(w, p.Text, p.Filtered)
		}
	}
}

// redactedWhole reports whether every part of m was replaced.
func redactedWhole(m *session.Message) bool {
	for _, p := range m.Parts {
		if !p.Redacted {
			return false
		}
	}
	return len(m.Parts) > 0
}

func writeGuttered(w io.Writer, text string) { writeMarked(w, text, nil) }

// writeMarked writes text a line at a time, each under the content gutter,
// or under the placeholder gutter when a placeholder that redact put there
// (filtered, in text's own units) is on it.
func writeMarked(w io.Writer, text string, filtered []session.Filtered) {
	text = strings.TrimSuffix(text, "\n")
	at := 0
	for line := range strings.SplitSeq(text, "\n") {
		gutter := gutterContent
		for _, f := range filtered {
			if f.Key < 0 && f.Start < at+len(line)+1 && f.End > at {
				gutter = gutterFilter
			}
		}
		io.WriteString(w, gutter)
		io.WriteString(w, termsafe.Inert(line))
		io.WriteString(w, "\n")
		at += len(line) + 1
	}
}
