package gemini

import (
	"strings"

	"github.com/scrim-dev/scrim/session"
)

// A prompt that @-mentions files or folders is recorded as Gemini CLI sent
// it: the user's words, then the content of each file it read for them,
// between two marks, each file after a line that names it as the prompt
// did (relative to the workspace, or absolute):
//
//	What is in @secrets/notes.env?
//	--- Content from referenced files ---
//	Content from @secrets/notes.env:
//	LAUNCH=...
//	--- End of content ---
//
// (an MCP resource's content the same, named by its URI).
const (
	refStart = "--- Content from referenced files ---"
	refEnd   = "--- End of content ---"
	refFile  = "\nContent from @"
)

// references attributes the content of the files m, a prompt, holds for
// its @-mentions, each to its file: a part of its own, the lines that name
// them and the user's words parts of no file. A file whose name cannot be
// resolved, or an MCP resource, makes the prompt of unknown source. The
// parts joined are the prompt as it was sent.
func (b *builder) references(m *session.Message) {
	var all strings.Builder
	for _, p := range m.Parts {
		all.WriteString(p.Text)
	}
	text := all.String()
	start := strings.Index(text, refStart)
	if start < 0 {
		return
	}
	var parts []session.Part
	var more []string // a file's other canonical forms
	add := func(s, path string) {
		if s != "" {
			parts = append(parts, session.Part{Kind: session.PartText, Text: s, SourcePath: path})
		}
	}
	body := start + len(refStart)
	end := strings.LastIndex(text, "\n"+refEnd) // its line: the last file's content ends before it
	if end < body {
		end = len(text)
	}
	first := strings.Index(text[body:end], refFile)
	if first < 0 {
		first = end - body
	}
	add(text[:body+first], "")
	at := body + first
	for at < end {
		head := at + len(refFile)
		colon := strings.Index(text[head:end], ":\n")
		if colon < 0 {
			add(text[at:end], "") // no name: nothing read follows
			break
		}
		name := text[head : head+colon]
		from := head + colon + 2
		next := strings.Index(text[from:end], refFile)
		if next < 0 {
			next = end - from
		}
		add(text[at:from], "")
		content := text[from : from+next]
		switch forms, why := b.resolve(name); {
		case strings.Contains(name, "://"):
			m.Meta.UnknownSource = firstReason(m.Meta.UnknownSource, "the content of @"+name+", a resource Gemini CLI read for the prompt, not a file")
			add(content, "")
		case why != "":
			m.Meta.UnknownSource = firstReason(m.Meta.UnknownSource, "the content of @"+name+", which Gemini CLI put in the prompt: "+why)
			add(content, "")
		default:
			add(content, forms[0])
			more = append(more, forms[1:]...)
		}
		at = from + next
	}
	add(text[end:], "")
	m.Parts = parts
	m.SyncSourcePaths(more...)
}

func firstReason(was, why string) string {
	if was != "" {
		return was
	}
	return why
}
