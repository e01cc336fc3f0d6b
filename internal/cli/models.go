package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

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

func printModels(a *app, models []runner.ModelInfo, pol *policy.Policy) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tTIER\tSOURCE\tKEY")
	for _, m := range models {
		// Provider and model names come from providers.toml (and model rules
		// from the policy) and may hold escape sequences, tabs or newlines:
		// each cell is made inert and kept on its line and in its column.
		key := "-"
		if m.KeyEnv != "" {
			key = m.KeyEnv
			if !m.Ready {
				key += " (not set)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", inertLine(m.ID), inertLine(m.TierLabel), inertLine(m.Source), inertLine(key))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// What each tier's models may do, once per tier rather than per model.
	fmt.Fprintln(a.stdout)
	for _, name := range pol.Order {
		fmt.Fprintln(a.stdout, termsafe.Inert("tier "+name+": "+tierSummary(pol.Tiers[name])))
	}
	return nil
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
