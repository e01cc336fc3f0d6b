package ui

import (
	"context"
	"time"

	"github.com/scrim-dev/scrim/internal/watch"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

// Sender sends one chat turn, streaming notices as it goes; *runner.Runner
// is one.
type Sender interface {
	Send(ctx context.Context, sessionID, model, prompt string, onDelta func(runner.Delta)) error
}

// ModelChoice is one entry of the model picker.
type ModelChoice struct {
	ID   string // provider/model
	Note string // where it comes from: "configured", "catalogue", …
}

// Config is what the program needs from its caller.
type Config struct {
	Store    *session.Store
	StoreDir string // shown in the header (the store's folder)
	Policy   *policy.Policy
	Models   []ModelChoice
	// Model is the active model at start; empty means the most recent
	// session's last model, else the first choice.
	Model  string
	Sender Sender // nil: chat says how to configure a provider
	// Now and Location make ages and times reproducible in tests.
	Now      func() time.Time
	Location *time.Location
	// Getenv reads $COLUMNS and $LINES for Run; nil is os.Getenv.
	Getenv func(string) string
	// NoMouse leaves the mouse to the terminal (text selection as usual):
	// no wheel scrolling or clicking in scrim.
	NoMouse bool
	// Imports are the reports of the background import of transcripts
	// written while scrim is open (internal/watch); nil: none runs.
	Imports <-chan watch.Event
	// Watching names the folders watched for transcripts, for the
	// welcome screen.
	Watching []string
}

// common is what every view shares: size, palette, keys, the store and
// policy, and the active model. The root owns it; SetSize cascades from it.
type common struct {
	width, height int
	st            *styles
	keys          *keyMap
	store         *session.Store
	pol           *policy.Policy
	storeDir      string
	loc           *time.Location
	now           func() time.Time
	model         string
	ctxs          *tally.Contexts // what pages of a session need from the rest of it
}

func newCommon(cfg Config) *common {
	c := &common{
		st:       newStyles(),
		keys:     newKeyMap(),
		store:    cfg.Store,
		pol:      cfg.Policy,
		storeDir: cfg.StoreDir,
		loc:      cfg.Location,
		now:      cfg.Now,
		model:    cfg.Model,
		ctxs:     tally.NewContexts(),
	}
	if c.loc == nil {
		c.loc = time.Local
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.storeDir == "" && c.store != nil {
		c.storeDir = c.store.Dir()
	}
	return c
}

// tier is the active model's tier (the default tier for an unknown model).
func (c *common) tier() *policy.Tier {
	t, _ := c.pol.TierFor(c.model)
	return t
}

func (c *common) tierLabel() string {
	if t := c.tier(); t != nil {
		return t.Label
	}
	return "none"
}

// tierOf is the tier model maps to under the policy.
func tierOf(c *common, model string) *policy.Tier {
	t, _ := c.pol.TierFor(model)
	return t
}
