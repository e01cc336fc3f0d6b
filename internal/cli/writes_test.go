//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A call that edits or writes a denied file holds that file's content in its
// input: what an Edit replaces (here never read in the session: nothing to
// derive it from), what a Write writes, the lines a Codex patch keeps and
// removes. For the limited tier those strings are the file's placeholder,
// the path and the JSON around them stay, and a later quote of them is
// derived content; an edit of a file the tier may read is sent as it is,
// and the trusted model is sent everything.
func TestWrittenFileIsWithheld(t *testing.T) {
	t.Parallel()
	f := newDenyFixture(t, "send")
	root, ws, notes := f.root, f.ws, f.notes
	fresh := filepath.Join(ws, "secrets", "new.env")
	app := filepath.Join(ws, "app.go")
	must(t, os.WriteFile(app, []byte("package main\n\nfunc main() { println(\"hello, world\") }\n"), 0o644))
	const (
		rotated = "GREEN-TIGER-7777-OTTER"
		written = "ORANGE-FALCON-9090-HERON"
		patched = "SILVER-MOOSE-3131-PLOVER"
		added   = "COPPER-LYNX-5151-WREN"
		echoed  = "AMBER-STOAT-6262-GREBE"
		hdoc    = "INDIGO-HARE-7373-CRANE"
		shelled = "CORAL-VOLE-8484-EGRET"
		hpatch  = "JADE-SHREW-9595-TERN"
	)

	tr := &transcript{}
	tr.claude(ws, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Rotate the launch code, add a token file, and greet the team"}})
	tr.claudeCall(ws, "toolu_1", "Edit", map[string]any{"file_path": notes, "old_string": "LAUNCH_CODE=" + subagentValue, "new_string": "LAUNCH_CODE=" + rotated})
	tr.claudeResult(ws, "toolu_1", "The file "+notes+" has been updated successfully.", false, map[string]any{"filePath": notes})
	tr.claudeCall(ws, "toolu_2", "Write", map[string]any{"file_path": "secrets/new.env", "content": "TOKEN=" + written + "\n"})
	tr.claudeResult(ws, "toolu_2", "File created successfully at: "+fresh, false, map[string]any{"type": "create", "filePath": fresh})
	tr.claudeCall(ws, "toolu_3", "Edit", map[string]any{"file_path": app, "old_string": `println("hello, world")`, "new_string": `println("hello, team")`})
	tr.claudeResult(ws, "toolu_3", "The file "+app+" has been updated successfully.", false, map[string]any{"filePath": app})
	// Through the shell: an echo appended to a denied file, a heredoc into
	// one, and a command that writes a file the tier may read.
	tr.claudeBash(ws, "toolu_4", `echo "ECHOED=`+echoed+`" >> secrets/notes.env`, "", false)
	tr.claudeBash(ws, "toolu_5", "cat > secrets/heredoc.env <<'EOF'\nHDOC="+hdoc+"\nEOF", "", false)
	tr.claudeBash(ws, "toolu_6", `echo "build ok" > build.log`, "", false)
	tr.claude(ws, map[string]any{"type": "assistant", "message": map[string]any{"id": "m9", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "text", "text": "Done: " + subagentValue + " became " + rotated + ", and the token is " + written + "."}}}})
	claude := tr.write(t, filepath.Join(root, "s1.jsonl"))

	cx := &transcript{}
	cx.codexStart(ws)
	cx.codex("response_item", map[string]any{"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_p1", "status": "completed",
		"input": "*** Begin Patch\n*** Update File: secrets/notes.env\n@@\n-The quarterly numbers are confidential and must never leak out\n+PATCHED=" + patched + "\n*** End Patch\n"})
	cx.codex("response_item", map[string]any{"type": "custom_tool_call_output", "call_id": "call_p1",
		"output": `{"output":"Success. Updated the following files:\nM secrets/notes.env\n","metadata":{"exit_code":0,"duration_seconds":0.0}}`})
	cx.codexExec("call_e1", ws, "printf 'SHELLED="+shelled+"\\n' > secrets/codex.env", "")
	// A patch through the shell, as a heredoc.
	cx.codexCall("call_p3", "shell_command", map[string]any{"command": "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: secrets/heredoc-patch.env\n+HP=" + hpatch + "\n*** End Patch\nPATCH", "workdir": ws})
	cx.codexOutput("call_p3", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nA secrets/heredoc-patch.env\n")
	// Older Codex ran a patch through its shell tool: ["apply_patch", patch].
	cx.codexCall("call_p2", "shell", map[string]any{"command": []string{"apply_patch", "*** Begin Patch\n*** Add File: secrets/extra.env\n+EXTRA=" + added + "\n*** End Patch\n"}, "workdir": ws})
	cx.codexOutput("call_p2", `{"output":"Success. Updated the following files:\nA secrets/extra.env\n","metadata":{"exit_code":0,"duration_seconds":0.0}}`)
	codex := cx.write(t, filepath.Join(root, "rollout-2025-09-01T10-00-00-0199.jsonl"))

	f.run("import", "claude", claude)
	f.run("import", "codex", codex)
	for _, file := range []string{claude, codex} {
		id := importedSession(t, f.store, file)
		out := f.run("redact", id, "--model", "openai/limited")
		for _, leak := range []string{subagentValue, rotated, written, patched, added, echoed, hdoc, shelled, hpatch, "quarterly"} {
			if strings.Contains(out, leak) {
				t.Errorf("%s: the limited tier is sent %q of a file it may not read:\n%s", filepath.Base(file), leak, out)
			}
		}
		var doc struct {
			Messages []struct {
				Parts []struct {
					Kind     string          `json:"kind"`
					Name     string          `json:"name"`
					Input    json.RawMessage `json:"input"`
					Filtered []struct {
						Kind, Path string
					} `json:"filtered"`
				} `json:"parts"`
			} `json:"messages"`
		}
		must(t, json.Unmarshal([]byte(f.run("redact", id, "--model", "openai/limited", "--format", "json")), &doc))
		calls := 0
		for _, m := range doc.Messages {
			for _, p := range m.Parts {
				if p.Kind != "tool_call" {
					continue
				}
				var in map[string]any
				if err := json.Unmarshal(p.Input, &in); err != nil {
					t.Fatalf("%s: the call's input is not JSON: %v: %s", p.Name, err, p.Input)
				}
				readable := in["file_path"] == app || strings.Contains(fmt.Sprint(in["command"]), "build.log")
				for k, v := range in {
					s, _ := v.(string)
					withheld := strings.HasPrefix(s, "[Content from ") && strings.HasSuffix(s, `filtered — trust tier "limited" does not have read access]`)
					switch {
					case k == "file_path" && withheld:
						t.Errorf("%s: the path the call writes is withheld: %s", p.Name, p.Input)
					case k != "file_path" && s != "" && !withheld && !readable:
						t.Errorf("%s: %s is sent: %s", p.Name, k, p.Input)
					case readable && withheld:
						t.Errorf("%s: an edit of a file the tier may read is withheld: %s", p.Name, p.Input)
					}
				}
				calls++
			}
		}
		if calls == 0 {
			t.Fatalf("%s: no tool call in the preview", filepath.Base(file))
		}
	}

	id := importedSession(t, f.store, claude)
	out := f.run("redact", id, "--model", "openai/limited")
	for _, want := range []string{
		`"old_string":"[Content from ` + notes + ` filtered — trust tier \"limited\" does not have read access]"`,
		`"content":"[Content from ` + fresh + ` filtered`,
		`"file_path":"secrets/new.env"`, // a relative path to the file: kept
		`"old_string":"println(\"hello, world\")"`,
		`· call Bash {"command":"echo \"build ok\" \u003e build.log"`,
		"    " + fresh + `  — deny pattern "**/secrets/**"`,
		"    derived from " + notes + "  — 2 spans\n",
		"    derived from " + fresh + "  — 1 span\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the limited tier's preview lacks %q:\n%s", want, out)
		}
	}
	trusted := f.run("redact", id, "--model", "demo/trusted")
	for _, v := range []string{subagentValue, rotated, written} {
		if strings.Count(trusted, v) != 2 {
			t.Errorf("the trusted model is not sent %s in the call and the quote:\n%s", v, trusted)
		}
	}
}
