//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command copies a denied file to one the tier may read (cp, a pipe
// into a file), and a later command, or Claude Code's Read, reads the copy:
// what it prints is the denied file's content, and the limited tier is not
// sent it, also when the copy and the read come in two imports of a growing
// transcript. A file a script wrote is of unknown source when read back.
func TestCopiedFileIsWithheld(t *testing.T) {
	t.Parallel()
	f := newDenyFixture(t, "send")
	root, ws, notes := f.root, f.ws, f.notes
	body := strings.TrimSuffix(subagentNotes, "\n")

	tr := &transcript{}
	tr.claude(ws, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Back up the notes, then show the backup"}})
	tr.claudeBash(ws, "toolu_1", "cp secrets/notes.env notes.bak && cat secrets/notes.env | base64 > notes.b64", "", false)
	tr.claudeBash(ws, "toolu_2", "python3 gen.py > out.txt", "", false)
	claude := filepath.Join(root, "s1.jsonl")
	must(t, os.WriteFile(claude, []byte(tr.b.String()), 0o644))
	f.run("import", "claude", claude) // the copies, in a first import
	tr.claudeBash(ws, "toolu_3", "cat notes.bak", body+"\n", false)
	tr.claudeCall(ws, "toolu_4", "Read", map[string]any{"file_path": filepath.Join(ws, "notes.bak")})
	tr.claudeResult(ws, "toolu_4", numbered(subagentNotes, "→"), false,
		map[string]any{"type": "text", "file": map[string]any{"filePath": filepath.Join(ws, "notes.bak"), "content": subagentNotes}})
	tr.claudeBash(ws, "toolu_5", "cat out.txt", "generated 42 rows\n", false)
	tr.claudeCall(ws, "toolu_6", "Grep", map[string]any{"pattern": "LAUNCH", "path": ws, "output_mode": "content", "-n": true})
	tr.claudeResult(ws, "toolu_6", filepath.Join(ws, "notes.bak")+":1:LAUNCH_CODE="+subagentValue, false,
		map[string]any{"mode": "content", "numFiles": 1, "filenames": []string{}, "content": filepath.Join(ws, "notes.bak") + ":1:LAUNCH_CODE=" + subagentValue, "numLines": 1})
	tr.write(t, claude)
	f.run("import", "claude", claude) // the reads, in a second

	// Claude Code 2 runs a command in the background and writes its output
	// to a file, which the model then reads, with Read or through the shell.
	bg := &transcript{}
	outFile := filepath.Join(root, "claude-1000", "tasks", "b8ab45e.output")
	bg.claudeCall(ws, "toolu_b1", "Bash", map[string]any{"command": "cat secrets/notes.env", "run_in_background": true})
	bg.claudeResult(ws, "toolu_b1", "Command running in background with ID: b8ab45e. Output is being written to: "+outFile, false,
		map[string]any{"stdout": "", "stderr": "", "interrupted": false, "backgroundTaskId": "b8ab45e"})
	bg.claudeCall(ws, "toolu_b2", "Read", map[string]any{"file_path": outFile})
	bg.claudeResult(ws, "toolu_b2", numbered(subagentNotes, "→"), false,
		map[string]any{"type": "text", "file": map[string]any{"filePath": outFile, "content": subagentNotes}})
	bg.claudeBash(ws, "toolu_b4", "tail -5 "+outFile, body+"\n", false)
	background := bg.write(t, filepath.Join(root, "s2.jsonl"))
	f.run("import", "claude", background)

	cx := &transcript{}
	cx.codexStart(ws)
	cx.codexExec("call_1", ws, "cp secrets/notes.env /tmp/n.txt", "")
	cx.codexExec("call_2", ws, "sed -n '1,5p' /tmp/n.txt", body+"\n")
	codex := cx.write(t, filepath.Join(root, "rollout-2025-09-01T10-00-00-0199.jsonl"))
	f.run("import", "codex", codex)

	for _, file := range []string{claude, codex, background} {
		id := importedSession(t, f.store, file)
		out := f.run("redact", id, "--model", "openai/limited")
		if strings.Contains(out, subagentValue) || strings.Contains(out, "quarterly") {
			t.Errorf("%s: the limited tier is sent a copy of the denied file:\n%s", filepath.Base(file), out)
		}
		if !strings.Contains(out, "✖ [Content from "+notes+` filtered — trust tier "limited" does not have read access]`) {
			t.Errorf("%s: no placeholder names the denied file:\n%s", filepath.Base(file), out)
		}
		if file == claude && !strings.Contains(out, "unknown source (it reads "+filepath.Join(ws, "out.txt")+", into which an earlier command wrote ") {
			t.Errorf("reading back a script's output is not of unknown source:\n%s", out)
		}
		if file == background && !strings.Contains(out, "│ Command running in background with ID: b8ab45e. Output is being written to: "+outFile+"\n") {
			t.Errorf("the notice that the command started in the background, which holds none of its output, is withheld:\n%s", out)
		}
		if trusted := f.run("redact", id, "--model", "demo/trusted"); !strings.Contains(trusted, subagentValue) {
			t.Errorf("%s: the trusted model is not sent the copy:\n%s", filepath.Base(file), trusted)
		}
	}
}
