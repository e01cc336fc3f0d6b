package claude

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// slashCommand is a command the user ran (/NAME), and the folder Claude
// Code ran it in.
type slashCommand struct {
	Name string `json:"name"`
	Args string `json:"args,omitempty"`
	Cwd  string `json:"cwd,omitempty"`
}

// commandNameRE finds the command a user line ran: Claude Code writes
// `<command-name>/NAME</command-name>` beside its message and arguments,
// and then, on a line of its own (isMeta), the command's text: a custom
// command's Markdown file, its arguments put in.
var (
	commandNameRE = regexp.MustCompile(`<command-name>/?([^<\s]+)</command-name>`)
	commandArgsRE = regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`)
)

// ranCommand returns the command blocks ran, if they are a command's line.
func ranCommand(blocks []block, cwd string) *slashCommand {
	for _, b := range blocks {
		if b.Type != "text" {
			continue
		}
		if m := commandNameRE.FindStringSubmatch(b.Text); m != nil {
			c := &slashCommand{Name: m[1], Cwd: cwd}
			if a := commandArgsRE.FindStringSubmatch(b.Text); a != nil {
				c.Args = strings.TrimSpace(a[1])
			}
			return c
		}
	}
	return nil
}

// commandFile is the Markdown file Claude Code takes command c's text from:
// NAME.md (a:b names a/b.md) in the project's .claude/commands, else in
// the user's; "" if neither is there now (one of Claude Code's own
// commands, a plugin's, or a file since removed).
func (p *parser) commandFile(c *slashCommand) string {
	if strings.Contains(c.Name, "..") {
		return ""
	}
	rel := filepath.FromSlash(strings.ReplaceAll(c.Name, ":", "/")) + ".md"
	var files []string
	if c.Cwd != "" {
		files = append(files, filepath.Join(c.Cwd, ".claude", "commands", rel))
	}
	if home := p.paths.Home(); home != "" {
		files = append(files, filepath.Join(home, ".claude", "commands", rel))
	}
	return importers.FirstFile(files...)
}

// commandText imports the line after a command's as the command's text: a
// skill's (parser.skill) is its SKILL.md's; a custom command's is its file's,
// attributed to it; one whose file cannot be found is of unknown source,
// never the user's words.
func (p *parser) commandText(key string, l *line, c *slashCommand) bool {
	m := &session.Message{Role: session.RoleUser, CreatedAt: parseTime(l.Timestamp)}
	var forms []string
	file, looked := "", false
	for _, b := range l.Message.Content {
		switch b.Type {
		case "text":
			if parts, fs, why, ok := p.skill(b.Text, c.Cwd); ok {
				m.Parts, forms = append(m.Parts, parts...), append(forms, fs...)
				if why != "" {
					m.Meta.UnknownSource = why
				}
				continue
			}
			if !looked {
				file, looked = p.commandFile(c), true
			}
			part := session.Part{Kind: session.PartText, Text: b.Text}
			if file == "" {
				m.Meta.UnknownSource = "the text of the command /" + c.Name + ", whose file scrim cannot find (Claude Code's own, a plugin's, or since removed)"
			} else if all := p.paths.Forms(file, c.Cwd); len(all) > 0 {
				part.SourcePath = all[0]
				forms = append(forms, all[1:]...)
			} else {
				m.Meta.UnknownSource = "the text of the command /" + c.Name + ", whose file cannot be resolved"
			}
			m.Parts = append(m.Parts, part)
		case "image":
			m.Parts = append(m.Parts, session.Part{Kind: session.PartText, Text: imageNote(b)})
		}
	}
	if len(m.Parts) == 0 {
		return true
	}
	p.finishTurn(key)
	m.SyncSourcePaths(forms...)
	p.sink.Add(key, m)
	// The command as the user typed it is the session's prompt, where
	// nothing before it was (a command with a text of its own asks for
	// work; one that only sets something, /model, has none).
	if p.st.Prompts[key] == "" {
		if p.st.Prompts == nil {
			p.st.Prompts = map[string]string{}
		}
		p.st.Prompts[key] = importers.Title(strings.TrimSpace("/" + c.Name + " " + c.Args))
	}
	return true
}
