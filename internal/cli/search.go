package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/search"
)

func newSearchCmd(a *app) *cobra.Command {
	var model, sess, format string
	var regex bool
	cmd := &cobra.Command{
		Use:   "search QUERY [--model M] [--session S] [--regex] [--format json]",
		Short: "Find text in every session: user and assistant text, tool inputs and tool results",
		Long: "Search all sessions, most recently updated first; hits are printed as they are found.\n" +
			"Case is ignored unless QUERY has an upper-case letter (smart case); --regex takes QUERY as\n" +
			"an RE2 regular expression. With --model M it searches what M would be sent, redacted as\n" +
			"scrim redact shows it: a match inside content M's trust tier may not read is reported as\n" +
			"withheld from that tier, with the path, and never shown.\n" +
			"--format json writes one JSON object a line, one per hit.",
		Args: usage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			if args[0] == "" {
				return usageError("the query is empty; give the text to find")
			}
			st, err := a.Store()
			if err != nil {
				return err
			}
			q := search.Query{Text: args[0], Regex: regex, Model: model}
			if model != "" {
				if q.Policy, err = a.Policy(); err != nil {
					return err
				}
			}
			if sess != "" {
				id, err := st.Resolve(sess)
				if err != nil {
					return err
				}
				q.Sessions = []string{id}
			}
			w := bufio.NewWriterSize(a.stdout, 64<<10)
			var last string
			hits := 0
			emit := func(h search.Hit) error {
				hits++
				if format == "json" {
					b, err := json.Marshal(h)
					if err != nil {
						return err
					}
					w.Write(append(b, '\n'))
				} else {
					if h.SessionID != last {
						if last != "" {
							w.WriteString("\n")
						}
						fmt.Fprintf(w, "%s  %s\n", inertLine(h.SessionID), inertLine(h.Title))
					}
					writeHit(w, h)
				}
				// A new session's first hit goes out at once: the first
				// hits show while the rest are searched.
				if h.SessionID != last {
					last = h.SessionID
					return w.Flush()
				}
				return nil
			}
			stats, err := search.Run(cmd.Context(), st, q, emit)
			a.warnSkipped(stats.Bad)
			if err != nil {
				if search.IsQueryError(err) {
					return usageError("%v", err)
				}
				return err
			}
			if hits == 0 && format != "json" {
				fmt.Fprintf(w, "No match for %s in %s (%s).\n", inertLine(fmt.Sprintf("%q", args[0])),
					plural(stats.Sessions, "session", "sessions"), plural(stats.Messages, "message", "messages"))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "search what model M would be sent, provider/model (default: the stored history)")
	cmd.Flags().StringVar(&sess, "session", "", "search only session `S` (an ID or a unique prefix of one)")
	cmd.Flags().BoolVar(&regex, "regex", false, "QUERY is an RE2 regular expression")
	formatFlag(cmd, &format)
	return cmd
}

// writeHit prints one hit: where it is, then the line with the match, or,
// withheld, the tier and the path and never the text.
func writeHit(w *bufio.Writer, h search.Hit) {
	where := fmt.Sprintf("  #%d %s", h.Seq, h.Where)
	if h.Tool != "" {
		where += " " + h.Tool
	}
	if h.Source != "" && !h.Withheld {
		where += " " + h.Source
	}
	if h.Withheld {
		fmt.Fprintf(w, "%s · withheld from tier %q · %s in %s\n", inertLine(where), inertLine(h.Tier),
			plural(h.Matches, "match", "matches"), inertLine(h.WithheldIn))
		return
	}
	line := strings.TrimRight(h.Text, "\r")
	fmt.Fprintf(w, "%s:%d: %s\n", inertLine(where), h.Line, inertLine(line))
}
