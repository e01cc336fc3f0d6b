package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/fsx"
	"github.com/scrim-dev/scrim/internal/spool"
	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/internal/userdirs"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// exportFormats are the values of scrim export --format.
var exportFormats = []string{"md", "html", "jsonl"}

func newExportCmd(a *app) *cobra.Command {
	var model, format, outFile string
	cmd := &cobra.Command{
		Use:   "export SESSION [--model M] --format md|html|jsonl [-o FILE]",
		Short: "Write a session as Markdown, one self-contained HTML file or JSONL, redacted for a model with --model",
		Long: "Write a session for someone to read: Markdown to paste, a single HTML file that works offline\n" +
			"(tool results fold away; placeholders are marked), or JSONL, one message a line.\n" +
			"With --model M it is what M would be sent, redacted exactly as scrim redact shows it, and\n" +
			"says so at the top with the report's counts. Without --model it is the stored history, every\n" +
			"file's content included, and says at the top that it is not redacted.",
		Args: usage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !isExportFormat(format) {
				return usageError("--format must be md, html or jsonl, not %q", format)
			}
			outFile, err := userdirs.Expand(outFile, a.lookupEnv)
			if err != nil {
				return err
			}
			if err := checkOutputFile(outFile, format); err != nil {
				return err
			}
			defer debug.SetGCPercent(debug.SetGCPercent(25)) // as show: many short-lived copies
			st, h, err := a.resolve(args[0])
			if err != nil {
				return err
			}
			if model == "" {
				return a.writeExport(outFile, func(w io.Writer) error {
					ew := newExportWriter(format, w)
					if err := ew.begin(&exportDoc{Header: h}); err != nil {
						return err
					}
					bad, err := st.Scan(h.ID, 1, h.Count, ew.message)
					a.warnSkipped(bad)
					if err != nil {
						return err
					}
					return ew.end()
				})
			}
			pol, err := a.Policy()
			if err != nil {
				return err
			}
			return a.exportRedacted(st, pol, h, model, format, outFile)
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "export what model M would be sent, provider/model (default: the stored history, not redacted)")
	cmd.Flags().StringVar(&format, "format", "md", "output format: md, html or jsonl")
	cmd.Flags().StringVarP(&outFile, "output", "o", "", "write to `FILE` (default: standard output)")
	return cmd
}

// exportRedacted writes what model would be sent of session h. Its top says
// what the report counts, known only once the whole session is redacted:
// one pass, streamed as scrim redact streams it, redacts the session for
// the report (and, for JSONL, what happened to each message) and writes
// its messages, as the format writes them, to a spool beside the output,
// which follows the top. Where the spool finds no room (no temporary file,
// a full disk), a first pass redacts for the report alone and a second
// writes the messages: twice the redaction (at a million messages, JSONL
// took 10.8-12.3 s that way, 6.5-9.7 s in one pass), needing room only for
// the output.
func (a *app) exportRedacted(st *session.Store, pol *policy.Policy, h session.Header, model, format, outFile string) error {
	dir := ""
	if outFile != "" && outFile != "-" {
		dir = filepath.Dir(outFile)
	}
	body := &spool.Spool{Dir: dir, Strict: true}
	defer body.Close()
	doc, err := a.redactForExport(st, pol, h, model, format, newExportWriter(format, body))
	if errors.As(err, new(*spool.Error)) {
		body.Close()
		body = nil
		doc, err = a.redactForExport(st, pol, h, model, format, nil)
	}
	if doc != nil {
		defer doc.PerMessage.Close()
	}
	if err != nil {
		return err
	}
	return a.writeExport(outFile, func(w io.Writer) error {
		ew := newExportWriter(format, w)
		if err := ew.begin(doc); err != nil {
			return err
		}
		if body != nil {
			if _, err := body.WriteTo(w); err != nil {
				return err
			}
		} else {
			exportPasses.Add(1)
			_, _, _, err := streamRedacted(st, pol, h, model, func(_, sent []session.Message) error { return writeMessages(ew, sent) })
			if err != nil {
				return err
			}
		}
		return ew.end()
	})
}

// exportPasses counts the passes of exports that redact the session, for
// the tests.
var exportPasses atomic.Int64

// redactForExport redacts session h for model, streamed, for the top of
// its export: the report and, for JSONL, what happened to each message,
// kept in a spool. With ew, each message is written with it as well.
func (a *app) redactForExport(st *session.Store, pol *policy.Policy, h session.Header, model, format string, ew exportWriter) (*exportDoc, error) {
	exportPasses.Add(1)
	doc := &exportDoc{Header: h, Redacted: true, Model: model, PerMessage: &spool.Spool{}}
	sep := ""
	rep, stored, bad, err := streamRedacted(st, pol, h, model, func(stored, sent []session.Message) error {
		if format == "jsonl" {
			for _, r := range redact.PerMessage(stored, sent) {
				b, err := json.Marshal(&r)
				if err != nil {
					return err
				}
				io.WriteString(doc.PerMessage, sep)
				if _, err := doc.PerMessage.Write(b); err != nil {
					return err
				}
				sep = ","
			}
		}
		if ew != nil {
			return writeMessages(ew, sent)
		}
		return nil
	})
	if !errors.As(err, new(*spool.Error)) {
		a.warnSkipped(bad) // once: not for a try given up for the second way
	}
	if err != nil {
		doc.PerMessage.Close()
		return nil, err
	}
	doc.Report, doc.Stored = rep, stored
	return doc, nil
}

// writeMessages writes msgs with ew, in order.
func writeMessages(ew exportWriter, msgs []session.Message) error {
	for i := range msgs {
		if err := ew.message(&msgs[i]); err != nil {
			return err
		}
	}
	return nil
}

func isExportFormat(f string) bool {
	for _, x := range exportFormats {
		if f == x {
			return true
		}
	}
	return false
}

// exportDoc is what an export says at its top.
type exportDoc struct {
	Header     session.Header
	Redacted   bool
	Model      string
	Report     redact.Report
	PerMessage *spool.Spool // what happened to each message, as a JSON array's elements (JSONL only)
	Stored     int          // messages stored, when Redacted
}

// exportWriter writes one format: begin once, each message in order, end.
type exportWriter interface {
	begin(d *exportDoc) error
	message(m *session.Message) error
	end() error
}

func newExportWriter(format string, w io.Writer) exportWriter {
	switch format {
	case "html":
		return &htmlExport{w: w}
	case "jsonl":
		return &jsonlExport{w: w}
	}
	return &mdExport{w: w}
}

// writeExport runs write on standard output, or on a file that appears
// only when the export is complete: a failed or interrupted export leaves
// no half of a session behind for someone to share. The file is readable
// by its owner only, as an unredacted export holds whatever the agent
// read.
func (a *app) writeExport(outFile string, write func(io.Writer) error) error {
	if outFile == "" || outFile == "-" {
		w := bufio.NewWriterSize(a.stdout, 64<<10)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	}
	// Stopped (Ctrl-C, SIGTERM), it leaves no temporary file: without
	// --model, one holds every file the agent read, for as long as the
	// session takes to write. Its name is known before it is made, so that
	// a signal just after leaves nothing either.
	var made atomic.Pointer[string]
	defer onInterrupt(func() {
		if name := made.Load(); name != nil {
			os.Remove(*name)
		}
	})()
	var f *os.File
	_, err := fsx.MakeNew(filepath.Dir(outFile), "."+filepath.Base(outFile)+".tmp-", func(name string, ours bool) {
		if ours {
			made.Store(&name)
		} else {
			made.Store(nil)
		}
	}, func(name string) (err error) {
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	if err != nil {
		return fmt.Errorf("export to %s: %w", outFile, err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), outFile)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("export to %s: %w", outFile, err)
	}
	return nil
}

// checkOutputFile says, before a session is read and redacted for it,
// when -o FILE cannot be written: FILE is a folder, or its folder is not
// one. Found only at the end, it had cost the whole export and said
// "rename …tmp… FILE: file exists", or named the temporary file.
func checkOutputFile(outFile, format string) error {
	if outFile == "" || outFile == "-" {
		return nil
	}
	if fi, err := os.Stat(outFile); err == nil && fi.IsDir() {
		return usageError("-o %s is a folder: give the file to write, e.g. -o %s", inertLine(outFile), inertLine(filepath.Join(outFile, "session."+format)))
	}
	dir := filepath.Dir(outFile)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("export to %s: the folder %s does not exist", inertLine(outFile), inertLine(dir))
	case !fi.IsDir():
		return fmt.Errorf("export to %s: %s is a file, not a folder", inertLine(outFile), inertLine(dir))
	}
	return nil
}

// notRedacted is the warning at the top of an export without --model.
const notRedacted = "NOT REDACTED: this is the stored history, with the full content of every file the agent read, " +
	"whatever a trust tier may read. Export with --model M for what model M would be sent."

// summary is what the top of an export says about redaction, one sentence
// a line, in plain text (each format escapes it).
func (d *exportDoc) summary() []string {
	if !d.Redacted {
		return []string{notRedacted}
	}
	r := d.Report
	lines := []string{
		fmt.Sprintf("Redacted for model %s: trust tier %s (label %q), exactly as scrim redact shows it.", d.Model, r.Tier.Name, r.Tier.Label),
		fmt.Sprintf("Sent: %d of %s (%s left out: never sent).", r.Messages, plural(d.Stored, "stored message", "stored messages"), plural(r.Events, "event", "events")),
		fmt.Sprintf("Filtered: %s in %s; %s and %s inside parts.",
			plural(r.RedactedParts, "part", "parts"), plural(r.RedactedMessages, "message", "messages"),
			plural(r.Derived, "derived span", "derived spans"), plural(r.Secrets, "credential", "credentials")),
		fmt.Sprintf("Withheld: %s of unknown source; sent unchecked: %s of unknown source.", plural(r.Withheld, "result", "results"), plural(r.UnknownSource, "result", "results")),
	}
	if len(r.DeniedPaths) == 0 {
		return append(lines, "Denied paths: none.")
	}
	paths := make([]string, len(r.DeniedPaths))
	for i, p := range r.DeniedPaths {
		paths[i] = p.Path
	}
	return append(lines, fmt.Sprintf("Denied paths (%d): %s.", len(paths), strings.Join(paths, ", ")))
}

// heading is a message's one-line description: number, role, tool, model,
// error, time.
func heading(m *session.Message) string {
	head := []string{fmt.Sprintf("#%d %s", m.Seq, m.Role)}
	if m.Tool != "" {
		head = append(head, "tool "+m.Tool)
	}
	if m.Model != "" {
		head = append(head, "model "+m.Model)
	}
	if m.IsError {
		head = append(head, "error")
	}
	if !m.CreatedAt.IsZero() {
		head = append(head, m.CreatedAt.UTC().Format(time.RFC3339))
	}
	return safeLine(strings.Join(head, " · "))
}

// notes are the lines under a message's heading: where its content came
// from, and whether that could be checked.
func notes(m *session.Message) []string {
	var out []string
	if len(m.Meta.SourcePaths) > 0 {
		out = append(out, "sourcePaths: "+strings.Join(m.Meta.SourcePaths, ", "))
	}
	if m.Meta.Note != "" {
		out = append(out, "note: "+m.Meta.Note)
	}
	if why, ok := m.Unknown(); ok && !redactedWhole(m) {
		out = append(out, "unknown source: "+why)
	}
	for i := range out {
		out[i] = safeLine(out[i])
	}
	return out
}

// partLabel names a part: its kind, a tool call's name and ID, its source.
func partLabel(p *session.Part) string {
	label := string(p.Kind)
	if p.Kind == session.PartToolCall {
		label += " " + p.Name
		if p.CallID != "" {
			label += " (" + p.CallID + ")"
		}
	}
	switch {
	case p.SourcePath != "" && p.Kind == session.PartToolCall:
		label += " writes " + p.SourcePath
	case p.SourcePath != "":
		label += " from " + p.SourcePath
	}
	return safeLine(label)
}

// foldable reports whether a part is a tool's output: what an HTML export
// folds away and a reader opens when they need it.
func foldable(m *session.Message, p *session.Part) bool {
	return !p.Redacted && (p.Kind == session.PartToolResult || m.Role == session.RoleTool)
}

func safeLine(s string) string { return oneLine(termsafe.Inert(s)) }

// segment is a run of a part's text: content, or a placeholder redact put
// inside it (derived content, a credential).
type segment struct {
	Text        string
	Placeholder bool
}

// segments splits text at the placeholders redact put in it (their offsets
// are in text's units, so the split comes before Inert changes lengths).
// Offsets that do not fit text mark the whole of it: fail closed.
func segments(text string, filtered []session.Filtered) []segment {
	var out []segment
	at := 0
	for _, f := range filtered {
		if f.Key >= 0 {
			continue // inside a tool call's input
		}
		if f.Start < at || f.End < f.Start || f.End > len(text) {
			return []segment{{Text: termsafe.Inert(text), Placeholder: true}}
		}
		if f.Start > at {
			out = append(out, segment{Text: termsafe.Inert(text[at:f.Start])})
		}
		out = append(out, segment{Text: termsafe.Inert(text[f.Start:f.End]), Placeholder: true})
		at = f.End
	}
	if at < len(text) || len(out) == 0 {
		out = append(out, segment{Text: termsafe.Inert(text[at:])})
	}
	return out
}

// inputFiltered reports whether redact put a placeholder in a tool call's input.
func inputFiltered(p *session.Part) bool {
	for _, f := range p.Filtered {
		if f.Key >= 0 {
			return true
		}
	}
	return false
}

// sticky returns w's sticky error (a bufio.Writer keeps the first), so a
// closed pipe stops the scan instead of rendering the rest of the session.
func sticky(w io.Writer) error {
	_, err := io.WriteString(w, "")
	return err
}
