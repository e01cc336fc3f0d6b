package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/runner"
)

func newModelsCmd(a *app) *cobra.Command {
	var format, provider string
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the models scrim can send to, with their trust tier under the active policy",
		Long: `Models lists configured providers' models (providers.toml), the offline demo
models and the known providers' models from the built-in catalogue, each with the
trust tier the active policy gives it and the variable that must hold its key.
Any provider/model ID works with 'scrim send' even when it is not listed.`,
		Args: usage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			pol, provs, err := a.policyAndProviders()
			if err != nil {
				return err
			}
			defer provs.Close()
			models := runner.Models(pol, provs)
			if provider != "" {
				var kept []runner.ModelInfo
				for _, m := range models {
					if m.Provider == provider {
						kept = append(kept, m)
					}
				}
				if len(kept) == 0 {
					return fmt.Errorf("no models of provider %q are listed (see: scrim models)", provider)
				}
				models = kept
			}
			if format == "json" {
				if models == nil {
					models = []runner.ModelInfo{}
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(models)
			}
			return printModels(a, models, pol)
		},
	}
	formatFlag(cmd, &format)
	cmd.Flags().StringVar(&provider, "provider", "", "list only this provider's models")
	return cmd
}

// modelsWidth is the width the text listing fits: IDs run to 74 characters
// in the catalogue, so provider, source and key go in a heading per
// provider and each model's line holds only its ID and tier.
const modelsWidth = 80

func printModels(a *app, models []runner.ModelInfo, pol *policy.Policy) error {
	w := a.stdout
	// Provider and model names come from providers.toml (and model rules
	// from the policy) and may hold escape sequences, tabs or newlines:
	// each is made inert and kept on its line.
	for start := 0; start < len(models); {
		end := start + 1
		for end < len(models) && sameGroup(models[start], models[end]) {
			end++
		}
		group := models[start:end]
		if start > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, inertLine(groupHeading(group[0])))
		tierW, idW := 0, 0
		for _, m := range group {
			tierW = max(tierW, len([]rune("tier "+inertLine(m.TierLabel))))
			idW = max(idW, len([]rune(inertLine(m.ID))))
		}
		// The tier column stands after the longest ID, or as far right as
		// the width allows; an ID that reaches it puts its tier below.
		col := min(2+idW+2, modelsWidth-tierW)
		for _, m := range group {
			id, tier := "  "+inertLine(m.ID), "tier "+inertLine(m.TierLabel)
			if n := len([]rune(id)); n+2 <= col {
				fmt.Fprintf(w, "%s%s%s\n", id, strings.Repeat(" ", col-n), tier)
			} else {
				fmt.Fprintf(w, "%s\n%s%s\n", id, strings.Repeat(" ", col), tier)
			}
		}
		start = end
	}
	// What each tier's models may do, once per tier rather than per model.
	fmt.Fprintln(w)
	for _, name := range pol.Order {
		for _, line := range wrapWords("tier "+name+": "+tierSummary(pol.Tiers[name]), modelsWidth, "    ") {
			fmt.Fprintln(w, termsafe.Inert(line))
		}
	}
	return nil
}

// sameGroup: models listed under one heading share provider, source and key.
func sameGroup(a, b runner.ModelInfo) bool {
	return a.Provider == b.Provider && a.Source == b.Source && a.KeyEnv == b.KeyEnv && a.Ready == b.Ready
}

func groupHeading(m runner.ModelInfo) string {
	key := "no key needed"
	if m.KeyEnv != "" {
		key = "key $" + m.KeyEnv
		if !m.Ready {
			key += " (not set)"
		}
	}
	return fmt.Sprintf("%s · %s · %s", m.Provider, m.Source, key)
}

// wrapWords breaks s at spaces into lines of at most width runes, the
// following ones indented.
func wrapWords(s string, width int, indent string) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) > width:
			out = append(out, line)
			line = indent + word
		default:
			line += " " + word
		}
	}
	return append(out, line)
}

// tierSummary says what a tier's models are offered and how it treats
// content beyond paths, in one line.
func tierSummary(t *policy.Tier) string {
	tools := "no tools"
	if len(t.Tools) > 0 {
		tools = "tools " + strings.Join(t.Tools, ", ")
	}
	out := []string{tools}
	if t.WithholdsUnknown() {
		out = append(out, "withholds content of unknown source")
	}
	if t.RedactsDerived() {
		out = append(out, "redacts derived content")
	}
	if t.RedactsSecrets() {
		out = append(out, "redacts credentials")
	}
	return strings.Join(out, "; ")
}
