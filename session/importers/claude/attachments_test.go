package claude

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// lineWriter returns a function that writes a transcript line of session
// "s" in folder ws, each with a uuid of its own.
func lineWriter(t *testing.T, ws string) func(v map[string]any) string {
	n := 0
	return func(v map[string]any) string {
		n++
		v["cwd"], v["sessionId"], v["uuid"], v["timestamp"] = ws, "s", fmt.Sprintf("u%02d", n), "2026-06-30T03:00:00.000Z"
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
}

// importLines writes lines to file and imports it into a store of its own.
func importLines(t *testing.T, file, lines string) *session.Store {
	t.Helper()
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	if _, err := importers.Import(st, Agent, file, New); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestAttachments: Claude Code 2.1's attachment lines that hold a file's
// content (an @-mention, a file changed outside it, lines selected in the
// editor, CLAUDE.md files it loaded) become user messages
// attributed to the file, by its canonical path (here through a symbolic
// link); the other kinds stay out, and none is counted as skipped.
func TestAttachments(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "secrets"), filepath.Join(ws, "linked")); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(ws, "secrets", "notes.env")
	if err := os.WriteFile(env, []byte("LAUNCH_CODE=PURPLE-ELEPHANT-4242-ZEBRA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(ws, "main.go")
	line := lineWriter(t, ws)
	att := func(a map[string]any) string { return line(map[string]any{"type": "attachment", "attachment": a}) }
	text := func(path, content string) map[string]any {
		return map[string]any{"type": "text", "file": map[string]any{"filePath": path, "content": content, "numLines": 1, "startLine": 1, "totalLines": 1}}
	}
	lines := line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "What is in @linked/notes.env?"}}) +
		att(map[string]any{"type": "file", "filename": filepath.Join(ws, "linked", "notes.env"), "displayPath": "linked/notes.env", "content": text(filepath.Join(ws, "linked", "notes.env"), "LAUNCH_CODE=PURPLE-ELEPHANT-4242-ZEBRA\n")}) +
		att(map[string]any{"type": "edited_text_file", "filename": main, "snippet": "12\tfunc main() { run() }"}) +
		att(map[string]any{"type": "selected_lines_in_ide", "ideName": "Visual Studio Code", "lineStart": 1, "lineEnd": 1, "filename": env, "content": "LAUNCH_CODE=PURPLE-ELEPHANT-4242-ZEBRA"}) +
		att(map[string]any{"type": "opened_file_in_ide", "filename": main}) +
		att(map[string]any{"type": "nested_memory", "path": filepath.Join(ws, "secrets", "CLAUDE.md"), "displayPath": "secrets/CLAUDE.md",
			"content": map[string]any{"path": filepath.Join(ws, "secrets", "CLAUDE.md"), "type": "Project", "content": "Never print the launch code.\n", "contentDiffersFromDisk": false}}) +
		att(map[string]any{"type": "instructions", "reason": "session_start", "files": []any{
			map[string]any{"path": filepath.Join(ws, "CLAUDE.md"), "type": "Project", "content": "Use gofmt."},
			map[string]any{"path": filepath.Join(root, ".claude", "memory", "MEMORY.md"), "type": "AutoMem", "content": "- the user likes tests"}}}) +
		att(map[string]any{"type": "directory", "path": ws, "displayPath": "ws/", "content": "main.go\nsecrets/"}) +
		att(map[string]any{"type": "file", "filename": filepath.Join(ws, "logo.png"), "content": map[string]any{"type": "image", "file": map[string]any{"base64": "iVBORw0K"}}}) +
		att(map[string]any{"type": "hook_success", "hookEvent": "SessionStart", "content": "hook said hi"}) +
		att(map[string]any{"type": "compact_file_reference", "filename": main}) +
		att(map[string]any{"type": "file", "displayPath": "gone.txt", "content": text("", "text of a file without a path")}) +
		line(map[string]any{"type": "assistant", "message": map[string]any{"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{map[string]any{"type": "text", "text": "It holds the launch code."}}}})
	file := filepath.Join(root, "s.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	res, err := importers.Import(st, Agent, file, New)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 0 || res.Messages != 8 {
		t.Fatalf("%s: want 8 messages, none skipped", res)
	}
	_, msgs := importtest.Session(t, st, "What is in @linked/notes.env?")
	sonnet := "model=anthropic/claude-sonnet-4-5"
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"user parts=[text from:" + env + "] paths=[" + env + "]",
		"user parts=[text from:" + main + "] paths=[" + main + "]",
		"user parts=[text from:" + env + "] paths=[" + env + "]",
		"user parts=[text from:" + filepath.Join(ws, "secrets", "CLAUDE.md") + "] paths=[" + filepath.Join(ws, "secrets", "CLAUDE.md") + "]",
		"user parts=[text from:" + filepath.Join(ws, "CLAUDE.md") + " text from:" + filepath.Join(root, ".claude", "memory", "MEMORY.md") + "] paths=[" + filepath.Join(ws, "CLAUDE.md") + " " + filepath.Join(root, ".claude", "memory", "MEMORY.md") + "]",
		"user parts=[text text] paths=nil unknown=a file Claude Code attached whose path cannot be resolved",
		"assistant " + sonnet + " parts=[text] paths=nil",
	})
	for i, want := range []string{
		"Claude Code attached linked/notes.env:\nLAUNCH_CODE=PURPLE-ELEPHANT-4242-ZEBRA",
		"Claude Code noted that " + main + " was changed (outside it); the changed lines:\n12\tfunc main() { run() }",
		"The user selected lines 1 to 1 of " + env + " in the editor:\nLAUNCH_CODE=PURPLE-ELEPHANT-4242-ZEBRA",
	} {
		if got := msgs[i+1].Text(); !strings.Contains(got, want[:strings.Index(want, "\n")]) || !strings.HasSuffix(got, want[strings.Index(want, "\n")+1:]) {
			t.Errorf("message %d text %q, want %q", i+2, got, want)
		}
	}
}

// TestSkillText: when a skill is used, Claude Code adds its SKILL.md to the
// conversation as a user text after the skill's folder. That text is the
// file's, by its canonical path (here through a symbolic link), the header
// before it no file's; the Skill call's result, which only names the skill,
// holds no file content. A folder that cannot be resolved makes the text of
// unknown source, and a Skill result that is more than the notice is too.
func TestSkillText(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	skills := filepath.Join(root, "dotfiles", "skills")
	if err := os.MkdirAll(filepath.Join(skills, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(skills, filepath.Join(ws, ".claude", "skills")); err != nil {
		t.Fatal(err)
	}
	skillFile := filepath.Join(skills, "deploy", "SKILL.md")
	body := "# Deploy\nPush with the token in vault/prod.token.\n"
	line := lineWriter(t, ws)
	call := func(id, result string) string {
		return line(map[string]any{"type": "assistant", "message": map[string]any{"id": "m" + id, "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{map[string]any{"type": "tool_use", "id": id, "name": "Skill", "input": map[string]any{"skill": "deploy"}}}}}) +
			line(map[string]any{"type": "user", "message": map[string]any{"role": "user",
				"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": result}}}})
	}
	meta := func(text string) string {
		return line(map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "text", "text": text}}}})
	}
	lines := line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Ship the release"}}) +
		call("toolu_1", "Launching skill: deploy") +
		meta("Base directory for this skill: "+filepath.Join(ws, ".claude", "skills", "deploy")+"\n\n"+body) +
		call("toolu_2", "Launching skill: deploy\nand then some") +
		meta("Base directory for this skill: \x00nowhere\n\n"+body)
	st := importLines(t, filepath.Join(root, "s.jsonl"), lines)
	_, msgs := importtest.Session(t, st, "Ship the release")
	sonnet := "model=anthropic/claude-sonnet-4-5"
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"assistant " + sonnet + " parts=[call:toolu_1:Skill] paths=nil",
		"tool skill " + sonnet + " parts=[tool_result] paths=nil nofiles",
		"user parts=[text from:" + skillFile + "] paths=[" + skillFile + "]",
		"assistant " + sonnet + " parts=[call:toolu_2:Skill] paths=nil",
		"tool skill " + sonnet + " parts=[tool_result] paths=nil unknown=the tool Skill is not known to scrim",
		"user parts=[text] paths=nil unknown=a skill's instructions whose file cannot be resolved",
	})
	if got := msgs[3].Parts[1].Text; got != body {
		t.Errorf("the skill's part is %q, want its SKILL.md %q", got, body)
	}
	if got := msgs[3].Text(); !strings.HasPrefix(got, "Base directory for this skill: ") || !strings.HasSuffix(got, body) {
		t.Errorf("the skill's message reads %q", got)
	}
}

// TestCommandText: the text Claude Code writes after a line that ran a
// slash command is the command's: a custom command's Markdown file (in the
// project's .claude/commands, a:b as a/b.md, else in the user's), a
// skill's SKILL.md, or, when no file can be found, of unknown source. A
// line that is not the next one, and /compact's summary, are not. A
// session that starts with such a command is titled with it.
func TestCommandText(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	t.Setenv("HOME", home)
	files := map[string]string{
		filepath.Join(ws, ".claude", "commands", "deploy.md"):                "Deploy to $ARGUMENTS.\n",
		filepath.Join(ws, ".claude", "commands", "frontend", "component.md"): "Write a component.\n",
		filepath.Join(home, ".claude", "commands", "mine.md"):                "My own command.\n",
		filepath.Join(home, ".claude", "commands", "deploy.md"):              "The user's deploy, not the project's.\n",
		filepath.Join(ws, ".claude", "skills", "release", "SKILL.md"):        "# Release\n",
	}
	for f, text := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	line := lineWriter(t, ws)
	ran := func(name string) string {
		return line(map[string]any{"type": "user", "message": map[string]any{"role": "user",
			"content": "<command-message>" + name + " is running…</command-message>\n<command-name>/" + name + "</command-name>\n<command-args>staging</command-args>"}})
	}
	meta := func(text string, extra ...string) string {
		v := map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}}
		for _, k := range extra {
			v[k] = true
		}
		return line(v)
	}
	lines := line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Start"}}) +
		ran("deploy") + meta("Deploy to staging.\n") +
		ran("frontend:component") + meta("Write a component.\n") +
		ran("mine") + meta("My own command.\n") +
		ran("review") + meta("Review this pull request.\n") +
		ran("release") + meta("Base directory for this skill: "+filepath.Join(ws, ".claude", "skills", "release")+"\n\n# Release\n") +
		ran("model") + line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "<local-command-stdout>Set model to opus</local-command-stdout>"}}) +
		meta("<system-reminder>not a command's text</system-reminder>") +
		ran("compact") + meta("This session is being continued from a previous conversation.", "isCompactSummary")
	st := importLines(t, filepath.Join(root, "s.jsonl"), lines)
	_, msgs := importtest.Session(t, st, "Start")
	cmds := filepath.Join(ws, ".claude", "commands")
	var want []string
	want = append(want, "user parts=[text] paths=nil")
	for _, got := range []string{
		"from:" + filepath.Join(cmds, "deploy.md") + "] paths=[" + filepath.Join(cmds, "deploy.md") + "]",
		"from:" + filepath.Join(cmds, "frontend", "component.md") + "] paths=[" + filepath.Join(cmds, "frontend", "component.md") + "]",
		"from:" + filepath.Join(home, ".claude", "commands", "mine.md") + "] paths=[" + filepath.Join(home, ".claude", "commands", "mine.md") + "]",
		"text] paths=nil unknown=the text of the command /review, whose file scrim cannot find (Claude Code's own, a plugin's, or since removed)",
		"text from:" + filepath.Join(ws, ".claude", "skills", "release", "SKILL.md") + "] paths=[" + filepath.Join(ws, ".claude", "skills", "release", "SKILL.md") + "]",
	} {
		want = append(want, "user parts=[text] paths=nil", "user parts=["+got)
	}
	want = append(want, "user parts=[text] paths=nil", "user parts=[text] paths=nil", "user parts=[text] paths=nil",
		"user parts=[text] paths=nil", "user parts=[text] paths=nil")
	importtest.Compare(t, msgs, want)

	// A session that starts with a command is titled with it, as typed.
	importtest.Session(t, importLines(t, filepath.Join(root, "s2.jsonl"), ran("deploy")+meta("Deploy to staging.\n")), "/deploy staging")
}
