package importers

import (
	"slices"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/shellread"
)

// Shell attributes a shell command's output, as the agent recorded it, to
// the files the command read. head is text the agent put before the
// command's output (Codex's "Exit code: 0 … Output:"), which is no file's
// content; body is the output.
func (p *Paths) Shell(m *session.Message, cmd shellread.Command, head, body string) {
	if cmd.Home == "" {
		cmd.Home = p.home
	}
	m.Attribute(shellread.Read(cmd, body, p.Resolve), head, body, "")
}

// WrittenBy returns the file a shell command writes, for its call: what
// the command holds of what goes into it (an echo's words, a heredoc, a
// sed -i script) is that file's content. "" when it writes none, or
// several (a part is of one file: what it repeats of a file read before is
// still derived content), or cannot be told. It follows the command a
// second time, without its output: a few microseconds.
func (p *Paths) WrittenBy(cmd shellread.Command) string {
	if !mayWrite(cmd.Line) && !slices.ContainsFunc(cmd.Argv, mayWrite) {
		return ""
	}
	if cmd.Home == "" {
		cmd.Home = p.home
	}
	if w := shellread.Read(cmd, "", p.Resolve).Writes; len(w) == 1 {
		return w[0]
	}
	return ""
}

// mayWrite is a first look at a command's text: false when it has none of
// the ways shellread knows a command writes a file (a redirection other
// than to a descriptor or a device, or the name of a command that writes
// one), so that following it again is not needed. Following every command
// a second time took a tenth off the import of a generated transcript of
// 60 MB, whose Bash calls are all `go test ./...`.
func mayWrite(s string) bool {
	for i := strings.IndexByte(s, '>'); i >= 0; i = next(s, i+1, '>') {
		j := i + 1
		if j < len(s) && s[j] == '>' {
			j++
		}
		if j < len(s) && s[j] == '&' {
			continue // >&2: a descriptor
		}
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if !strings.HasPrefix(s[j:], "/dev/") {
			return true
		}
	}
	for _, w := range writers {
		if strings.Contains(s, w) {
			return true
		}
	}
	return strings.Contains(s, "sed") && inPlace(s)
}

// writers are the names of the commands shellread knows to write a file
// (sort with -o, uniq and xxd with an output operand, cp, mv, install, ln),
// and tee; a name inside another word only costs a second look. sed writes
// one with -i only: agents read most files with sed -n.
var writers = []string{"tee", "sort", "uniq", "xxd", "cp", "mv", "install", "ln"}

// inPlace reports whether s has an option that may be sed's -i: --in-place,
// or a cluster of short options that holds an i.
func inPlace(s string) bool {
	if strings.Contains(s, "--in-place") {
		return true
	}
	for i := strings.Index(s, " -"); i >= 0; i = nextDash(s, i+2) {
		for j := i + 2; j < len(s) && s[j] != ' ' && s[j] != '-'; j++ {
			if s[j] == 'i' {
				return true
			}
		}
	}
	return false
}

func nextDash(s string, i int) int {
	if k := strings.Index(s[i:], " -"); k >= 0 {
		return i + k
	}
	return -1
}

// next is the index of c in s from i on, -1 if none.
func next(s string, i int, c byte) int {
	if k := strings.IndexByte(s[i:], c); k >= 0 {
		return i + k
	}
	return -1
}

// PatchBegin opens a patch in the format of Codex's apply_patch, which
// opencode's and Crush's patch tools take too.
const PatchBegin = "*** Begin Patch"

// PatchedFile returns the file an apply_patch patch adds, changes or
// deletes when it touches only one: what the patch holds of it, the lines
// it keeps, removes and adds, is that file's content. A patch of several
// files gives "" (one part is of one file): what it repeats of a file read
// before is still derived content.
func PatchedFile(patch string) string {
	file := ""
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\r\n")
		for _, head := range [...]string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if name, ok := strings.CutPrefix(line, head); ok {
				name = strings.TrimSpace(name)
				if file != "" && name != file {
					return ""
				}
				file = name
			}
		}
	}
	return file
}
