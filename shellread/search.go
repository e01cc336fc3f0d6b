package shellread

import (
	"os"
	"strings"
)

var grepSpec = optSpec{
	flags: "EFGPiyvwxclLoqsbHhnTZrRUazI",
	args:  "efmABCdD",
	num:   true,
	long: []string{"extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "ignore-case", "no-ignore-case",
		"invert-match", "word-regexp", "line-regexp", "count", "color", "colour", "files-with-matches",
		"files-without-match", "only-matching", "quiet", "silent", "no-messages", "byte-offset", "with-filename",
		"no-filename", "line-number", "initial-tab", "null", "null-data", "text", "recursive",
		"dereference-recursive", "binary", "line-buffered", "unix-byte-offsets"},
	longArg: []string{"regexp", "file", "max-count", "after-context", "before-context", "context", "include",
		"exclude", "exclude-from", "exclude-dir", "label", "binary-files", "devices", "directories"},
}

var rgSpec = optSpec{
	flags: "abcFHhIiLlNnopqSsUuVvwxz0.",
	args:  "ABCdEefgjMmrTt",
	long: []string{"line-number", "no-line-number", "heading", "no-heading", "with-filename", "no-filename", "files",
		"files-with-matches", "files-without-match", "count", "count-matches", "only-matching", "hidden", "no-hidden",
		"no-ignore", "no-ignore-vcs", "no-ignore-dot", "no-ignore-global", "no-ignore-parent", "no-ignore-exclude",
		"no-ignore-files", "ignore", "follow", "no-follow", "smart-case", "case-sensitive", "ignore-case", "fixed-strings",
		"no-fixed-strings", "word-regexp", "line-regexp", "invert-match", "multiline", "no-multiline", "multiline-dotall",
		"pcre2", "no-pcre2", "json", "vimgrep", "column", "no-column", "null", "null-data", "text", "no-text", "binary",
		"no-binary", "search-zip", "no-search-zip", "no-messages", "quiet", "trim", "no-trim", "no-config", "sort-files",
		"stats", "byte-offset", "crlf", "no-crlf", "passthru", "passthrough", "pretty", "unrestricted",
		"max-columns-preview", "no-unicode", "one-file-system", "debug", "trace", "auto-hybrid-regex",
		"block-buffered", "line-buffered", "no-require-git", "include-zero", "glob-case-insensitive",
		"no-glob-case-insensitive", "help", "version", "type-list", "mmap", "no-mmap", "no-max-columns-preview",
		"no-context-separator", "no-include-zero", "no-stats", "no-ignore-messages", "no-encoding"},
	longArg: []string{"regexp", "file", "glob", "iglob", "type", "type-not", "type-add", "type-clear", "max-count",
		"max-depth", "maxdepth", "max-filesize", "max-columns", "context", "after-context", "before-context", "replace",
		"threads", "encoding", "engine", "sort", "sortr", "color", "colors", "path-separator", "context-separator",
		"field-match-separator", "field-context-separator", "pre", "pre-glob", "ignore-file", "dfa-size-limit",
		"regex-size-limit", "hyperlink-format", "generate"},
}

// grep follows GNU grep: which operands are files, and whether the output
// names them.
func grep(in *interp, c *call) []seg {
	p := &c.p
	if p.has("q", "quiet", "silent") {
		return nil
	}
	ops := p.ops
	if !p.has("e", "regexp", "f", "file") {
		if len(ops) == 0 {
			return nil // a usage error
		}
		ops = ops[1:]
	}
	for _, f := range p.vals("f", "file") {
		in.names.add(in.resolve(f)...)
	}
	recursive := p.has("r", "R", "recursive", "dereference-recursive")
	listing := p.has("l", "L", "files-with-matches", "files-without-match")
	counting := p.has("c", "count")
	s := search{
		ops: ops, recursive: recursive, listing: listing, counting: counting,
		names:    len(ops) > 1 || recursive && (len(ops) == 0 || in.isDir(ops[0]) != isFile),
		numbered: p.has("n", "line-number"),
		nul:      p.has("Z", "null"),
		context:  p.has("A", "B", "C", "NUM", "after-context", "before-context", "context"),
	}
	if p.has("H", "with-filename") {
		s.names = true
	}
	if p.has("h", "no-filename") {
		s.names = false
	}
	return in.search(c, s)
}

// rg follows ripgrep. Agents capture its output, which is not a terminal:
// no headings and no line numbers unless asked, names when more than one
// file may be searched.
func rg(in *interp, c *call) []seg {
	p := &c.p
	switch {
	case p.has("q", "quiet"):
		return nil
	case p.has("h", "help", "V", "version", "type-list", "generate"):
		return []seg{{}}
	case p.has("json"):
		return []seg{unknownSeg("rg --json output is not followed")}
	}
	ops := p.ops
	if p.has("files") {
		for _, op := range ops {
			in.names.add(in.resolve(op)...)
		}
		return []seg{{}} // names only
	}
	if !p.has("e", "regexp", "f", "file") {
		if len(ops) == 0 {
			return nil
		}
		ops = ops[1:]
	}
	for _, f := range p.vals("f", "file", "ignore-file") {
		in.names.add(in.resolve(f)...)
	}
	s := search{
		ops: ops, recursive: true, rg: true,
		listing:  p.has("l", "files-with-matches", "files-without-match"),
		counting: p.has("c", "count", "count-matches"),
		numbered: p.has("n", "line-number", "vimgrep", "p", "pretty") && !lastOf(p, "N", "no-line-number", "n", "line-number"),
		nul:      p.has("0", "null"),
		context:  p.has("A", "B", "C", "after-context", "before-context", "context", "passthru", "passthrough"),
		heading:  (p.has("heading", "p", "pretty")) && !lastOf(p, "no-heading", "", "heading", "pretty"),
	}
	// With more than one file, or a folder, names are printed.
	s.names = len(ops) != 1 || in.isDir(ops[0]) != isFile
	if p.has("H", "with-filename") {
		s.names = true
	}
	if p.has("I", "no-filename") {
		s.names = false
	}
	if len(ops) == 0 && c.stdin != nil {
		s.stdin = true
	}
	return in.search(c, s)
}

// lastOf reports whether, of the two options (or their long forms), the
// first given last wins: rg -n -N has no line numbers.
func lastOf(p *parsed, a, along, b, blong string) bool {
	ia, ib := -1, -1
	for i, o := range p.opts {
		switch o.name {
		case a, along:
			if o.name != "" {
				ia = i
			}
		case b, blong:
			ib = i
		}
	}
	return ia > ib
}

type kind int

const (
	isUnknown kind = iota
	isFile
	isFolder
)

// isDir says whether name is a folder on this machine, a file, or not known.
func (in *interp) isDir(name string) kind {
	if name == "." || name == ".." || strings.HasSuffix(name, "/") || strings.HasSuffix(name, "/.") || name == "~" {
		return isFolder
	}
	forms := in.resolve(name)
	if forms == nil {
		return isUnknown
	}
	fi, err := os.Stat(forms[0])
	switch {
	case err != nil:
		return isUnknown
	case fi.IsDir():
		return isFolder
	}
	return isFile
}

// search is what a grep-like command was asked to do.
type search struct {
	ops                           []string
	recursive, rg, stdin          bool
	names, numbered, nul, context bool
	listing, counting, heading    bool
}

func (in *interp) search(c *call, s search) []seg {
	ops := s.ops
	if len(ops) == 0 {
		if !s.recursive || s.stdin {
			// A filter of its input: whole lines pass through unless it
			// prints counts or names.
			if s.listing || s.counting {
				return derive(c.stdin)
			}
			return c.stdin
		}
		if in.dir == "" {
			return []seg{unknownSeg("%s, so the folder searched cannot be told", in.why)}
		}
	}
	n := &naming{style: linePrefix, dir: in.dir, numbered: s.numbered, nul: s.nul, context: s.context}
	switch {
	case s.listing:
		n.style = nameList
	case s.heading && s.names:
		n.style = blockHeading
	}
	for _, op := range ops {
		if op == "-" {
			continue
		}
		segs, v := in.readFile(op)
		if !v.ok() {
			return []seg{v.seg}
		}
		k := in.isDir(op)
		if s.recursive && k != isFile {
			n.roots = append(n.roots, op)
		}
		if k != isFolder {
			n.files = append(n.files, op)
			for _, sg := range segs {
				n.forms = append(n.forms, sg.files...)
			}
		}
	}
	if len(ops) == 0 {
		n.roots = []string{""}
	}
	if len(ops) == 1 && len(n.roots) == 1 && len(n.files) == 1 {
		n.single = true // not on this machine: a file, or a folder
	}
	if !s.names {
		if len(n.roots) > 0 {
			return []seg{unknownSeg("the command searches folders without printing the names of the files it found")}
		}
		return []seg{{files: n.forms}}
	}
	return []seg{{naming: n}}
}
