package claude

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// Agent is the name the CLI and origin records use.
const Agent = "claude"

// parser imports one file. It holds the assistant turn being assembled per
// session (a turn spans several lines), the calls still waiting for a
// result, and the sidechain each inline sidechain line belongs to.
type parser struct {
	sink      *importers.Sink
	file      string
	paths     *importers.Paths
	agentFile bool // an agent-*.jsonl: the whole file is one subagent's session
	st        state
	turns     map[string]*turn       // session key → turn being assembled
	side      map[string]string      // uuid → sidechain session key (this import)
	touched   map[string]bool        // session keys this import wrote to
	early     map[string]*heldResult // results written before their call, by call ID
}

// turn is an assistant message being assembled from lines sharing message.id.
type turn struct {
	msgID  string
	m      *session.Message
	revise bool // continues a message stored by an earlier import
	added  []session.Part
}

// New is the importers.Factory for Claude Code transcripts.
func New(sink *importers.Sink, file string, saved json.RawMessage) (importers.Parser, error) {
	p := &parser{
		sink: sink, file: file, paths: sink.Paths(),
		agentFile: strings.HasPrefix(filepath.Base(file), "agent-"),
		turns:     map[string]*turn{}, side: map[string]string{}, touched: map[string]bool{},
	}
	if err := p.st.load(saved); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *parser) Line(raw []byte) bool {
	var l line
	if !decodeLine(raw, &l) {
		return false
	}
	if l.Cwd != "" && p.st.Cwd == "" {
		p.st.Cwd = l.Cwd
	}
	switch l.Type {
	case "user", "assistant":
		if l.Message == nil {
			return false
		}
		key := p.sessionKey(&l)
		if l.Type == "assistant" {
			return p.assistant(key, &l)
		}
		return p.user(key, &l)
	case "system":
		return p.system(&l)
	case "summary":
		if p.st.Summary == "" {
			p.st.Summary = importers.Title(l.Summary)
		}
		return true
	case "custom-title":
		p.st.Custom = importers.Title(l.CustomTitle)
		return true
	case "ai-title":
		if t := importers.Title(l.AITitle); t != "" {
			p.st.AITitle = t
		}
		return true
	case "attachment":
		return p.attachment(&l)
	case "file-history-snapshot", "progress", "queue-operation", "tag", "last-prompt",
		"permission-mode", "agent-name", "cost-state", "mode", "worktree-state", "pr-link", "agent-setting":
		return true // bookkeeping of Claude Code's own, never sent to a model
	}
	return false
}

// sessionKey routes a line: "" is the file's own conversation; an inline
// sidechain goes to a session per sidechain, found by following parentUuid.
func (p *parser) sessionKey(l *line) string {
	if !l.IsSidechain || p.agentFile {
		p.open("", l)
		return ""
	}
	key, ok := p.side[l.ParentUUID]
	if !ok {
		key, ok = p.st.Tips[l.ParentUUID]
	}
	if !ok {
		key = "sidechain:" + l.UUID
	}
	if l.UUID != "" {
		p.side[l.UUID] = key
		if p.st.Tips == nil {
			p.st.Tips = map[string]string{}
		}
		for u, k := range p.st.Tips {
			if k == key {
				delete(p.st.Tips, u)
			}
		}
		p.st.Tips[l.UUID] = key
	}
	p.open(key, l)
	return key
}

// open declares a session with the header it gets when new.
func (p *parser) open(key string, l *line) {
	if p.touched[key] {
		return
	}
	origin := "imported from claude: " + p.file
	switch {
	case key != "":
		origin += " (sidechain)"
	case p.agentFile:
		origin += " (subagent of " + p.parentFile(l) + ")"
	}
	p.sink.Open(key, session.Header{Origin: origin, WorkDir: l.Cwd})
	p.touched[key] = true
}

// parentFile names the session file a subagent file belongs to.
func (p *parser) parentFile(l *line) string {
	dir := filepath.Dir(p.file)
	if filepath.Base(dir) == "subagents" {
		return filepath.Dir(dir) + ".jsonl"
	}
	if l.SessionID != "" {
		return filepath.Join(dir, l.SessionID+".jsonl")
	}
	return "an unknown session"
}

func (p *parser) system(l *line) bool {
	var text string
	if err := json.Unmarshal(l.Content, &text); err != nil || text == "" {
		return len(l.Content) == 0 // a system line without text is bookkeeping
	}
	key := p.sessionKey(l)
	p.sink.Add(key, &session.Message{
		Role: session.RoleEvent, CreatedAt: parseTime(l.Timestamp),
		Parts: []session.Part{{Kind: session.PartText, Text: "Claude Code: " + text}},
	})
	return true
}
