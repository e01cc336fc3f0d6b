package importers

import (
	"cmp"
	"slices"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/shellread"
)

// Shell attributes a shell command's output, as the agent recorded it, to
// the files the command read. head is text the agent put before the
// command's output (Codex's "Exit code: 0 … Output:"), which is no file's
// content; body is the output.
//
// copies is what the transcript's commands wrote into files so far (see
// Copies): it is followed, and grows with what this command writes.
func (p *Paths) Shell(m *session.Message, cmd shellread.Command, head, body string, copies *Copies) {
	m.Attribute(copies.Follow(p.read(cmd, body)), head, body, "")
}

// read follows cmd, run in this machine's home unless it says another, as
// its output says.
func (p *Paths) read(cmd shellread.Command, output string) shellread.Reading {
	if cmd.Home == "" {
		cmd.Home = p.home
	}
	return shellread.Read(cmd, output, p.Resolve)
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
	if w := p.read(cmd, "").Writes; len(w) == 1 {
		return w[0]
	}
	return ""
}

// mayWrite is a first look at a command's text: false when it has none of
// the ways shellread knows a command writes a file (a redirection other
// than to a descriptor or a device, or the name of a command that writes
// one), so that following it again is not needed: this look takes 105 ns
// where following `nl -ba F | sed -n …` again takes 7.7 µs, and most of a
// transcript's commands only read.
func mayWrite(s string) bool {
	for i := strings.IndexByte(s, '>'); i >= 0; i = indexFrom(s, i+1, ">") {
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
	for i := strings.Index(s, " -"); i >= 0; i = indexFrom(s, i+2, " -") {
		for j := i + 2; j < len(s) && s[j] != ' ' && s[j] != '-'; j++ {
			if s[j] == 'i' {
				return true
			}
		}
	}
	return false
}

// indexFrom is the index of sub in s from i on, -1 if none.
func indexFrom(s string, i int, sub string) int {
	if k := strings.Index(s[i:], sub); k >= 0 {
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

// Copies remembers, over the sessions of one transcript or database, what
// their shell commands wrote into files from other files (cp .env /tmp/n,
// base64 key > k.txt, a script's output > out.json): a later command that
// reads such a file reads their content, which the file's own path does not
// say. Keyed by canonical path, kept in a transcript's import state between
// imports of a growing file.
type Copies map[string]Copied

// Copied is what went into a file: the files whose content it may hold, or
// why that cannot be told.
type Copied struct {
	From    []string `json:"from,omitempty"`
	Unknown string   `json:"unknown,omitempty"`
}

// maxCopies bounds what Copies keeps: a session that writes more files from
// other files than that (a generated one, a loop) has the rest read as
// their own paths say, as before Copies.
const maxCopies = 4096

// Follow returns r, the reading of a command's output, with what it read
// through files earlier commands wrote: their sources join its files (the
// output is then attributed to all of them, as a whole), and content of
// unknown source makes it unknown. Then it notes what r's command wrote.
func (c *Copies) Follow(r shellread.Reading) shellread.Reading {
	if len(*c) > 0 {
		files := r.Files
		for _, f := range files {
			from, why := c.Of(f)
			for _, g := range from {
				r.Files = appendNew(slices.Clip(r.Files), g)
			}
			r.Unknown = cmp.Or(r.Unknown, why)
		}
	}
	for _, w := range r.Copies {
		c.note(w)
	}
	return r
}

// Of says what earlier commands wrote into the file at the canonical path,
// for what reads it: the files whose content it may hold beside its own,
// and why that cannot be told, if it cannot.
func (c Copies) Of(file string) (from []string, unknown string) {
	cp := c[file]
	if cp.Unknown != "" {
		unknown = "it reads " + file + ", into which an earlier command wrote " + cp.Unknown
	}
	return cp.From, unknown
}

// Output notes that file holds the output of a command whose reading
// without its output is r (a background command's output file): the
// files it reads, or, for a command that names paths but whose output
// alone would tell which files it printed (a search), or that runs what
// cannot be followed, that this cannot be told.
func (c *Copies) Output(file string, r shellread.Reading) {
	w := shellread.Copy{File: file, From: r.Files}
	switch {
	case r.Unknown != "":
		w.Unknown = "the output of a background command: " + r.Unknown
	case len(r.Files) == 0 && len(r.Names) > 0:
		w.Unknown = "the output of a background command that reads " + strings.Join(r.Names, ", ")
	}
	c.note(w)
}

// Reads is what a shell command reads, told without its output.
func (p *Paths) Reads(cmd shellread.Command) shellread.Reading { return p.read(cmd, "") }

// Attach adds to m, a tool result already attributed to the files it
// shows (a Read, a Grep), the sources of those of them earlier commands
// wrote from others, as paths of the whole message (so that a denied one
// withholds all of it), and makes it of unknown source where what went into
// one cannot be told.
func (c Copies) Attach(m *session.Message) {
	if len(c) == 0 {
		return
	}
	var extra []string
	why := ""
	for _, f := range m.Meta.SourcePaths {
		from, w := c.Of(f)
		extra = append(extra, from...)
		why = cmp.Or(why, w)
	}
	if len(extra) > 0 {
		m.SyncSourcePaths(extra...)
	}
	m.Meta.UnknownSource = cmp.Or(m.Meta.UnknownSource, why)
}

// note keeps what a command wrote into a file, in place of what the file
// held before; through files written before from others, their sources.
func (c *Copies) note(w shellread.Copy) {
	if len(w.From) == 0 && w.Unknown == "" {
		delete(*c, w.File) // its own words now
		return
	}
	got := Copied{Unknown: w.Unknown}
	for _, f := range w.From {
		got.From = appendNew(got.From, f)
		if before, ok := (*c)[f]; ok {
			for _, g := range before.From {
				got.From = appendNew(got.From, g)
			}
			got.Unknown = cmp.Or(got.Unknown, before.Unknown)
		}
	}
	if *c == nil {
		*c = Copies{}
	}
	if _, ok := (*c)[w.File]; ok || len(*c) < maxCopies {
		(*c)[w.File] = got
	}
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
