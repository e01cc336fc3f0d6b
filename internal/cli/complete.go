package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/runner"
)

// sessionCommands take a session ID (or a unique prefix) as their first
// argument.
var sessionCommands = map[string]bool{"show": true, "rm": true, "rename": true, "redact": true, "send": true, "export": true}

// addCompletions makes the shell completion that cobra's `scrim completion
// bash|zsh|fish|powershell` scripts ask for say something: session IDs with
// their titles, models with their tiers, the agents of import, the values
// of --format. They read the store and the policy as the command would; a
// store another scrim holds, or a policy that does not load, completes
// nothing rather than failing.
func (a *app) addCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if sessionCommands[c.Name()] && c.Parent() == root && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return a.completeSessions(), cobra.ShellCompDirectiveNoFileComp
			}
		}
		if c.Name() == "import" && c.Parent() == root {
			c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) == 0 {
					return []string{"claude\tClaude Code transcripts (~/.claude/projects)", "codex\tCodex rollouts (~/.codex/sessions)", "crush\tCrush databases (.crush/crush.db)", "gemini\tGemini CLI sessions (~/.gemini/tmp)", "opencode\topencode sessions (~/.local/share/opencode)"}, cobra.ShellCompDirectiveNoFileComp
				}
				return nil, cobra.ShellCompDirectiveDefault // files and folders
			}
		}
		if f := c.LocalFlags().Lookup("model"); f != nil || c.PersistentFlags().Lookup("model") != nil {
			_ = c.RegisterFlagCompletionFunc("model", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return a.completeModels(), cobra.ShellCompDirectiveNoFileComp
			})
		}
		if c.PersistentFlags().Lookup("session") != nil || c.LocalFlags().Lookup("session") != nil {
			_ = c.RegisterFlagCompletionFunc("session", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return a.completeSessions(), cobra.ShellCompDirectiveNoFileComp
			})
		}
		if c.LocalFlags().Lookup("format") != nil {
			formats := []string{"text", "json"}
			switch {
			case c.Name() == "redact" && c.Parent() == root:
				formats = append(formats, "request")
			case c.Name() == "export" && c.Parent() == root:
				formats = exportFormats
			}
			_ = c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
		}
	}
	walk(root)
	_ = root.RegisterFlagCompletionFunc("store", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})
	_ = root.RegisterFlagCompletionFunc("policy", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"toml"}, cobra.ShellCompDirectiveFilterFileExt
	})
	_ = root.RegisterFlagCompletionFunc("providers", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"toml"}, cobra.ShellCompDirectiveFilterFileExt
	})
}

// completing reports whether args ask cobra's hidden completion command
// for completions (the shell scripts run `scrim __complete …`, after the
// global flags if any). Only then are they added: cobra (1.10) keeps flag
// completion functions in a map of its own for the life of the process,
// and each holds its app, so every Main that added them kept its app, its
// store and that store's closed Badger (434 KB), which every collection
// after scanned: the tests that run hundreds of Mains in one process.
func completing(args []string) bool {
	return slices.Contains(args, cobra.ShellCompRequestCmd) || slices.Contains(args, cobra.ShellCompNoDescRequestCmd)
}

// completeSessions lists the store's sessions as "ID\ttitle", most recent
// first.
func (a *app) completeSessions() []string {
	st, err := a.Store()
	if err != nil {
		return nil
	}
	hs, _, err := st.List()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.ID+"\t"+completionText(h.Title))
	}
	return out
}

// completeModels lists the models scrim knows as "ID\ttier …".
func (a *app) completeModels() []string {
	pol, provs, err := a.policyAndProviders()
	if err != nil {
		return nil
	}
	defer provs.Close()
	var out []string
	for _, m := range runner.Models(pol, provs) {
		desc := "tier " + m.Tier
		if m.Source != "" {
			desc += " · " + m.Source
		}
		out = append(out, m.ID+"\t"+completionText(desc))
	}
	return out
}

// completionText is text a shell shows as a description: one line, no
// tabs, nothing a terminal would act on.
func completionText(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, "\t", " ")
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
