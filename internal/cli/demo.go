package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/assets"
	"github.com/scrim-dev/scrim/internal/owned"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tools"
	"github.com/scrim-dev/scrim/ui"
)

// demoModel is active when the demo opens: limited, so the first screen
// already shows placeholders.
const demoModel = "demo/limited"

func newDemoCmd(a *app) *cobra.Command {
	var keep bool
	var model string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Try scrim on a demo project: a temporary store with sessions built by the real tools",
		Long: "demo copies a small project (with a secrets/ folder, a .env and a symlink into secrets/) to a\n" +
			"temporary folder, writes a policy with three tiers (trusted, limited, public) for the models\n" +
			"demo/trusted, demo/limited and demo/public, builds sessions by running the real tools over the\n" +
			"project, and opens the TUI on them with demo/limited active. The folder is removed on exit\n" +
			"unless --keep is given. --store and --policy are not used.",
		Args: usage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			removeStaleDemos(a.getenv("TMPDIR"))
			dir, err := os.MkdirTemp(a.getenv("TMPDIR"), "scrim-demo-")
			if err != nil {
				return fmt.Errorf("create a folder for the demo: %w", err)
			}
			if keep {
				// dir lies in $TMPDIR, whatever that holds.
				defer fmt.Fprintf(a.stderr, "demo kept in %s (scrim --store %s --policy %s)\n",
					inertLine(dir), inertLine(filepath.Join(dir, "store")), inertLine(filepath.Join(dir, "policy.toml")))
			} else {
				defer os.RemoveAll(dir)
				// Closed by a signal (a closed terminal or tmux sends HUP),
				// the folder goes too; the process that owns it is noted in
				// it, so that a later demo removes what a kill -9 left.
				owned.Claim(dir, demoOwner)
				stop := removeOnSignal(dir)
				defer stop()
			}
			d, err := buildDemo(cmd.Context(), dir)
			if err != nil {
				return err
			}
			defer d.store.Close()
			// Only the offline demo provider (and the catalogue, to compare
			// tiers): the user's providers.toml plays no part in the demo.
			provs, err := runner.ParseProviders(nil, "")
			if err != nil {
				return err
			}
			defer provs.Close()
			return ui.Run(a.tuiConfig(d.store, d.storeDir, d.pol, provs, model), a.stdin, a.stdout)
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the demo folder (workspace, policy, store) and print where it is")
	cmd.Flags().StringVar(&model, "model", demoModel, "the model active when the TUI opens, provider/model")
	return cmd
}

// demo is an extracted, seeded demo.
type demo struct {
	dir, workspace, storeDir string
	pol                      *policy.Policy
	store                    *session.Store
	sessions                 []string // IDs, in creation order
}

// demoScript is assets/demo/sessions.toml.
type demoScript struct {
	Link []struct {
		Path   string `toml:"path"`
		Target string `toml:"target"`
	} `toml:"link"`
	Session []struct {
		Title string     `toml:"title"`
		Model string     `toml:"model"`
		Steps []demoStep `toml:"steps"`
	} `toml:"session"`
}

type demoStep struct {
	User  string `toml:"user"`
	Say   string `toml:"say"`
	Tool  string `toml:"tool"`
	Input string `toml:"input"`
	Model string `toml:"model"`
}

// buildDemo extracts the workspace into dir, writes the demo policy, opens a
// fresh store and builds the scripted sessions in it.
func buildDemo(ctx context.Context, dir string) (*demo, error) {
	var script demoScript
	md, err := toml.Decode(string(mustAsset("demo/sessions.toml")), &script)
	if err != nil {
		return nil, fmt.Errorf("demo script: %w", err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return nil, fmt.Errorf("demo script: unknown key %s", u[0])
	}
	d := &demo{dir: dir, workspace: filepath.Join(dir, "workspace"), storeDir: filepath.Join(dir, "store")}
	if err := extractDemo(d.workspace); err != nil {
		return nil, err
	}
	for _, l := range script.Link {
		if err := os.Symlink(l.Target, filepath.Join(d.workspace, filepath.FromSlash(l.Path))); err != nil {
			return nil, fmt.Errorf("demo workspace: %w", err)
		}
	}
	polFile := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(polFile, mustAsset("demo/policy.toml"), 0o644); err != nil {
		return nil, fmt.Errorf("write the demo policy: %w", err)
	}
	if d.pol, err = policy.Load(polFile); err != nil {
		return nil, err
	}
	if d.store, err = session.Open(d.storeDir); err != nil {
		return nil, err
	}
	for _, s := range script.Session {
		id, err := d.seed(ctx, s.Title, s.Model, s.Steps)
		if err != nil {
			d.store.Close()
			return nil, fmt.Errorf("demo session %q: %w", s.Title, err)
		}
		d.sessions = append(d.sessions, id)
	}
	return d, nil
}

func mustAsset(name string) []byte {
	b, err := assets.Demo.ReadFile(name)
	if err != nil {
		panic("scrim was built without its demo assets: " + err.Error())
	}
	return b
}

// extractDemo writes assets/demo/_workspace to dst. The source folder starts
// with _ so that the go tool leaves the demo's Go files alone.
func extractDemo(dst string) error {
	const root = "demo/_workspace"
	return fs.WalkDir(assets.Demo, root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		to := filepath.Join(dst, filepath.FromSlash(rel))
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := assets.Demo.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if path.Dir(rel) == "secrets" || rel == ".env" {
			mode = 0o600
		}
		return os.WriteFile(to, b, mode)
	})
}

// seed builds one session: prompts and words as scripted, tool calls run
// for real under the active model's tier.
func (d *demo) seed(ctx context.Context, title, model string, steps []demoStep) (string, error) {
	h, err := d.store.Create(session.Header{Title: title, WorkDir: d.workspace, Origin: "demo"})
	if err != nil {
		return "", err
	}
	for i, s := range steps {
		var msgs []*session.Message
		switch {
		case s.Model != "":
			msgs = append(msgs, &session.Message{Role: session.RoleEvent, Model: s.Model, Parts: []session.Part{
				{Kind: session.PartText, Text: runner.SwitchText(d.pol, model, s.Model)},
			}})
			model = s.Model
		case s.User != "":
			msgs = append(msgs, &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: s.User}}})
		case s.Tool != "":
			call, res, err := d.runTool(ctx, model, s)
			if err != nil {
				return "", fmt.Errorf("step %d: %w", i+1, err)
			}
			msgs = append(msgs, call, res)
		case s.Say != "":
			msgs = append(msgs, &session.Message{Role: session.RoleAssistant, Model: model, Parts: []session.Part{{Kind: session.PartText, Text: s.Say}}})
		default:
			return "", fmt.Errorf("step %d does nothing", i+1)
		}
		if err := d.store.Append(h.ID, msgs...); err != nil {
			return "", err
		}
	}
	return h.ID, nil
}

// runTool records the assistant's tool call and runs the tool.
func (d *demo) runTool(ctx context.Context, model string, s demoStep) (call, res *session.Message, err error) {
	t, ok := tools.Lookup(s.Tool)
	if !ok {
		return nil, nil, fmt.Errorf("no tool %q", s.Tool)
	}
	var in json.RawMessage
	if err := json.Unmarshal([]byte(s.Input), &in); err != nil {
		return nil, nil, fmt.Errorf("%s input: %w", s.Tool, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, in); err != nil {
		return nil, nil, err
	}
	id := demoCallID()
	call = &session.Message{Role: session.RoleAssistant, Model: model}
	if s.Say != "" {
		call.Parts = append(call.Parts, session.Part{Kind: session.PartText, Text: s.Say})
	}
	call.Parts = append(call.Parts, session.Part{Kind: session.PartToolCall, CallID: id, Name: s.Tool, Input: compact.Bytes()})
	r := t.Run(ctx, tools.Env{Policy: d.pol, Model: model, WorkDir: d.workspace, Now: d.store.Now}, compact.Bytes())
	r.Message.ToolCallID = id
	return call, &r.Message, nil
}

func demoCallID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

// demoOwner names, in a demo folder that is not kept, the process that owns
// it.
const demoOwner = ".scrim-demo-pid"

// removeStaleDemos removes the demo folders in tmp whose owner is gone (a
// demo killed with SIGKILL). Kept ones have no owner file and stay.
func removeStaleDemos(tmp string) { owned.RemoveOrphans(tmp, "scrim-demo-", demoOwner) }
