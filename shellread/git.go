package shellread

import (
	"os"
	"path/filepath"
	"strings"
)

// git follows the subcommands whose output is (or is not) file content:
// show REV:PATH and cat-file print a file, diff, log -p and show print
// diffs named by their headers, blame prints a file, grep searches, config
// prints .git/config (which can hold tokens). Status-like subcommands print
// no file content.
func git(in *interp, c *call) []seg {
	args := c.args
	dir := in.dir
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-C" && len(args) > 1:
			if d, ok := in.gitDir(dir, args[1]); ok {
				dir = d
			} else {
				return []seg{unknownSeg("%s, so the folder git -C runs in cannot be told", in.why)}
			}
			args = args[2:]
			continue
		case a == "-c" && len(args) > 1:
			args = args[2:]
			continue
		case a == "--no-pager", a == "-P", a == "--paginate", a == "-p" && len(args) > 1, a == "--no-replace-objects", a == "--literal-pathspecs", a == "--bare":
			args = args[1:]
			continue
		case strings.HasPrefix(a, "--git-dir"), strings.HasPrefix(a, "--work-tree"), strings.HasPrefix(a, "--namespace"):
			return []seg{unknownSeg("git with %s is not followed", a)}
		case strings.HasPrefix(a, "-"):
			args = args[1:]
			continue
		}
		break
	}
	if len(args) == 0 {
		return []seg{{}}
	}
	if dir == "" {
		return []seg{unknownSeg("%s, so the repository cannot be told", in.why)}
	}
	saved := in.dir
	in.dir = dir
	defer func() { in.dir = saved }()
	sub, rest := args[0], args[1:]
	root := repoRoot(dir)
	has := func(flags ...string) bool {
		for _, a := range rest {
			for _, f := range flags {
				if a == f || strings.HasPrefix(a, f+"=") {
					return true
				}
			}
		}
		return false
	}
	diffs := func() []seg {
		return []seg{{naming: &naming{style: diffHeaders, dir: root, git: !has("--no-prefix")}}}
	}
	switch sub {
	case "show":
		if has("--stat", "--name-only", "--name-status", "--shortstat", "--numstat", "-s", "--no-patch", "--summary", "--oneline") && !has("-p", "--patch") {
			return []seg{{}}
		}
		var out []seg
		plainRevs := 0
		for _, a := range rest {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if rev, path, ok := strings.Cut(a, ":"); ok && !strings.Contains(rev, "/") {
				name := path
				if !strings.HasPrefix(path, "./") && !strings.HasPrefix(path, "../") {
					name = filepath.Join(root, path)
				}
				segs, v := in.readFile(name)
				if !v.ok() {
					return []seg{v.seg}
				}
				out = append(out, segs...)
				continue
			}
			plainRevs++
		}
		if plainRevs > 0 || len(out) == 0 {
			out = append(out, diffs()...)
		}
		return out
	case "diff", "log", "whatchanged", "format-patch", "range-diff":
		if sub == "log" && !has("-p", "-u", "--patch", "-L", "--cc", "-c") {
			return []seg{{}}
		}
		if has("--stat", "--name-only", "--name-status", "--shortstat", "--numstat", "--quiet", "--exit-code", "--check") && !has("-p", "--patch") {
			return []seg{{}}
		}
		if sub == "diff" && has("--no-index") {
			return []seg{{naming: &naming{style: diffHeaders, dir: in.dir, git: !has("--no-prefix")}}}
		}
		return diffs()
	case "stash":
		if len(rest) > 0 && rest[0] == "show" && has("-p", "--patch") {
			return diffs()
		}
		return []seg{{}}
	case "blame", "annotate":
		var out []seg
		for _, a := range rest {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if f := in.resolve(a); f != nil {
				if fi, err := os.Stat(f[0]); err == nil && !fi.IsDir() || !strings.Contains(a, "..") && looksLikeFile(a) {
					segs, v := in.readFile(a)
					if !v.ok() {
						return []seg{v.seg}
					}
					out = append(out, segs...)
				}
			}
		}
		if len(out) == 0 {
			return []seg{unknownSeg("git blame of a file that cannot be told")}
		}
		return out
	case "cat-file":
		for _, a := range rest {
			if rev, path, ok := strings.Cut(a, ":"); ok && !strings.HasPrefix(a, "-") && !strings.Contains(rev, "/") {
				return in.readFileSegs(filepath.Join(root, path))
			}
		}
		if has("-t", "-s", "-e") {
			return []seg{{}}
		}
		return []seg{unknownSeg("git cat-file prints an object whose file is not named")}
	case "grep":
		return gitGrep(in, &call{name: "grep", args: rest, stdin: c.stdin})
	case "config":
		if has("--get", "--get-all", "--get-regexp", "--list", "-l") || len(rest) == 1 {
			return in.readFileSegs(filepath.Join(root, ".git", "config"))
		}
		return nil
	case "status", "branch", "rev-parse", "remote", "add", "commit", "checkout", "switch", "restore", "reset",
		"fetch", "pull", "push", "merge", "rebase", "tag", "init", "clone", "worktree", "mv", "rm", "clean",
		"cherry-pick", "revert", "ls-files", "ls-tree", "rev-list", "describe", "shortlog", "reflog", "bisect",
		"submodule", "apply", "am", "gc", "fsck", "count-objects", "version", "help", "for-each-ref", "symbolic-ref",
		"show-ref", "merge-base", "name-rev", "check-ignore", "check-attr", "notes", "sparse-checkout", "lfs", "var":
		return []seg{{}}
	}
	return []seg{unknownSeg("git %s is not known to scrim", sub)}
}

func looksLikeFile(a string) bool { return strings.Contains(a, ".") || strings.Contains(a, "/") }

func (in *interp) readFileSegs(name string) []seg {
	segs, v := in.readFile(name)
	if !v.ok() {
		return []seg{v.seg}
	}
	return segs
}

// gitGrep is git grep: names relative to the folder it runs in.
func gitGrep(in *interp, c *call) []seg {
	p, bad := grepSpec.parse(c.args)
	if bad != "" && bad != "--cached" && bad != "--untracked" && bad != "--no-index" && bad != "--heading" && bad != "--break" {
		return []seg{unknownSeg("the option %s of git grep is not known to scrim", bad)}
	}
	n := &naming{style: linePrefix, dir: in.dir, roots: []string{""}, numbered: p.has("n", "line-number"), nul: p.has("z", "null"), context: p.has("A", "B", "C", "NUM", "context", "after-context", "before-context")}
	if p.has("l", "L", "files-with-matches", "name-only", "files-without-match") {
		n.style = nameList
	}
	if p.has("h") {
		return []seg{unknownSeg("git grep -h prints no file names")}
	}
	return []seg{{naming: n}}
}

// gitDir is the folder git -C DIR runs in.
func (in *interp) gitDir(dir, arg string) (string, bool) {
	if filepath.IsAbs(arg) {
		return filepath.Clean(arg), true
	}
	if dir == "" {
		return "", false
	}
	return filepath.Clean(dir + "/" + arg), true
}

// repoRoot is the top of the repository holding dir on this machine; dir
// itself when none is found (agents run in their repository's root).
func repoRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}
