package runner

import (
	"errors"
	"strings"

	"charm.land/fantasy"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tools"
)

// DefaultSystem is the system prompt scrim sends ahead of the history.
const DefaultSystem = "You are a coding agent working through scrim. Some file content in this conversation may be replaced by placeholders of the form [Content from PATH filtered — trust tier \"LABEL\" does not have read access]: your trust tier may not read those files; do not try to guess their content."

// Request is exactly what is sent to a provider for one step.
type Request struct {
	SessionID string
	Model     string // provider/model
	Tier      *policy.Tier
	System    string
	// History is the redacted history (events dropped) the prompt is built
	// from, one entry per stored non-event message, in order.
	History []session.Message
	Prompt  fantasy.Prompt
	// Tools are the tool definitions offered to the model (names, descriptions,
	// input schemas: no session content).
	Tools  []fantasy.Tool
	Report redact.Report
}

// Build turns stored messages into the request for model. It is the only way
// a request is made: Send, `scrim redact` and the TUI's "sent" pane all use it.
// It does no I/O. For a tier with secrets = "redact" it scans msgs for
// credentials each time; BuildWith takes findings kept in the store.
func Build(msgs []session.Message, sessionID, model string, p *policy.Policy) Request {
	return BuildWith(msgs, sessionID, model, p, redact.Context{})
}

// BuildWith is Build with what ctx supplies from beyond msgs: credentials
// already found (Context), the fingerprints of the whole session when msgs
// are a piece of it.
func BuildWith(msgs []session.Message, sessionID, model string, p *policy.Policy, ctx redact.Context) Request {
	hist, rep := redact.HistoryWith(msgs, model, p, ctx)
	tier, _ := p.TierFor(model)
	return Request{
		SessionID: sessionID,
		Model:     model,
		Tier:      tier,
		System:    DefaultSystem,
		History:   hist,
		Prompt:    toPrompt(DefaultSystem, hist),
		Tools:     toolDefs(tier),
		Report:    rep,
	}
}

// toolDefs describes to the provider the tools the tier's models are
// offered (the tier's tools key).
func toolDefs(tier *policy.Tier) []fantasy.Tool {
	offered := tools.Offered(tier)
	out := make([]fantasy.Tool, 0, len(offered))
	for _, t := range offered {
		out = append(out, fantasy.FunctionTool{Name: t.Name(), Description: t.Description(), InputSchema: t.Schema()})
	}
	return out
}

// toPrompt maps history to provider messages. Tool calls and results are
// paired by ID: a result without its call becomes user text, a call without
// a result gets one saying so, because providers reject unpaired ones.
func toPrompt(system string, hist []session.Message) fantasy.Prompt {
	results := exactIDs{} // call IDs that have a result anywhere in hist
	for i := range hist {
		if hist[i].Role == session.RoleTool && hist[i].ToolCallID != "" {
			results.add(hist[i].ToolCallID)
		}
	}
	p := prompter{calls: exactIDs{}, answered: results.has}
	prompt := make(fantasy.Prompt, 0, len(hist)+1)
	prompt = append(prompt, systemMessage(system))
	prompt = p.add(prompt, hist)
	return p.flush(prompt)
}

func systemMessage(system string) fantasy.Message {
	return fantasy.Message{Role: fantasy.MessageRoleSystem, Content: []fantasy.MessagePart{fantasy.TextPart{Text: system}}}
}

// idSet is a set of tool call IDs.
type idSet interface {
	add(id string)
	has(id string) bool
}

// exactIDs holds the IDs themselves.
type exactIDs map[string]struct{}

func (s exactIDs) add(id string)      { s[id] = struct{}{} }
func (s exactIDs) has(id string) bool { _, ok := s[id]; return ok }

// prompter is toPrompt a piece of the history at a time, in order: what
// one piece leaves for the next is the calls met so far and those of the
// last assistant message still without a result.
type prompter struct {
	calls    idSet                // calls met in an assistant message so far
	answered func(id string) bool // whether the whole history has a result for the call
	pending  []string             // calls of the last assistant message still without a result
}

// add appends the provider messages of hist, the next piece of the history,
// to prompt.
func (p *prompter) add(prompt fantasy.Prompt, hist []session.Message) fantasy.Prompt {
	for i := range hist {
		m := &hist[i]
		switch m.Role {
		case session.RoleSystem:
			prompt = p.flush(prompt)
			prompt = append(prompt, fantasy.Message{Role: fantasy.MessageRoleSystem, Content: textParts(m)})
		case session.RoleUser:
			prompt = p.flush(prompt)
			prompt = append(prompt, fantasy.Message{Role: fantasy.MessageRoleUser, Content: textParts(m)})
		case session.RoleAssistant:
			prompt = p.flush(prompt)
			var parts []fantasy.MessagePart
			for _, pt := range m.Parts {
				switch pt.Kind {
				case session.PartToolCall:
					input := string(pt.Input)
					if input == "" {
						input = "{}"
					}
					parts = append(parts, fantasy.ToolCallPart{ToolCallID: pt.CallID, ToolName: pt.Name, Input: input})
					p.calls.add(pt.CallID)
					p.pending = append(p.pending, pt.CallID)
				default:
					if pt.Text != "" {
						parts = append(parts, fantasy.TextPart{Text: pt.Text})
					}
				}
			}
			if len(parts) > 0 {
				prompt = append(prompt, fantasy.Message{Role: fantasy.MessageRoleAssistant, Content: parts})
			}
		case session.RoleTool:
			text := joinText(m)
			if m.ToolCallID == "" || !p.calls.has(m.ToolCallID) {
				prompt = append(prompt, fantasy.Message{Role: fantasy.MessageRoleUser, Content: []fantasy.MessagePart{
					fantasy.TextPart{Text: "[result of tool " + m.Tool + "]\n" + text},
				}})
				continue
			}
			var out fantasy.ToolResultOutputContent = fantasy.ToolResultOutputContentText{Text: text}
			if m.IsError {
				out = fantasy.ToolResultOutputContentError{Error: errors.New(text)}
			}
			prompt = append(prompt, fantasy.Message{Role: fantasy.MessageRoleTool, Content: []fantasy.MessagePart{
				fantasy.ToolResultPart{ToolCallID: m.ToolCallID, Output: out},
			}})
		}
	}
	return prompt
}

// flush answers the pending calls that the history never answers: at the
// next message that is not a tool result, and at the history's end.
func (p *prompter) flush(prompt fantasy.Prompt) fantasy.Prompt {
	for _, id := range p.pending {
		if !p.answered(id) {
			prompt = append(prompt, fantasy.Message{Role: fantasy.MessageRoleTool, Content: []fantasy.MessagePart{
				fantasy.ToolResultPart{ToolCallID: id, Output: fantasy.ToolResultOutputContentError{Error: errors.New("no result was recorded for this tool call")}},
			}})
		}
	}
	p.pending = p.pending[:0]
	return prompt
}

func textParts(m *session.Message) []fantasy.MessagePart {
	return []fantasy.MessagePart{fantasy.TextPart{Text: joinText(m)}}
}

// joinText is the text of m's parts but its tool calls, a line between
// two. The text of a message of one such part is that part's text itself,
// not a copy: at a million messages the prompt's copies were as large as
// the whole session's text (half a gigabyte), held beside it while the
// provider's client wrote the body.
func joinText(m *session.Message) string {
	only, n, size := -1, 0, 0
	for i := range m.Parts {
		if m.Parts[i].Kind != session.PartToolCall {
			only, n, size = i, n+1, size+len(m.Parts[i].Text)+1
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return m.Parts[only].Text
	}
	var b strings.Builder
	b.Grow(size)
	for i, pt := range m.Parts {
		if pt.Kind == session.PartToolCall {
			continue
		}
		if i > 0 && b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(pt.Text)
	}
	return b.String()
}

// Context returns what BuildWith needs for model beyond msgs, messages of
// the stored session id: for a tier with secrets = "redact", the
// credentials found in them, read from the store where it keeps them and
// scanned (then kept) where it does not. For other tiers it reads nothing.
func Context(st *session.Store, id string, msgs []session.Message, model string, p *policy.Policy) (redact.Context, error) {
	if !keepsFindings(st, model, p) {
		return redact.Context{}, nil
	}
	found, _, err := secrets.Lookup(st, id, msgs)
	if err != nil {
		return redact.Context{}, err
	}
	return redact.Context{Findings: found.Of}, nil
}

// LazyContext is Context for a caller that redacts msgs once and needs
// only what is sent of them (a count): the kept findings are read at once,
// but a message without any is scanned only when the redaction asks for it
// (secrets.Lazy), never for one the tier withholds whole. The caller saves
// what was scanned (Lazy.Save); lazy is nil where Context reads nothing.
func LazyContext(st *session.Store, id string, msgs []session.Message, model string, p *policy.Policy) (ctx redact.Context, lazy *secrets.Lazy, err error) {
	if !keepsFindings(st, model, p) {
		return redact.Context{}, nil, nil
	}
	if lazy, err = secrets.LookupLazy(st, id, msgs); err != nil {
		return redact.Context{}, nil, err
	}
	return redact.Context{Findings: lazy.Of}, lazy, nil
}

// keepsFindings reports whether model's tier redacts credentials and st is
// there to keep what scanning finds.
func keepsFindings(st *session.Store, model string, p *policy.Policy) bool {
	tier, _ := p.TierFor(model)
	return tier.RedactsSecrets() && st != nil
}
