package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/internal/userdirs"
	"github.com/scrim-dev/scrim/policy"
)

func newPolicyCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Check the trust-tier policy and explain its decisions",
		Args:  usage(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPolicyCheckCmd(a), newPolicyExplainCmd(a))
	return cmd
}

func newPolicyCheckCmd(a *app) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Load the policy, report every problem with file:line, or print its tiers and model rules",
		Long: "Loads the policy scrim would use (--policy, else $SCRIM_POLICY, else <config>/scrim/policy.toml,\n" +
			"else the built-in one) and prints where it came from, each tier with its read and deny patterns,\n" +
			"and the model rules in the order they are tried. Exits 1 with file:line for each problem.\n\n" +
			"With --dir DIR it lists instead the team files (deny_files) that govern paths in DIR: each\n" +
			"ignore file and Claude Code settings file found from DIR up to its repository root and the\n" +
			"global ones, and every line scrim cannot translate exactly, with why and how it is treated.",
		Args: usage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := a.Policy()
			if err != nil {
				return reportLoadError(a.stderr, err)
			}
			if dir != "" {
				fi, err := os.Stat(a.expandHome(dir))
				if err != nil {
					return fmt.Errorf("--dir %s: %v", dir, plainPathErr(err))
				}
				if !fi.IsDir() {
					return usageError("--dir %s is a file; give the folder whose paths you want explained", dir)
				}
				return printTeamFiles(a.stdout, p, p.TeamFiles(a.expandHome(dir)))
			}
			return printPolicy(a.stdout, p)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "list the team files (deny_files) that govern paths in this folder")
	_ = cmd.MarkFlagDirname("dir")
	return cmd
}

// plainPathErr drops the "stat PATH:" an os error repeats.
func plainPathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// printTeamFiles says which team files govern paths in a folder, which tiers
// read them, and what scrim could not translate exactly.
func printTeamFiles(w io.Writer, p *policy.Policy, r policy.TeamReport) error {
	fmt.Fprintf(w, "policy %s\n", inertLine(p.File))
	root := "in no repository: looked up to /"
	if r.Root != "" {
		root = "repository root " + r.Root
	}
	fmt.Fprintf(w, "team files for %s (%s)\n", inertLine(r.Dir), inertLine(root))
	if len(r.Files) == 0 {
		fmt.Fprintln(w, "  none found")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range r.Files {
		what := plural(f.Rules(), "rule", "rules")
		switch {
		case f.Problem != "":
			what = "cannot be used: " + f.Problem + " (fail closed: denies " + teamScope(f) + ")"
		case f.Scope == "":
			what += ", global"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", inertLine(f.Path), f.Format.Tool, inertLine(what))
	}
	tw.Flush()
	for _, prob := range r.Problems {
		fmt.Fprintf(w, "  %s (fail closed: denied)\n", inertLine(prob))
	}
	var users []string
	for _, name := range p.Order {
		if t := p.Tiers[name]; len(t.DenyFiles) > 0 {
			users = append(users, fmt.Sprintf("%s (deny_files, line %d)", name, t.Keys["deny_files"]))
		}
	}
	if len(users) == 0 {
		fmt.Fprintln(w, "no tier has deny_files: these files decide nothing until a tier names them")
	} else {
		fmt.Fprintf(w, "tiers that read them: %s\n", inertLine(strings.Join(users, ", ")))
	}
	notes := 0
	for _, f := range r.Files {
		for _, n := range f.Notes {
			if notes == 0 {
				fmt.Fprintln(w, "not translated exactly:")
			}
			notes++
			fmt.Fprintf(w, "  %s:%d  %s  — %s; %s\n", inertLine(f.Path), n.Line, inertLine(n.Raw), inertLine(n.Why), inertLine(n.Treated))
		}
	}
	if notes == 0 && len(r.Files) > 0 {
		fmt.Fprintln(w, "every line translated exactly")
	}
	return nil
}

func teamScope(f *policy.TeamFile) string {
	if f.Scope == "" {
		return "every path"
	}
	return "everything below " + f.Scope
}

// reportLoadError lists every problem of a bad policy; the returned error is
// the one-line summary run prints last.
func reportLoadError(w io.Writer, err error) error {
	var le *policy.LoadError
	if !errors.As(err, &le) || len(le.More) == 0 {
		return err
	}
	// Each problem names the file and quotes what the file says: untrusted
	// text, made inert as run does for the summary line.
	for _, e := range le.All() {
		fmt.Fprintln(w, termsafe.Inert(oneLine(e.Error())))
	}
	return fmt.Errorf("%d problems in %s; fix them and run scrim policy check again", len(le.More)+1, le.File)
}

func printPolicy(w io.Writer, p *policy.Policy) error {
	src := ""
	switch p.Source {
	case "":
	case "built-in":
		src = " (built-in: no --policy, $SCRIM_POLICY or user config file)"
	default:
		src = " (from " + p.Source + ")"
	}
	// Names, patterns and model rules from the file are printed through
	// inertLine (labels are %q-quoted): the loader checks that tier names and
	// labels are printable, but not patterns or model rules, and a tab or
	// newline in one would shift a column or forge a line.
	fmt.Fprintf(w, "policy %s%s\n", inertLine(p.File), src)
	fmt.Fprintf(w, "default tier %s (line %d)\n", inertLine(p.DefaultTier), p.DefaultLine)
	for _, name := range p.Order {
		t := p.Tiers[name]
		fmt.Fprintf(w, "\ntier %s  label %q  (line %d)\n", inertLine(name), t.Label, t.Line)
		if len(t.Read) == 0 {
			fmt.Fprintln(w, "  reads nothing")
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, list := range []struct {
			kind string
			pats []policy.Pattern
		}{{"read", t.Read}, {"deny", t.Deny}} {
			for _, pat := range list.pats {
				fmt.Fprintf(tw, "  %s\t%s\t%s\tline %d\n", list.kind, inertLine(pat.Raw), expandedNote(pat), pat.Line)
			}
		}
		tw.Flush()
		printTierKeys(w, t)
	}
	fmt.Fprintln(w, "\nmodels (first match wins)")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range p.Models {
		fmt.Fprintf(tw, "  %s\t→ %s\tline %d\n", inertLine(r.Match), inertLine(r.Tier), r.Line)
	}
	fmt.Fprintf(tw, "  any other model\t→ %s\tdefault_tier, line %d\n", inertLine(p.DefaultTier), p.DefaultLine)
	tw.Flush()
	fmt.Fprintf(w, "\nok: %d tiers, %d model rules\n", len(p.Order), len(p.Models))
	return nil
}

// printTierKeys prints the keys beyond paths, saying which are defaults.
func printTierKeys(w io.Writer, t *policy.Tier) {
	at := func(key string) string {
		if l := t.Keys[key]; l > 0 {
			return fmt.Sprintf("line %d", l)
		}
		return "default"
	}
	tools := strings.Join(t.Tools, ", ")
	if tools == "" {
		tools = "none"
	}
	files := "none"
	switch {
	case len(t.DenyFiles) == len(policy.TeamFormats):
		files = "* (every format: scrim policy check --dir DIR shows what a folder has)"
	case len(t.DenyFiles) > 0:
		names := make([]string, len(t.DenyFiles))
		for i, f := range t.DenyFiles {
			names[i] = f.Name
		}
		files = strings.Join(names, ", ")
	}
	fmt.Fprintf(w, "  deny_files      %s  (%s)\n", files, at("deny_files"))
	fmt.Fprintf(w, "  tools           %s  (%s)\n", tools, at("tools"))
	fmt.Fprintf(w, "  unknown_source  %s  (%s)\n", t.UnknownSource, at("unknown_source"))
	fmt.Fprintf(w, "  derived         %s  (%s)\n", t.Derived, at("derived"))
	fmt.Fprintf(w, "  secrets         %s  (%s)\n", t.Secrets, at("secrets"))
}

// expandedNote shows what a pattern became when that differs from how it is
// written (~, $VAR, relative, or a symlinked prefix).
func expandedNote(pat policy.Pattern) string {
	forms := pat.Expanded()
	if len(forms) == 1 && forms[0] == pat.Raw {
		return ""
	}
	return inertLine("= " + strings.Join(forms, " or "))
}

func newPolicyExplainCmd(a *app) *cobra.Command {
	var model, format string
	cmd := &cobra.Command{
		Use:   "explain --model M PATH...",
		Short: "Say whether model M may read each PATH, and which rule and pattern decided it",
		Long: "For each PATH: the path (and where its symlinks lead), the tier the model maps to and the\n" +
			"model rule that chose it, allowed or denied, and the pattern that decided with its policy line.\n" +
			"A leading ~ in PATH is the home folder.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if model == "" {
				return usageError("--model is required: scrim policy explain --model provider/model PATH...")
			}
			if len(args) == 0 {
				return usageError("give at least one PATH: scrim policy explain --model %s PATH...", model)
			}
			if err := checkFormat(format); err != nil {
				return err
			}
			p, err := a.Policy()
			if err != nil {
				return err
			}
			out := make([]explained, len(args))
			for i, arg := range args {
				out[i] = newExplained(p, p.Explain(model, a.expandHome(arg)))
			}
			if format == "json" {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(out)
			}
			for _, e := range out {
				fmt.Fprintln(a.stdout, e.text())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "model ID, provider/model (e.g. anthropic/claude-sonnet-4-5)")
	formatFlag(cmd, &format)
	return cmd
}

// expandHome lets a quoted '~/x' mean what the user typed it for.
func (a *app) expandHome(path string) string {
	if p, err := userdirs.Expand(path, a.lookupEnv); err == nil {
		return p
	}
	return path
}

// explained is one path's answer, as printed and as JSON.
type explained struct {
	Path         string   `json:"path"`
	Canonical    string   `json:"canonical"`
	Model        string   `json:"model"`
	Rule         string   `json:"rule"`
	RuleLine     int      `json:"ruleLine"`
	Tier         string   `json:"tier"`
	TierLabel    string   `json:"tierLabel"`
	Allowed      bool     `json:"allowed"`
	Decision     string   `json:"decision"`
	Pattern      string   `json:"pattern,omitempty"`
	PatternKind  string   `json:"patternKind,omitempty"`
	PatternLine  int      `json:"patternLine,omitempty"`
	PatternFile  string   `json:"patternFile,omitempty"` // the team file (deny_files) the pattern is from
	ViaCanonical bool     `json:"viaCanonical"`
	Reason       string   `json:"reason"`
	Policy       string   `json:"policy"`
	Tools        []string `json:"tools"` // what the tier's models are offered
}

func newExplained(p *policy.Policy, e policy.Explanation) explained {
	d := e.Decision
	x := explained{
		Path: d.Path, Canonical: d.Canonical, Model: e.Model, Rule: e.Rule, RuleLine: e.RuleLine,
		Tier: e.Tier.Name, TierLabel: e.Tier.Label, Allowed: d.Allowed, Decision: "denied",
		Pattern: d.Pattern, PatternKind: d.Kind, PatternLine: d.Line, PatternFile: d.File, ViaCanonical: d.ViaCanonical,
		Reason: d.Reason, Policy: p.File, Tools: e.Tier.Tools,
	}
	if d.Allowed {
		x.Decision = "allowed"
	}
	return x
}

func (x explained) text() string {
	var b strings.Builder
	b.WriteString(x.Path)
	if x.Canonical != "" && x.Canonical != x.Path {
		b.WriteString(" (resolves to " + x.Canonical + ")")
	}
	fmt.Fprintf(&b, ": %s for tier %q", x.Decision, x.TierLabel)
	switch {
	case x.PatternFile != "" && x.Pattern != "":
		fmt.Fprintf(&b, " by %s:%d (%s)", x.PatternFile, x.PatternLine, x.Pattern)
		if x.ViaCanonical {
			b.WriteString(" on the resolved path")
		}
	case x.Pattern != "":
		fmt.Fprintf(&b, " by %s %q (line %d)", x.PatternKind, x.Pattern, x.PatternLine)
		if x.ViaCanonical {
			b.WriteString(" on the resolved path")
		}
	default:
		b.WriteString(": " + x.Reason)
	}
	if x.Rule == "default" {
		fmt.Fprintf(&b, "; no model rule matches %s: default_tier (line %d)", x.Model, x.RuleLine)
	} else {
		fmt.Fprintf(&b, "; model rule %q (line %d)", x.Rule, x.RuleLine)
	}
	tools := strings.Join(x.Tools, ", ")
	if tools == "" {
		tools = "none"
	}
	fmt.Fprintf(&b, "; tools: %s", tools)
	return inertLine(b.String()) // a path may hold a newline: one line a path
}
