package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tools"
)

type toolOpts struct {
	session, model, format string
}

func newToolCmd(a *app) *cobra.Command {
	o := &toolOpts{}
	cmd := &cobra.Command{
		Use:   "tool",
		Short: "Run an agent tool for a model and append the call and its result to a session",
		Long: "Run read, grep, glob, bash or webfetch as the given model would: the model's trust tier\n" +
			"decides which files it may read. The call and its result are appended to the session.\n" +
			"A denied read exits 3 and stores no file content.",
		Args: usage(cobra.NoArgs),
	}
	cmd.PersistentFlags().StringVar(&o.session, "session", "", "session ID (or a unique prefix) to append to (required)")
	cmd.PersistentFlags().StringVar(&o.model, "model", "", "active model, provider/model (required): its tier decides what may be read")
	cmd.PersistentFlags().StringVar(&o.format, "format", "text", "output format: text or json (the stored result message)")
	cmd.AddCommand(toolReadCmd(a, o), toolGrepCmd(a, o), toolGlobCmd(a, o), toolBashCmd(a, o), toolWebfetchCmd(a, o))
	return cmd
}

func toolReadCmd(a *app, o *toolOpts) *cobra.Command {
	var offset, limit int
	cmd := &cobra.Command{
		Use:   "read PATH",
		Short: "Read a text file (numbered lines)",
		Args:  usage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := map[string]any{"path": args[0]}
			setIf(in, "offset", offset, offset != 0)
			setIf(in, "limit", limit, limit != 0)
			return a.runTool(cmd, o, "read", in)
		},
	}
	cmd.Flags().IntVar(&offset, "offset", 0, "1-based line to start at")
	cmd.Flags().IntVar(&limit, "limit", 0, "most lines to return (at most 2000)")
	return cmd
}

func toolGrepCmd(a *app, o *toolOpts) *cobra.Command {
	var glob string
	var ignoreCase bool
	var maxMatches int
	cmd := &cobra.Command{
		Use:   "grep PATTERN [PATH]",
		Short: "Search file contents with a Go RE2 regular expression",
		Args:  usage(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := map[string]any{"pattern": args[0]}
			if len(args) == 2 {
				in["path"] = args[1]
			}
			setIf(in, "glob", glob, glob != "")
			setIf(in, "ignore_case", true, ignoreCase)
			setIf(in, "max_matches", maxMatches, maxMatches != 0)
			return a.runTool(cmd, o, "grep", in)
		},
	}
	cmd.Flags().StringVar(&glob, "glob", "", `only files whose name (or relative path, if it has a slash) matches, e.g. "*.go"`)
	cmd.Flags().BoolVarP(&ignoreCase, "ignore-case", "i", false, "match case-insensitively")
	cmd.Flags().IntVar(&maxMatches, "max-matches", 0, "stop after this many matching lines (default 200, at most 2000)")
	return cmd
}

func toolGlobCmd(a *app, o *toolOpts) *cobra.Command {
	var content bool
	cmd := &cobra.Command{
		Use:   "glob PATTERN [PATH]",
		Short: "Find files by doublestar pattern; --content also returns their content",
		Args:  usage(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := map[string]any{"pattern": args[0]}
			if len(args) == 2 {
				in["path"] = args[1]
			}
			setIf(in, "content", true, content)
			return a.runTool(cmd, o, "glob", in)
		},
	}
	cmd.Flags().BoolVar(&content, "content", false, "also return each matched file's content")
	return cmd
}

func toolBashCmd(a *app, o *toolOpts) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "bash COMMAND...",
		Short: "Run a command with bash -c in the session's working folder (put -- before a command with flags)",
		Args:  usage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := map[string]any{"command": strings.Join(args, " ")}
			setIf(in, "timeout", timeout.String(), timeout != 0)
			return a.runTool(cmd, o, "bash", in)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "kill the command after this long (default 2m, at most 10m)")
	return cmd
}

func toolWebfetchCmd(a *app, o *toolOpts) *cobra.Command {
	var maxBytes int
	cmd := &cobra.Command{
		Use:   "webfetch URL",
		Short: "Fetch an http(s) URL as text",
		Args:  usage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := map[string]any{"url": args[0]}
			setIf(in, "max_bytes", maxBytes, maxBytes != 0)
			return a.runTool(cmd, o, "webfetch", in)
		},
	}
	cmd.Flags().IntVar(&maxBytes, "max-bytes", 0, "most bytes of the body to read (default 512 KiB, at most 5 MiB)")
	return cmd
}

func setIf(in map[string]any, key string, v any, ok bool) {
	if ok {
		in[key] = v
	}
}

// runTool runs one tool for o.model and appends the call and its result to
// o.session in one transaction, so the history never holds a call without
// its result. A denied read is stored (it holds no file content) and exits 3.
func (a *app) runTool(cmd *cobra.Command, o *toolOpts, name string, in map[string]any) error {
	if err := checkFormat(o.format); err != nil {
		return err
	}
	if o.session == "" || o.model == "" {
		return usageHint("scrim tool %s needs --session S and --model M (see: scrim tool %s --help)", name, name)
	}
	if _, ok := tools.Lookup(name); !ok {
		return fmt.Errorf("tool %s is not built into this scrim", name)
	}
	st, err := a.Store()
	if err != nil {
		return err
	}
	id, err := st.Resolve(o.session)
	if err != nil {
		return err
	}
	h, err := st.Get(id)
	if err != nil {
		return err
	}
	pol, err := a.Policy()
	if err != nil {
		return err
	}
	workDir := h.WorkDir
	if workDir == "" {
		if workDir, err = os.Getwd(); err != nil {
			return fmt.Errorf("cannot tell the current folder (%v); set the session's working folder", err)
		}
	}
	input, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	res := tools.Run(ctx, tools.Env{Policy: pol, Model: o.model, WorkDir: workDir, Now: st.Now}, name, input)
	callID := newCallID()
	call := session.Message{Role: session.RoleAssistant, Model: o.model, Parts: []session.Part{
		{Kind: session.PartToolCall, CallID: callID, Name: name, Input: input},
	}}
	result := res.Message
	result.ToolCallID = callID
	if err := st.Append(id, &call, &result); err != nil {
		return fmt.Errorf("store the %s result in session %s: %w", name, id, err)
	}
	if err := printToolResult(a.stdout, o.format, &result); err != nil {
		return err
	}
	switch {
	case res.Denied:
		return refusedError("%s", firstLine(result.Text()))
	case result.IsError:
		return fmt.Errorf("%s", firstLine(result.Text()))
	}
	return nil
}

func newCallID() string {
	var b [8]byte
	rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

// printToolResult prints the stored result: as JSON, exactly as stored; as
// text, each part (attributed ones under a "from PATH" line) made inert, its
// lines behind redact's content gutter so that output (bash's, a web page's)
// cannot pass for a header or a sourcePaths line; paths on one line each.
func printToolResult(w io.Writer, format string, m *session.Message) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}
	var b strings.Builder
	status := "ok"
	if m.IsError {
		status = "error"
	}
	fmt.Fprintf(&b, "%s result for %s (%s), message %d of session %s\n", m.Tool, termsafe.Inert(oneLine(m.Model)), status, m.Seq, m.SessionID)
	for _, p := range m.Parts {
		if p.SourcePath != "" {
			fmt.Fprintf(&b, "── from %s\n", termsafe.Inert(oneLine(p.SourcePath)))
		}
		writeGuttered(&b, p.Text)
	}
	if m.Meta.SourcePaths == nil {
		b.WriteString("sourcePaths: none (no file content)\n")
	} else {
		paths := make([]string, len(m.Meta.SourcePaths))
		for i, p := range m.Meta.SourcePaths {
			paths[i] = termsafe.Inert(oneLine(p))
		}
		fmt.Fprintf(&b, "sourcePaths: %s\n", strings.Join(paths, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
