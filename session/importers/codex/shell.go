package codex

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/shellread"
)

// attribute fills a tool result's parts and sourcePaths from what its call
// ran: a shell command through shellread, from the call's own arguments (a
// rollout often has no command events); Codex's parsed_cmd may add files.
func (p *parser) attribute(m *session.Message, c *call, text string) {
	whole := func() { m.Parts = []session.Part{{Kind: session.PartToolResult, Text: text}} }
	switch {
	case isShell(c.Name) || c.Name == "exec" || c.Name == "wait":
		head, body := splitHead(text)
		if c.Name == "exec" || c.Name == "wait" {
			if id := cellID(head); id != "" {
				p.st.Cells[id] = &call{Script: c.Script, Unknown: c.Unknown}
			}
		} else if id := runningSession(head); id != "" {
			p.st.Execs[id] = &call{Argv: c.Argv, Line: c.Line, Pwsh: c.Pwsh, Workdir: c.Workdir, Unknown: c.Unknown}
		}
		m.Attribute(p.st.Copies.Follow(p.read(c, body)), head, body, "")
		addReads(m, c.Reads)
	case c.Name == "read_file" && c.File != "":
		m.Attribute(p.st.Copies.Follow(shellread.Reading{Files: p.paths.Forms(c.File, p.dir(c.Workdir))}), "", text, "")
	case c.Name == "apply_patch", c.Name == "update_plan", c.Name == "list_dir", c.Name == "view_image":
		whole() // what changed, a plan, names: no file's content
		m.Meta.NoFiles = true
	case c.Name == "spawn_agent", c.Name == "send_input":
		whole() // the agent's ID, the message's: no file's content
		m.Meta.NoFiles = true
	case c.Name == "resume_agent", c.Name == "close_agent":
		whole() // the agent's status, which may be its last answer
		m.Meta.UnknownSource = subagentAnswer
	case c.Name == "web_search":
		whole()
		m.Meta.UnknownSource = "web search results"
	case strings.Contains(c.Name, "__"):
		whole()
		m.Meta.UnknownSource = "the result of an MCP tool (" + c.Name + ")"
	default:
		whole()
		m.Meta.UnknownSource = "the tool " + c.Name + " is not known to scrim"
	}
}

// subagentAnswer is why the multi-agent tools' results are of unknown
// source: a subagent's rollout is a session of its own, and what it read is
// there (a tier with derived = "redact" gathers it: session.Store.Subagents).
const subagentAnswer = "a subagent's answer, which may repeat what it read"

func (p *parser) dir(workdir string) string {
	if workdir != "" {
		return workdir
	}
	return p.st.Cwd
}

// read tells what a call's output holds: its command's, or (code mode) the
// commands its script ran.
func (p *parser) read(c *call, body string) shellread.Reading {
	if c.Unknown != "" {
		return shellread.Reading{Unknown: c.Unknown}
	}
	home := p.paths.Home()
	if c.Name == "exec" || c.Name == "wait" {
		var rs []shellread.Reading
		for _, sc := range c.Script {
			rs = append(rs, shellread.Read(shellread.Command{Line: sc.Line, Dir: p.dir(sc.Workdir), Home: home}, body, p.paths.Resolve))
		}
		return mergeReadings(rs)
	}
	cmd := shellread.Command{Line: c.Line, Argv: c.Argv, Dir: p.dir(c.Workdir), Home: home}
	if c.Pwsh {
		cmd.Line, cmd.Argv = "", []string{"powershell", "-Command", c.Line}
	}
	if cmd.Line == "" && cmd.Argv == nil {
		return shellread.Reading{Unknown: "the call records no command"}
	}
	return shellread.Read(cmd, body, p.paths.Resolve)
}

// mergeReadings joins what several commands of one script read, whose
// outputs share one text: one command's reading stands as it is; several
// are attributed as a whole.
func mergeReadings(rs []shellread.Reading) shellread.Reading {
	if len(rs) == 1 {
		return rs[0]
	}
	var out shellread.Reading
	seen := map[string]bool{}
	for _, r := range rs {
		if r.Unknown != "" && out.Unknown == "" {
			out.Unknown = r.Unknown
		}
		for _, f := range r.Files {
			if !seen[f] {
				seen[f] = true
				out.Files = append(out.Files, f)
			}
		}
	}
	return out
}

// headLine matches the lines Codex puts before a command's output.
var headLine = regexp.MustCompile(`^(Exit code: -?\d+|Wall time:? [\d.]+ seconds|Chunk ID: \S*|Process exited with code -?\d+|Process running with session ID \S+|Original token count: \d+|Total output lines: \d+|Command: .*|Script (completed|failed|terminated|running with cell ID \S+))$`)

// headStarts are how those lines start: a line that starts otherwise is
// output, and the regular expression is not asked.
var headStarts = []string{"Exit code: ", "Wall time", "Chunk ID: ", "Process ", "Original token count: ", "Total output lines: ", "Command: ", "Script "}

func isHeadLine(line string) bool {
	for _, p := range headStarts {
		if strings.HasPrefix(line, p) {
			return headLine.MatchString(line)
		}
	}
	return false
}

// splitHead cuts Codex's header ("Exit code: 0 … Output:") from a
// command's output. A shell call's JSON output ({"output", "metadata"}) is
// written out as the same header and the output.
func splitHead(text string) (head, body string) {
	if head, body, ok := splitJSONOutput(text); ok {
		return head, body
	}
	rest := text
	for n := 0; n < 10; n++ {
		line, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return "", text
		}
		if line == "Output:" {
			return text[:len(text)-len(after)], after
		}
		if !isHeadLine(line) {
			return "", text
		}
		rest = after
	}
	return "", text
}

// splitJSONOutput is splitHead for the JSON form of a shell call's output;
// ok is false when text is not in it.
func splitJSONOutput(text string) (head, body string, ok bool) {
	if !strings.HasPrefix(text, `{"output":`) {
		return "", "", false
	}
	// The output can be a whole file: unescape it once, and decode only the
	// small metadata with encoding/json. This stands in for json.Unmarshal
	// of the whole text (what it replaced), so it takes the text apart
	// exactly when that would: Members checks all of it as encoding/json
	// does (a text that only looks like JSON stays output as it is), keys
	// match as encoding/json matches them, a null output is none, and any
	// other type error keeps the text whole.
	var o struct {
		Output   string
		Metadata struct {
			ExitCode *int     `json:"exit_code"`
			Duration *float64 `json:"duration_seconds"`
		}
	}
	bad := false
	ok = importers.Members([]byte(text), func(k, v []byte, _, _ int) bool {
		switch {
		case importers.KeyIs(k, "output"):
			if v[0] != 'n' {
				var isString bool
				o.Output, isString = importers.JSONString(v)
				bad = !isString
			}
		case importers.KeyIs(k, "metadata"):
			bad = json.Unmarshal(v, &o.Metadata) != nil
		}
		return !bad
	})
	if ok && !bad {
		var b strings.Builder
		if o.Metadata.ExitCode != nil {
			b.WriteString("Exit code: " + strconv.Itoa(*o.Metadata.ExitCode) + "\n")
		}
		if o.Metadata.Duration != nil {
			b.WriteString("Wall time: " + strconv.FormatFloat(*o.Metadata.Duration, 'f', -1, 64) + " seconds\n")
		}
		if b.Len() > 0 {
			b.WriteString("Output:\n")
		}
		return b.String(), o.Output, true
	}
	return "", "", false
}

var (
	runningRE = regexp.MustCompile(`(?m)^Process running with session ID (\S+)$`)
	cellRE    = regexp.MustCompile(`(?m)^Script running with cell ID (\S+)$`)
)

func runningSession(head string) string {
	if m := runningRE.FindStringSubmatch(head); m != nil {
		return m[1]
	}
	return ""
}

func cellID(head string) string {
	if m := cellRE.FindStringSubmatch(head); m != nil {
		return m[1]
	}
	return ""
}
