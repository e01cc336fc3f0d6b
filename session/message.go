package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/scrim-dev/scrim/policy"
)

// Role is who a message is from.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
	// RoleEvent marks things that happened (a model switch, an import note).
	// Events are shown to the user and never sent to a provider.
	RoleEvent Role = "event"
)

// PartKind is what a part holds.
type PartKind string

const (
	PartText       PartKind = "text"
	PartToolCall   PartKind = "tool_call"
	PartToolResult PartKind = "tool_result"
)

// Message is one entry of a session.
type Message struct {
	ID         string    `json:"id"`
	SessionID  string    `json:"sessionId"`
	Seq        uint64    `json:"seq"` // 1-based order within the session, assigned by the store
	Role       Role      `json:"role"`
	Model      string    `json:"model,omitempty"`      // produced it (assistant) or was active (tool results)
	Tool       string    `json:"tool,omitempty"`       // tool results: read, grep, glob, bash, webfetch
	ToolCallID string    `json:"toolCallId,omitempty"` // tool results: the call they answer
	IsError    bool      `json:"isError,omitempty"`
	Parts      []Part    `json:"parts"`
	Meta       Meta      `json:"meta"`
	CreatedAt  time.Time `json:"createdAt"`
}

// Part is a piece of a message's content.
type Part struct {
	Kind PartKind `json:"kind"`
	Text string   `json:"text,omitempty"`
	// SourcePath is the canonical absolute path this text was read from; ""
	// means the text is not file content (or its source is not known per part).
	SourcePath string `json:"sourcePath,omitempty"`
	// Tool calls: the call's ID, the tool's name and its JSON input: the
	// model's own words, but for a call that writes a file (an edit, a
	// write), whose SourcePath is that file: what its input holds of the
	// file, what it replaces and what it writes, is the file's content.
	// Redacted marks a placeholder produced by package redact; it is never
	// stored. Renderers use it, not the text, to show placeholders, so file
	// content cannot pass itself off as one.
	Redacted bool            `json:"redacted,omitempty"`
	CallID   string          `json:"callId,omitempty"`
	Name     string          `json:"name,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	// Filtered lists the placeholders package redact put inside the part's
	// Text or Input (derived content, credentials); like Redacted, it is
	// never stored.
	Filtered []Filtered `json:"filtered,omitempty"`
}

// Filtered is a placeholder inside a part: what it replaced and where.
type Filtered struct {
	Kind string `json:"kind"`           // "derived": repeats content of Path; "secret": a credential Rule found
	Path string `json:"path,omitempty"` // derived: the denied file whose content the span repeats
	Rule string `json:"rule,omitempty"` // secret: the gitleaks rule that found it (e.g. github-pat)
	// Key is the unit the placeholder is in (Unit.Key: -1 the Text, k the
	// kth string of a tool call's input). Start and End are where the
	// placeholder is in the sent unit's text; StoredStart and StoredEnd
	// where what it replaced is in the stored one's.
	Key         int `json:"key"`
	Start       int `json:"start"`
	End         int `json:"end"`
	StoredStart int `json:"storedStart"`
	StoredEnd   int `json:"storedEnd"`
}

// Meta is message metadata.
type Meta struct {
	// SourcePaths is the ordered, de-duplicated set of canonical files the
	// content came from. nil means "source unknown" (never redacted) and is
	// omitted from JSON.
	SourcePaths []string `json:"sourcePaths,omitempty"`
	// Note is a free-form remark (e.g. an unpaired tool call on import).
	Note string `json:"note,omitempty"`
	// UnknownSource says why the files this content came from cannot be
	// told (a shell command that runs a script, a web page): redaction can
	// check only the sourcePaths listed, if any, which are then what is
	// known to have been read, not all of it.
	UnknownSource string `json:"unknownSource,omitempty"`
	// NoFiles marks content known to hold no file's content: names of
	// files, a command's diagnostics, scrim's own messages.
	NoFiles bool `json:"noFiles,omitempty"`
}

// Attributed reports whether any part carries its own SourcePath. A message
// with SourcePaths but no attributed parts is attributed as a whole; one
// whose SourcePaths also list paths that no part carries is attributed to
// those as a whole as well (content whose file has a second form, or that
// may be from several files).
func (m *Message) Attributed() bool {
	for i := range m.Parts {
		if m.Parts[i].SourcePath != "" {
			return true
		}
	}
	return false
}

// SyncSourcePaths sets Meta.SourcePaths from the parts' SourcePaths: the
// ordered, de-duplicated set, then whole (paths the message as a whole is
// attributed to) that no part carries. A message attributed as a whole (no
// part has a SourcePath) gets whole added to its SourcePaths.
func (m *Message) SyncSourcePaths(whole ...string) {
	var out []string
	if m.Attributed() {
		out = partPaths(m.Parts)
	} else {
		out = m.Meta.SourcePaths
	}
	for _, p := range whole {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if out != nil {
		m.Meta.SourcePaths = out
	}
}

func partPaths(parts []Part) []string {
	var out []string
	seen := map[string]struct{}{}
	for _, p := range parts {
		if p.SourcePath == "" {
			continue
		}
		if _, ok := seen[p.SourcePath]; ok {
			continue
		}
		seen[p.SourcePath] = struct{}{}
		out = append(out, p.SourcePath)
	}
	return out
}

// Validate checks the invariants the store relies on: a known role and part
// kinds; SourcePaths nil or non-empty, absolute (here or on a Windows
// drive), clean and unique; and, when any part is attributed, SourcePaths
// starting with the parts' paths in order of first appearance (any after
// them are paths the message is attributed to as a whole).
func (m *Message) Validate() error {
	switch m.Role {
	case RoleUser, RoleAssistant, RoleTool, RoleSystem, RoleEvent:
	default:
		return fmt.Errorf("message role %q is not one of user, assistant, tool, system, event", m.Role)
	}
	if m.Meta.SourcePaths != nil && len(m.Meta.SourcePaths) == 0 {
		return errors.New("sourcePaths is present but empty; use nil for unknown source")
	}
	seen := map[string]struct{}{}
	for _, p := range m.Meta.SourcePaths {
		if !cleanAbs(p) {
			return fmt.Errorf("sourcePath %q is not an absolute, clean path", p)
		}
		if _, dup := seen[p]; dup {
			return fmt.Errorf("sourcePath %q is listed twice", p)
		}
		seen[p] = struct{}{}
	}
	for i, pt := range m.Parts {
		switch pt.Kind {
		case PartText, PartToolResult, PartToolCall:
		default:
			return fmt.Errorf("part %d kind %q is not one of text, tool_call, tool_result", i+1, pt.Kind)
		}
		if len(pt.Input) > 0 && !json.Valid(pt.Input) {
			return fmt.Errorf("part %d input is not valid JSON", i+1)
		}
	}
	if m.Attributed() {
		want := partPaths(m.Parts)
		if len(want) > len(m.Meta.SourcePaths) || !equalStrings(want, m.Meta.SourcePaths[:len(want)]) {
			return fmt.Errorf("sourcePaths %q do not start with the parts' source paths %q", m.Meta.SourcePaths, want)
		}
	}
	return nil
}

// cleanAbs reports whether p is absolute and clean, here or as a Windows
// path is recorded (C:/Users/me).
func cleanAbs(p string) bool {
	if d, ok := policy.DrivePath(p); ok {
		return d == p
	}
	return filepath.IsAbs(p) && filepath.Clean(p) == p
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Text joins the text of all parts; handy for display and tests.
func (m *Message) Text() string {
	n := 0
	for _, p := range m.Parts {
		n += len(p.Text) + 1
	}
	b := make([]byte, 0, n)
	for i, p := range m.Parts {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, p.Text...)
	}
	return string(b)
}

// Unknown reports whether m is a tool result whose content cannot be
// checked against a policy in full, and why: a reason recorded when it was
// made (a shell command scrim cannot follow), or none recorded at all (a
// result stored before sources were recorded, or from an importer that
// does not know the tool). Results known to hold no file content (noFiles)
// and results whose every source is listed are not.
func (m *Message) Unknown() (reason string, unknown bool) {
	switch {
	case m.Meta.UnknownSource != "":
		return m.Meta.UnknownSource, true
	case m.Role == RoleTool && m.Meta.SourcePaths == nil && !m.Meta.NoFiles:
		return "no source was recorded", true
	}
	return "", false
}
