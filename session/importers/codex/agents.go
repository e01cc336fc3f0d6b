package codex

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/scrim-dev/scrim/internal/userdirs"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// agentsRE is how Codex adds the instructions of the AGENTS.md files it
// loaded to the conversation, as a user message: the folder it runs in,
// then, between <INSTRUCTIONS> tags, the global file's text ($CODEX_HOME),
// "--- project-doc ---", and the project's files from its root (the
// folder that holds .git) down to that folder, each AGENTS.override.md or
// else AGENTS.md, joined by blank lines. The text names none of them.
var agentsRE = regexp.MustCompile(`(?s)\A# AGENTS\.md instructions for ([^\n]+)\n\n<INSTRUCTIONS>\n(.*)</INSTRUCTIONS>\s*\z`)

// agentsSeparator is what Codex puts between the global file and the
// project's.
const agentsSeparator = "--- project-doc ---"

// maxAgentsFile bounds what is read of one instructions file (Codex itself
// sends at most 32 KiB of the project's by default).
const maxAgentsFile = 1 << 20

// agents cuts a user text that is Codex's AGENTS.md instructions into the
// parts each file gave, attributed to it, found by the text those files
// hold now, and the lines around them. What no file now holds (a file
// changed since, one Codex found under another name, its own guidance)
// makes the message of unknown source (why): never the user's words. ok is
// false for any other text.
func (p *parser) agents(text string) (parts []session.Part, forms []string, why string, ok bool) {
	m := agentsRE.FindStringSubmatchIndex(text)
	if m == nil {
		return nil, nil, "", false
	}
	dir, bodyStart, bodyEnd := strings.TrimSpace(text[m[2]:m[3]]), m[4], m[5]
	prev := 0                // where the part not yet cut starts
	var left strings.Builder // the body's text that no file holds
	for _, f := range p.agentsFiles(dir) {
		content := strings.TrimSpace(readBounded(f))
		if content == "" {
			continue
		}
		from := max(prev, bodyStart)
		i := strings.Index(text[from:bodyEnd], content)
		if i < 0 {
			continue
		}
		all := p.paths.Forms(f, dir)
		if len(all) == 0 {
			continue
		}
		start := from + i
		left.WriteString(text[from:start])
		if start > prev {
			parts = append(parts, session.Part{Kind: session.PartText, Text: text[prev:start]})
		}
		parts = append(parts, session.Part{Kind: session.PartText, Text: content, SourcePath: all[0]})
		forms = append(forms, all[1:]...)
		prev = start + len(content)
	}
	left.WriteString(text[max(prev, bodyStart):bodyEnd])
	if prev < len(text) {
		parts = append(parts, session.Part{Kind: session.PartText, Text: text[prev:]})
	}
	if strings.TrimSpace(strings.ReplaceAll(left.String(), agentsSeparator, "")) != "" {
		why = "instructions Codex gathered from AGENTS.md files, not all of which hold them now"
	}
	return parts, forms, why, true
}

// agentsFiles lists, in the order Codex joins them, the instructions files
// Codex reads for a session run in dir, of those there now.
func (p *parser) agentsFiles(dir string) []string {
	first := func(d string) string {
		return importers.FirstFile(filepath.Join(d, "AGENTS.override.md"), filepath.Join(d, "AGENTS.md"))
	}
	var files []string
	if home := p.codexHome(); home != "" {
		if f := first(home); f != "" {
			files = append(files, f)
		}
	}
	if !filepath.IsAbs(dir) {
		return files
	}
	dir = filepath.Clean(dir)
	chain := []string{dir}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break // the project's root
		}
		up := filepath.Dir(d)
		if up == d {
			chain = []string{dir} // no root: the folder alone
			break
		}
		d = up
		chain = append(chain, d)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if f := first(chain[i]); f != "" {
			files = append(files, f)
		}
	}
	return files
}

// codexHome is the folder the rollout's Codex kept its files in: the one
// that holds its sessions folder, else $CODEX_HOME, else ~/.codex.
func (p *parser) codexHome() string {
	if i := strings.LastIndex(p.file, string(filepath.Separator)+"sessions"+string(filepath.Separator)); i > 0 {
		return p.file[:i]
	}
	if d, ok := userdirs.Folder(userdirs.OS, "CODEX_HOME"); ok {
		return d
	}
	if h := p.paths.Home(); h != "" {
		return filepath.Join(h, ".codex")
	}
	return ""
}

// readBounded is the text of file f, up to maxAgentsFile bytes; "" if it
// cannot be read.
func readBounded(f string) string {
	fh, err := os.Open(f)
	if err != nil {
		return ""
	}
	defer fh.Close()
	b, _ := io.ReadAll(io.LimitReader(fh, maxAgentsFile))
	return string(b)
}
