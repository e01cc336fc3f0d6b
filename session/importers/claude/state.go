package claude

import (
	"encoding/json"
	"fmt"

	"github.com/scrim-dev/scrim/session/importers"
)

// state is what the parser keeps between imports of a growing file.
type state struct {
	Cwd     string            `json:"cwd,omitempty"`
	Models  map[string]string `json:"models,omitempty"`  // last assistant model per session key, for tool results
	Summary string            `json:"summary,omitempty"` // Claude Code's summary line
	Custom  string            `json:"custom,omitempty"`  // a title the user gave
	AITitle string            `json:"aiTitle,omitempty"` // the title Claude Code gave (ai-title; the last wins)
	Prompts map[string]string `json:"prompts,omitempty"` // first prompt per session key
	Titled  map[string]string `json:"titled,omitempty"`  // title set on each session's header
	// Pending are tool calls without a result yet, by call ID.
	Pending map[string]*call `json:"pending,omitempty"`
	// Last is each session's last assistant turn, which a grown file may
	// continue (a turn's lines can straddle two imports).
	Last map[string]lastTurn `json:"last,omitempty"`
	// Tips maps the last uuid of each inline sidechain to its session key.
	Tips map[string]string `json:"tips,omitempty"`
	// Background maps a background Bash command's ID to the command, for
	// the BashOutput/TaskOutput results that print its output later.
	Background map[string]*call `json:"background,omitempty"`
	// Replay is the file a replayed Read names ("Called the Read tool with
	// the following input") whose result comes in the next user line.
	Replay *replay `json:"replay,omitempty"`
	// Copies are what the transcript's commands wrote into files from
	// other files, for the commands that read them later.
	Copies importers.Copies `json:"copies,omitempty"`
	// Command is the slash command the user's last line ran, whose text
	// Claude Code writes on the next (commands.go).
	Command *slashCommand `json:"command,omitempty"`
}

type replay struct {
	Path string `json:"path"`
	Cwd  string `json:"cwd,omitempty"`
}

type lastTurn struct {
	MsgID     string `json:"msgId"`
	SessionID string `json:"sessionId"`
	Seq       uint64 `json:"seq"`
}

// call is an open tool call: what its result's attribution needs.
type call struct {
	Name      string    `json:"name"`
	In        callInput `json:"in"`
	Cwd       string    `json:"cwd,omitempty"`
	SessionID string    `json:"sessionId"` // the assistant message that made the call
	Seq       uint64    `json:"seq"`
	Noted     bool      `json:"noted,omitempty"` // marked as without result
}

func (s *state) load(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, s); err != nil {
		return fmt.Errorf("saved claude import state is unreadable: %w", err)
	}
	return nil
}

func (p *parser) State() (json.RawMessage, error) { return json.Marshal(&p.st) }
