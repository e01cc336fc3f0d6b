package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// Env is what a tool runs with: the active model, the policy that maps it to a
// tier, the session's working folder, and injectable clock and HTTP client.
type Env struct {
	Policy  *policy.Policy
	Model   string
	WorkDir string       // relative paths and bash run here
	HTTP    *http.Client // webfetch; nil means a client with a timeout
	Now     func() time.Time
}

// Result is a tool's outcome: the tool-result message to store, and whether
// the policy refused the read (the CLI exits 3 on that).
type Result struct {
	Message session.Message
	Denied  bool
}

// Tool is one agent tool.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON Schema of the input object, for providers' tool lists.
	Schema() map[string]any
	// Run never returns a Go error for a failed tool run: failures are error
	// results the model can read.
	Run(ctx context.Context, env Env, input json.RawMessage) Result
}
