package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
)

// Providers loads --providers, else the default providers file.
func (a *app) Providers() (*runner.Providers, error) {
	return runner.LoadProvidersEnv(a.providersFile, a.lookupEnv)
}

// policyAndProviders is what every command that talks to models loads
// first; the caller closes the providers.
func (a *app) policyAndProviders() (*policy.Policy, *runner.Providers, error) {
	pol, err := a.Policy()
	if err != nil {
		return nil, nil, err
	}
	provs, err := a.Providers()
	if err != nil {
		return nil, nil, err
	}
	return pol, provs, nil
}

func newSendCmd(a *app) *cobra.Command {
	var model string
	var cont bool
	cmd := &cobra.Command{
		Use:   "send SESSION [PROMPT...]",
		Short: "Send a prompt to a model (one runner turn, headless) and print the streamed answer",
		Long: `Send stores PROMPT in the session, sends the session's history to the model
(redacted for the model's trust tier, exactly as 'scrim redact' shows), prints the
answer as it streams, runs the tools the model asks for under the model's tier and
stores everything. PROMPT "-" reads the prompt from standard input. --continue sends
the history again without a new prompt (after a provider error, for instance).
Models are provider/model; 'scrim models' lists them. demo/<name> works offline.`,
		Args: usage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			prompt, err := sendPrompt(a.stdin, args[1:], cont)
			if err != nil {
				return err
			}
			return a.send(args[0], model, prompt)
		},
	}
	cmd.Flags().StringVarP(&model, "model", "m", "", "model to send to, as provider/model (default: the session's last model)")
	cmd.Flags().BoolVar(&cont, "continue", false, "send without a new prompt")
	return cmd
}

func sendPrompt(stdin io.Reader, args []string, cont bool) (string, error) {
	switch {
	case cont && len(args) > 0:
		return "", usageError("--continue sends without a prompt; drop the prompt or --continue")
	case cont:
		return "", nil
	case len(args) == 0:
		return "", usageError(`no prompt: scrim send SESSION --model M "prompt" (or --continue)`)
	case len(args) == 1 && args[0] == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, 16<<20))
		if err != nil {
			return "", fmt.Errorf("read the prompt from standard input: %w", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return "", usageError("the prompt on standard input is empty")
		}
		return string(b), nil
	}
	prompt := strings.Join(args, " ")
	if strings.TrimSpace(prompt) == "" {
		return "", usageError("the prompt is empty")
	}
	return prompt, nil
}

func (a *app) send(ref, model, prompt string) error {
	pol, provs, err := a.policyAndProviders()
	if err != nil {
		return err
	}
	defer provs.Close()
	st, err := a.Store()
	if err != nil {
		return err
	}
	id, err := st.Resolve(ref)
	if err != nil {
		return err
	}
	if model == "" {
		h, err := st.Get(id)
		if err != nil {
			return err
		}
		if h.LastModel == "" {
			return usageHint("session %s has no model yet: give --model provider/model (see: scrim models)", id)
		}
		model = h.LastModel
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p := &sendPrinter{w: a.stdout}
	err = newRunner(st, pol, provs).Send(ctx, id, model, prompt, p.delta)
	p.endLine()
	return err
}

// sendPrinter writes Send's notices as a readable transcript. Model text and
// tool output are untrusted: termsafe.Inert keeps them from driving the terminal.
type sendPrinter struct {
	w       io.Writer
	midLine bool // the last thing written was answer text without a newline
}

func (p *sendPrinter) delta(d runner.Delta) {
	switch d.Kind {
	case runner.DeltaText:
		fmt.Fprint(p.w, termsafe.Inert(d.Text))
		p.midLine = !strings.HasSuffix(d.Text, "\n")
	case runner.DeltaSwitch:
		// The switch event names both models: config text, or stored text
		// from an import.
		p.line("— " + inertLine(d.Text))
	case runner.DeltaToolStart:
		// The tool name is whatever the model asked for, known tool or not.
		p.line(fmt.Sprintf("[tool %s %s]", inertLine(d.Tool), termsafe.Inert(oneLine(d.Input))))
	case runner.DeltaToolFinish:
		state := "ok"
		switch {
		case d.Denied:
			state = "denied"
		case d.IsError:
			state = "error"
		}
		p.line(fmt.Sprintf("[tool %s %s: %s]", inertLine(d.Tool), state, termsafe.Inert(d.Text)))
	}
}

func (p *sendPrinter) line(s string) {
	p.endLine()
	fmt.Fprintln(p.w, s)
}

func (p *sendPrinter) endLine() {
	if p.midLine {
		fmt.Fprintln(p.w)
		p.midLine = false
	}
}

// newRunner is the runner of scrim send and the TUI: each request's history
// streamed from the store, as scrim redact streams it, so that a send holds
// pieces of the session, never all of it.
func newRunner(st *session.Store, pol *policy.Policy, provs *runner.Providers) *runner.Runner {
	r := runner.New(st, pol, provs)
	r.History = func(ctx context.Context, h session.Header, model string, fn func([]session.Message) error) error {
		_, _, _, err := streamRedacted(st, pol, h, model, func(_, sent []session.Message) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fn(sent)
		})
		return err
	}
	return r
}
