package codex

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// Agent is the name the CLI and origin records use.
const Agent = "codex"

type parser struct {
	sink   *importers.Sink
	file   string
	paths  *importers.Paths
	st     state
	turn   *session.Message // assistant message being assembled (text, then calls)
	opened bool
	// revise: turn continues a message an earlier import stored; its parts
	// are appended to it on commit.
	revise bool
}

// state is what the parser keeps between imports of a growing file.
type state struct {
	Cwd      string `json:"cwd,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Title    string `json:"title,omitempty"`
	// Meta: the rollout's own session_meta was read. A forked subagent's
	// rollout then repeats its parent's, and the parent's history.
	Meta bool `json:"meta,omitempty"`
	// Parent is the thread a subagent's rollout was spawned by.
	Parent string `json:"parent,omitempty"`
	// Inherited: a forked subagent's rollout is in the history it repeats
	// from its parent, until its own first turn_context. Its title is its
	// own first prompt, after that.
	Inherited bool             `json:"inherited,omitempty"`
	Titled    string           `json:"titled,omitempty"`
	Calls     map[string]*call `json:"calls,omitempty"` // open calls by call_id
	// Execs are commands still running, by the session ID exec_command
	// printed: write_stdin prints more of their output.
	Execs map[string]*call `json:"execs,omitempty"`
	// Cells are code-mode scripts still running, by cell ID: wait prints
	// more of their output.
	Cells map[string]*call `json:"cells,omitempty"`
	// Open is the assistant message the file ended on: calls that follow in
	// a grown file belong to it.
	Open *stored `json:"open,omitempty"`
	// Copies are what the rollout's commands wrote into files from other
	// files, for the commands that read them later.
	Copies importers.Copies `json:"copies,omitempty"`
}

type stored struct {
	SessionID string `json:"sessionId"`
	Seq       uint64 `json:"seq"`
}

type call struct {
	Name      string `json:"name"`
	Workdir   string `json:"workdir,omitempty"`
	SessionID string `json:"sessionId"`
	Seq       uint64 `json:"seq"`
	// The command a shell-like call runs: an argument vector, or a line
	// (PowerShell when Pwsh); a code-mode script's commands; the file
	// read_file reads; or why what it runs cannot be told.
	Argv    []string  `json:"argv,omitempty"`
	Line    string    `json:"line,omitempty"`
	Pwsh    bool      `json:"pwsh,omitempty"`
	Script  []command `json:"script,omitempty"`
	File    string    `json:"file,omitempty"`
	Unknown string    `json:"unknown,omitempty"`
	// Reads are the files Codex's parsed_cmd says the command read, once
	// its event is seen (Known).
	Reads []string `json:"reads,omitempty"`
	Known bool     `json:"known,omitempty"`
	Done  bool     `json:"done,omitempty"` // its output was imported
	Noted bool     `json:"noted,omitempty"`
	// Output is where its output was stored: an event that comes later
	// adds its reads there.
	Output *stored `json:"output,omitempty"`
}

// command is one command a code-mode script runs.
type command struct {
	Line    string `json:"line"`
	Workdir string `json:"workdir,omitempty"`
}

// New is the importers.Factory for Codex rollouts.
func New(sink *importers.Sink, file string, saved json.RawMessage) (importers.Parser, error) {
	p := &parser{sink: sink, file: file, paths: sink.Paths()}
	if len(saved) > 0 {
		if err := json.Unmarshal(saved, &p.st); err != nil {
			return nil, fmt.Errorf("saved codex import state is unreadable: %w", err)
		}
	}
	if p.st.Calls == nil {
		p.st.Calls = map[string]*call{}
	}
	if p.st.Execs == nil {
		p.st.Execs = map[string]*call{}
	}
	if p.st.Cells == nil {
		p.st.Cells = map[string]*call{}
	}
	return p, nil
}

func (p *parser) State() (json.RawMessage, error) { return json.Marshal(&p.st) }

func (p *parser) Line(raw []byte) bool {
	var e envelope
	if !decodeLine(raw, &e) {
		return false
	}
	ts := parseTime(e.Timestamp)
	pl := e.Payload
	if pl == nil {
		pl = &payload{}
	}
	switch e.Type {
	case "session_meta":
		p.meta(pl)
		return true
	case "turn_context":
		if p.st.Inherited {
			p.st.Inherited, p.st.Title = false, ""
		}
		p.setCwd(pl.Cwd)
		if pl.Model != "" {
			p.st.Model = pl.Model
		}
		return true
	case "response_item":
		return p.item(pl, ts)
	case "event_msg":
		p.event(pl)
		return true
	case "compacted", "world_state", "inter_agent_communication", "inter_agent_communication_metadata", "security_risk_score", "realtime_item":
		return true // a summary that replaced history (the history is above), or Codex's bookkeeping
	case "message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
		"custom_tool_call_output", "local_shell_call", "web_search_call":
		e.payload.Type = e.Type // an older rollout: a bare item
		return p.item(&e.payload, ts)
	case "":
		if e.RecordType != "" {
			return true // older rollouts' state records
		}
		if e.ID != "" { // older rollouts' first line
			p.meta(&e.payload)
			return true
		}
	}
	return false
}

func (p *parser) meta(m *payload) {
	if !p.st.Meta {
		p.st.Meta = true
		p.st.Parent = parentThread(m.Source)
	} else if p.st.Parent != "" {
		p.st.Inherited = true // the parent's session_meta: its history follows
	}
	p.setCwd(m.Cwd)
	if m.ModelProvider != "" {
		p.st.Provider = m.ModelProvider
	}
	if m.Model != "" {
		p.st.Model = m.Model
	}
}

func (p *parser) setCwd(cwd string) {
	if cwd != "" {
		p.st.Cwd = cwd
	}
}

func (p *parser) model() string {
	provider := p.st.Provider
	if provider == "" {
		provider = "openai"
	}
	return importers.ModelID(provider, p.st.Model)
}

// add writes a message to the session, opening it with its header first.
func (p *parser) add(m *session.Message) {
	p.open()
	p.sink.Add("", m)
}

func (p *parser) open() {
	if !p.opened {
		origin := "imported from codex: " + p.file
		if p.st.Parent != "" {
			// session.ParentOrigins links it to the rollout named after
			// that thread.
			origin += " (subagent of thread " + p.st.Parent + ")"
		}
		p.sink.Open("", session.Header{Origin: origin, WorkDir: p.st.Cwd})
		p.opened = true
	}
}

func (p *parser) event(ev *payload) {
	switch ev.Type {
	case "exec_command_begin", "exec_command_end":
		p.commandEvent(ev)
	}
	// user_message, agent_message and agent_reasoning repeat response items
	// (imported there); token counts and task markers are bookkeeping.
}

func (p *parser) Finish() {
	if p.turn != nil {
		p.st.Open = &stored{p.turn.SessionID, p.turn.Seq}
	}
	p.finishTurn()
	ids := make([]string, 0, len(p.st.Calls))
	for id := range p.st.Calls {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		c := p.st.Calls[id]
		if c.Done || c.SessionID == "" { // answered (a later event adds nothing), or an event whose call never came
			delete(p.st.Calls, id)
			continue
		}
		if c.Noted || c.Done {
			continue
		}
		c.Noted = true
		note := importers.UnpairedNote(id, c.Name)
		p.sink.Revise(c.SessionID, c.Seq, func(m *session.Message) { m.Meta.Note = importers.AddNote(m.Meta.Note, note) })
	}
	if p.st.Title != "" && p.st.Title != p.st.Titled && p.sink.Known("") {
		p.st.Titled = p.st.Title
		title, wd := p.st.Title, p.st.Cwd
		if p.st.Parent != "" {
			title = "subagent: " + title
		}
		p.sink.EditHeader("", func(h *session.Header) {
			h.Title = title
			if h.WorkDir == "" {
				h.WorkDir = wd
			}
		})
	}
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
