// Package shellread tells which files a shell command read and which spans
// of its output came from which file — or that it cannot tell, and why.
//
// Agents read most files through shell commands (sed -n, nl | sed, rg, cat,
// head), so an importer or a bash tool that knows only its dedicated read
// tools would send most file content unchecked. Read parses the command with
// a real shell parser (mvdan.cc/sh), follows it the way the shell runs it
// (lists, pipelines, subshells, cd, bash -c wrappers, redirections,
// heredocs, literal variables and loops) and knows what each common reader,
// filter and search prints. Where the output names its file on every line
// (grep -n, rg, diff headers, head's ==> F <== headers) it is cut into
// pieces per file; otherwise the whole output is attributed to every file
// that any stage read. Anything it cannot follow — a script, an unknown
// program or option, a computed file name, a glob that matches nothing on
// this machine — makes the answer "unknown" with a one-line reason, never a
// narrower guess.
//
// The package imports nothing of scrim's but policy, for canonical paths;
// the importers and the bash tool both use it.
package shellread
