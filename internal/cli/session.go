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
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/cores"
	"github.com/scrim-dev/scrim/internal/memlimit"
	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

// timeLayout shows stored times in the reader's local zone.
const timeLayout = "2006-01-02 15:04:05"

func newSessionsCmd(a *app) *cobra.Command {
	var format, model string
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List stored sessions, most recently updated first",
		Long: `Lists the stored sessions, most recently updated first. With --model M each
session also says what M would be sent of it: how many messages carry a
placeholder, which paths are denied, how much content is of unknown source.
Those counts are kept in the store beside each session, so they cost a read
the next time; a count that no longer holds (the policy, the session or a
team file changed) is made again, on all cores.`,
		Args: usage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			st, err := a.Store()
			var none noStoreError
			if errors.As(err, &none) {
				// Nothing to list, and nothing made.
				if format == "json" {
					_, err = fmt.Fprintln(a.stdout, "[]")
					return err
				}
				return writeSessionTable(a.stdout, nil, nil, none.dir+" (no session store there yet)")
			}
			if err != nil {
				return err
			}
			list, bad, err := st.List()
			if err != nil {
				return fmt.Errorf("list sessions in %s: %w", st.Dir(), err)
			}
			var counts []*modelCounts
			if model != "" {
				pol, err := a.Policy()
				if err != nil {
					return err
				}
				if counts, err = countSessions(st, pol, model, list); err != nil {
					return err
				}
			}
			out := bufio.NewWriterSize(a.stdout, 64<<10)
			if format == "json" {
				err = writeJSONList(out, list, counts)
			} else {
				err = writeSessionTable(out, list, counts, st.Dir())
			}
			if err == nil {
				err = out.Flush()
			}
			a.warnSkipped(bad)
			return err
		},
	}
	formatFlag(cmd, &format)
	cmd.Flags().StringVar(&model, "model", "", "also count what this model would be sent of each session")
	return cmd
}

// modelCounts is what a model would be sent of one session, in sessions'
// JSON.
type modelCounts struct {
	Model            string   `json:"model"`
	Tier             string   `json:"tier"`
	Messages         uint64   `json:"messages"` // counted: the session's messages when listed
	Sent             int      `json:"sent"`
	RedactedMessages int      `json:"redactedMessages"`
	DeniedPaths      []string `json:"deniedPaths"`
	UnknownSource    int      `json:"unknownSource"` // tool results of unknown source sent unchecked
	Derived          int      `json:"derived"`
	Secrets          int      `json:"secrets"`
	Kept             bool     `json:"kept"` // read from the store rather than counted now
}

// countSessions counts each session for model: kept counts where they
// hold, the rest counted (on top of a kept one when it still holds) by a
// worker per core, and kept for next time.
func countSessions(st *session.Store, pol *policy.Policy, model string, list []session.Header) ([]*modelCounts, error) {
	// The heap kept near what is live, as the TUI keeps it: a first
	// count gathers the fingerprints of all a session withholds (at a
	// million messages with half the reads withheld, 338 MiB at its peak
	// with the collector's default headroom).
	memlimit.Soft()
	tier, _ := pol.TierFor(model)
	out := make([]*modelCounts, len(list))
	errs := make([]error, len(list))
	x := tally.NewContexts()
	work := make(chan int)
	var wg sync.WaitGroup
	for range cores.N() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				h := list[i]
				k, ok, rev, err := tally.Load(st, pol, h.ID, model)
				if err != nil {
					errs[i] = err
					continue
				}
				c := k.Counts
				kept := ok && c.Upto == h.Count
				if !kept {
					if !ok {
						c = tally.Counts{}
					}
					if err := tally.CountAll(x, st, pol, h.ID, model, &c, h.Count); err != nil {
						errs[i] = fmt.Errorf("count session %s for %s: %w", h.ID, model, err)
						continue
					}
					_ = tally.Save(st, pol, h.ID, model, rev, c) // a count not kept is made again next time
				}
				x.Forget(h.ID) // what counting it gathered is not needed again
				denied := c.Denied
				if denied == nil {
					denied = []string{}
				}
				out[i] = &modelCounts{Model: model, Tier: tier.Name, Messages: c.Upto, Sent: c.Sent,
					RedactedMessages: len(c.Redacted), DeniedPaths: denied, UnknownSource: c.Unknown,
					Derived: c.Derived, Secrets: c.Secrets, Kept: kept}
			}
		}()
	}
	for i := range list {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sessionJSON is a header, and with --model its counts.
type sessionJSON struct {
	session.Header
	Counts *modelCounts `json:"counts,omitempty"`
}

func writeJSONList(w io.Writer, list []session.Header, counts []*modelCounts) error {
	rows := make([]sessionJSON, len(list))
	for i, h := range list {
		rows[i].Header = h
		if counts != nil {
			rows[i].Counts = counts[i]
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func writeSessionTable(w io.Writer, list []session.Header, counts []*modelCounts, dir string) error {
	if len(list) == 0 {
		_, err := fmt.Fprintf(w, "No sessions yet in %s.\n"+
			"  start one:     scrim new --title \"what you are working on\"\n"+
			"  import one:    scrim import claude|codex|crush|gemini|opencode PATH\n"+
			"  try the demo:  scrim demo\n", inertLine(dir))
		return err
	}
	if counts != nil {
		rows := make([][5]string, 0, len(list)+1)
		rows = append(rows, [5]string{"ID", "TITLE", "MESSAGES", "REDACTED", "DENIED PATHS"})
		for i, h := range list {
			c := counts[i]
			rows = append(rows, [5]string{inertLine(h.ID), truncate(inertLine(h.Title), 48),
				strconv.FormatUint(h.Count, 10), strconv.Itoa(c.RedactedMessages), strconv.Itoa(len(c.DeniedPaths))})
		}
		return writeColumns(w, rows)
	}
	rows := make([][5]string, 0, len(list)+1)
	rows = append(rows, [5]string{"ID", "TITLE", "MESSAGES", "LAST MODEL", "UPDATED"})
	for _, h := range list {
		rows = append(rows, [5]string{inertLine(h.ID), truncate(inertLine(h.Title), 48),
			strconv.FormatUint(h.Count, 10), orDash(inertLine(h.LastModel)), h.UpdatedAt.Local().Format(timeLayout)})
	}
	return writeColumns(w, rows)
}

// writeColumns pads each column to its widest cell (counted in runes) plus
// two spaces; the last column is not padded.
func writeColumns(w io.Writer, rows [][5]string) error {
	var width [5]int
	for _, r := range rows {
		for c, cell := range r {
			width[c] = max(width[c], utf8.RuneCountInString(cell))
		}
	}
	var line []byte
	for _, r := range rows {
		line = line[:0]
		for c, cell := range r {
			line = append(line, cell...)
			if c < len(r)-1 {
				for range width[c] - utf8.RuneCountInString(cell) + 2 {
					line = append(line, ' ')
				}
			}
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

func newNewCmd(a *app) *cobra.Command {
	var title, workdir string
	cmd := &cobra.Command{
		Use:   "new --title T [--workdir DIR]",
		Short: "Create an empty session and print its ID",
		Args:  usage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkTitle(title); err != nil {
				return err
			}
			dir, err := workDir(a.expandHome(workdir))
			if err != nil {
				return err
			}
			a.creates = true
			st, err := a.Store()
			if err != nil {
				return err
			}
			h, err := st.Create(session.Header{Title: title, WorkDir: dir})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.stdout, h.ID)
			return err
		},
	}
	cmd.Flags().StringVar(&title, "title", "", "the session's title (required)")
	cmd.Flags().StringVar(&workdir, "workdir", "", "folder the session's tools run in (default: the current folder)")
	return cmd
}

func checkTitle(title string) error {
	if strings.TrimSpace(title) == "" {
		return usageError("the title is empty; give one, e.g. \"fix the parser\"")
	}
	if strings.ContainsAny(title, "\r\n") {
		return usageError("the title must be one line")
	}
	return nil
}

// workDir is dir made absolute, or the current folder; it must exist.
func workDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workdir %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return "", usageError("--workdir %s is not a folder", dir)
	}
	return abs, nil
}

func newShowCmd(a *app) *cobra.Command {
	var format string
	var last uint64
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Print a session's stored history (SESSION: an ID or a unique prefix of one)",
		Args:  usage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			// Collect garbage sooner: opening the store checks every
			// table, and each message is decoded (and encoded) into
			// short-lived copies; by default the heap would grow to
			// twice what is live (mostly the store's block cache and
			// memtable) before collecting.
			defer debug.SetGCPercent(debug.SetGCPercent(25))
			st, h, err := a.resolve(args[0])
			if err != nil {
				return err
			}
			from := uint64(1)
			if last > 0 && last < h.Count {
				from = h.Count - last + 1
			}
			out := bufio.NewWriterSize(a.stdout, 64<<10)
			var bad []session.DecodeError
			if format == "json" {
				bad, err = writeJSONSession(out, st, h, from)
			} else {
				bad, err = writeTextSession(out, st, h, from)
			}
			if err == nil {
				err = out.Flush()
			}
			a.warnSkipped(bad)
			return err
		},
	}
	formatFlag(cmd, &format)
	cmd.Flags().Uint64Var(&last, "last", 0, "show only the last N messages")
	return cmd
}

// writeJSONSession streams {"session": header, "messages": [...]}, each
// message in its stored JSON shape, one per line.
func writeJSONSession(w io.Writer, st *session.Store, h session.Header, from uint64) ([]session.DecodeError, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "{\"session\":%s,\"messages\":[", hb)
	sep := "\n"
	var buf []byte // one message at a time, encoded as json.Marshal would
	bad, err := st.Scan(h.ID, from, h.Count, func(m *session.Message) error {
		if cap(buf) > 1<<20 {
			buf = nil // an outsized message: do not hold its room for the rest
		}
		var err error
		buf, err = session.AppendMessageJSON(append(buf[:0], sep...), m)
		if err != nil {
			return err
		}
		sep = ",\n"
		_, err = w.Write(buf)
		return err
	})
	if err != nil {
		return bad, err
	}
	_, err = io.WriteString(w, "\n]}\n")
	return bad, err
}

func writeTextSession(w io.Writer, st *session.Store, h session.Header, from uint64) ([]session.DecodeError, error) {
	fmt.Fprintf(w, "session %s  %s\n", inertLine(h.ID), inertLine(h.Title))
	fmt.Fprintf(w, "created %s  updated %s  messages %d  last model %s\n",
		h.CreatedAt.Local().Format(timeLayout), h.UpdatedAt.Local().Format(timeLayout), h.Count, orDash(inertLine(h.LastModel)))
	if h.Origin != "" {
		fmt.Fprintf(w, "origin %s\n", inertLine(h.Origin))
	}
	if h.WorkDir != "" {
		fmt.Fprintf(w, "workdir %s\n", inertLine(h.WorkDir))
	}
	return st.Scan(h.ID, from, h.Count, func(m *session.Message) error {
		return writeTextMessage(w, m)
	})
}

// writeTextMessage prints one message: a heading line, its sourcePaths, and
// each part as a bracketed label with its text indented below, so content can
// never pass for structure. All stored text goes through termsafe.Inert.
func writeTextMessage(w io.Writer, m *session.Message) error {
	head := []string{fmt.Sprintf("\n#%d %s", m.Seq, inertLine(string(m.Role)))}
	if m.Tool != "" {
		head = append(head, "tool "+inertLine(m.Tool))
	}
	if m.ToolCallID != "" {
		head = append(head, "call "+inertLine(m.ToolCallID))
	}
	if m.Model != "" {
		head = append(head, "model "+inertLine(m.Model))
	}
	if m.IsError {
		head = append(head, "error")
	}
	head = append(head, m.CreatedAt.Local().Format(timeLayout))
	fmt.Fprintln(w, strings.Join(head, " · "))
	if m.Meta.SourcePaths != nil {
		paths := make([]string, len(m.Meta.SourcePaths))
		for i, p := range m.Meta.SourcePaths {
			paths[i] = inertLine(p)
		}
		fmt.Fprintf(w, "  sourcePaths: %s\n", strings.Join(paths, ", "))
	}
	if m.Meta.Note != "" {
		fmt.Fprintf(w, "  note: %s\n", inertLine(m.Meta.Note))
	}
	if why, ok := m.Unknown(); ok {
		fmt.Fprintf(w, "  unknown source: %s\n", inertLine(why))
	} else if m.Meta.NoFiles {
		fmt.Fprintln(w, "  no file content")
	}
	for _, p := range m.Parts {
		label := inertLine(string(p.Kind))
		if p.Kind == session.PartToolCall {
			label += " " + inertLine(p.Name)
			if p.CallID != "" {
				label += " (" + inertLine(p.CallID) + ")"
			}
		}
		switch {
		case p.SourcePath != "" && p.Kind == session.PartToolCall:
			label += " writes " + inertLine(p.SourcePath)
		case p.SourcePath != "":
			label += " from " + inertLine(p.SourcePath)
		}
		fmt.Fprintf(w, "  [%s]\n", label)
		if len(p.Input) > 0 {
			writeIndented(w, string(p.Input))
		}
		if p.Text != "" {
			writeIndented(w, p.Text)
		}
	}
	// An empty write returns a bufio.Writer's sticky error, so a closed
	// pipe stops the scan instead of rendering the rest of the session.
	_, err := io.WriteString(w, "")
	return err
}

func writeIndented(w io.Writer, text string) {
	text = strings.TrimSuffix(termsafe.Inert(text), "\n")
	for line := range strings.SplitSeq(text, "\n") {
		io.WriteString(w, "    ")
		io.WriteString(w, line)
		io.WriteString(w, "\n")
	}
}

func newRmCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "rm SESSION...",
		Short: "Delete sessions and all their messages (SESSION: an ID or a unique prefix of one)",
		Args:  usage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Resolve every argument first: one typo deletes nothing.
			st, err := a.Store()
			if err != nil {
				return err
			}
			var ids []string
			for _, arg := range args {
				id, err := st.Resolve(arg)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			for _, id := range ids {
				// A header that cannot be decoded must not stop its removal.
				h, _ := st.Get(id)
				if err := st.Delete(id); err != nil {
					return fmt.Errorf("delete session %s: %w", id, err)
				}
				fmt.Fprintf(a.stdout, "removed %s  %s  (%d messages)\n", id, inertLine(h.Title), h.Count)
			}
			return nil
		},
	}
}

func newRenameCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "rename SESSION TITLE",
		Short: "Change a session's title (SESSION: an ID or a unique prefix of one)",
		Args:  usage(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTitle(args[1]); err != nil {
				return err
			}
			st, h, err := a.resolve(args[0])
			if err != nil {
				return err
			}
			return st.Rename(h.ID, args[1])
		},
	}
}

// resolve opens the store and finds the session an ID or prefix names. A
// session whose header cannot be decoded can still be resolved (to rm it).
func (a *app) resolve(arg string) (*session.Store, session.Header, error) {
	st, err := a.Store()
	if err != nil {
		return nil, session.Header{}, err
	}
	id, err := st.Resolve(arg)
	if err != nil {
		return nil, session.Header{}, err
	}
	h, err := st.Get(id)
	if err != nil {
		return nil, h, fmt.Errorf("%w; remove it with: scrim rm %s", err, id)
	}
	return st, h, nil
}

// warnSkipped reports records that could not be decoded, one line each.
func (a *app) warnSkipped(bad []session.DecodeError) {
	for _, e := range bad {
		fmt.Fprintf(a.stderr, "scrim: warning: %s; skipped\n", oneLine(inertLine(e.Error())))
	}
}

// inertLine is termsafe.Inert for one-line fields: newlines and tabs are shown,
// not obeyed, so a title cannot break a table row.
func inertLine(s string) string {
	s = termsafe.Inert(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", "\u2424", "\t", "\u2409").Replace(s)
	}
	return s
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
