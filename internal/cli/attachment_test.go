//go:build unix

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The user @-mentions a denied file in Claude Code 2.1, which writes its
// content on an attachment line; the assistant then quotes it. Neither is
// sent to the limited tier, whose report names the file; the trusted model
// is sent both.
func TestMentionedFileIsWithheld(t *testing.T) {
	t.Parallel()
	f := newDenyFixture(t, "send")
	root, ws, notes, store := f.root, f.ws, f.notes, f.store

	tr := &transcript{}
	tr.claude(ws, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "What is in @secrets/notes.env?"}})
	tr.claude(ws, map[string]any{"type": "attachment", "attachment": map[string]any{"type": "file", "filename": notes, "displayPath": "secrets/notes.env",
		"content": map[string]any{"type": "text", "file": map[string]any{"filePath": notes, "content": subagentNotes, "numLines": 2, "startLine": 1, "totalLines": 2}}}})
	tr.claude(ws, map[string]any{"type": "assistant", "message": map[string]any{"id": "m9", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "text", "text": "The launch code is " + subagentValue + "."}}}})
	file := tr.write(t, filepath.Join(root, "s1.jsonl"))

	f.run("import", "claude", file)
	id := importedSession(t, store, file)
	out := f.run("redact", id, "--model", "openai/limited")
	for _, want := range []string{
		"│ Claude Code attached secrets/notes.env:\n",
		"✖ [Content from " + notes + ` filtered — trust tier "limited" does not have read access]`,
		"    " + notes + `  — deny pattern "**/secrets/**"`,
		"    derived from " + notes + "  — 1 span\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the limited tier's preview lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, subagentValue) || strings.Contains(out, "quarterly") {
		t.Fatalf("the limited tier is sent the mentioned file:\n%s", out)
	}
	trusted := f.run("redact", id, "--model", "demo/trusted")
	if strings.Count(trusted, subagentValue) != 2 {
		t.Fatalf("the trusted model is not sent the file and the quote:\n%s", trusted)
	}
}

// Gemini CLI puts the content of an @-mentioned file in the prompt it
// records: the file's part is withheld from the limited tier, the model's
// quote of it is derived content, and the trusted model is sent both.
func TestGeminiMentionedFileIsWithheld(t *testing.T) {
	t.Parallel()
	f := newDenyFixture(t, "send")
	root, ws, notes, store := f.root, f.ws, f.notes, f.store
	chats := filepath.Join(root, "gemini", "tmp", "ab12", "chats")
	must(t, os.MkdirAll(chats, 0o755))
	prompt := "What is in @secrets/notes.env?\n--- Content from referenced files ---\nContent from @secrets/notes.env:\n" +
		strings.TrimSuffix(subagentNotes, "\n") + "\n--- End of content ---"
	file := jsonLines(t, filepath.Join(chats, "session-2026-01-05T10-00-5e55.jsonl"),
		map[string]any{"sessionId": "5e55", "projectHash": "ab12", "startTime": "2026-01-05T10:00:00.000Z", "lastUpdated": "2026-01-05T10:00:09.000Z", "kind": "main", "directories": []string{ws}},
		map[string]any{"id": "u1", "timestamp": "2026-01-05T10:00:01.000Z", "type": "user", "content": []any{map[string]any{"text": prompt}}},
		map[string]any{"id": "g1", "timestamp": "2026-01-05T10:00:02.000Z", "type": "gemini", "content": "The launch code is " + subagentValue + ".", "model": "gemini-2.5-pro"})

	f.run("import", "gemini", file)
	id := importedSession(t, store, file)
	out := f.run("redact", id, "--model", "openai/limited")
	for _, want := range []string{
		"│ What is in @secrets/notes.env?\n",
		"✖ [Content from " + notes + ` filtered — trust tier "limited" does not have read access]`,
		"    derived from " + notes + "  — 1 span\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the limited tier's preview lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, subagentValue) || strings.Contains(out, "quarterly") {
		t.Fatalf("the limited tier is sent the mentioned file:\n%s", out)
	}
	if trusted := f.run("redact", id, "--model", "demo/trusted"); strings.Count(trusted, subagentValue) != 2 {
		t.Fatalf("the trusted model is not sent the file and the quote:\n%s", trusted)
	}
}

// A skill in a folder the limited tier may not read: Claude Code (and
// Codex) add its SKILL.md to the conversation when the model uses it; and
// a custom slash command's file, whose text Claude Code adds when the user
// runs it. The limited tier is
// sent the header with its placeholder, not the skill's text, nor the
// assistant's quote of it; the Skill call's result is no unknown source;
// the trusted model is sent all of it.
func TestSkillTextIsWithheld(t *testing.T) {
	t.Parallel()
	f := newDenyFixture(t, "send")
	root, ws, store := f.root, f.ws, f.store
	must(t, os.WriteFile(f.pol, []byte(strings.Replace(fmt.Sprintf(subagentPolicy, "send"), `deny           = ["**/secrets/**"]`,
		`deny           = ["**/secrets/**", "**/.claude/skills/**", "**/.claude/commands/**"]`, 1)), 0o644))
	dir := filepath.Join(ws, ".claude", "skills", "release")
	must(t, os.MkdirAll(dir, 0o755))
	const secret = "Sign with the key phrase TANGERINE-OCTOPUS-3141."
	body := "# Release\n" + secret + "\nThen push the tag.\n"
	must(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: release\n---\n"+body), 0o644))

	tr := &transcript{}
	tr.claude(ws, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Cut the release"}})
	tr.claudeCall(ws, "toolu_1", "Skill", map[string]any{"skill": "release"})
	tr.claudeResult(ws, "toolu_1", "Launching skill: release", false, nil)
	tr.claude(ws, map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "text", "text": "Base directory for this skill: " + dir + "\n\n" + body}}}})
	tr.claude(ws, map[string]any{"type": "assistant", "message": map[string]any{"id": "m9", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "text", "text": "The skill says: " + secret}}}})
	file := tr.write(t, filepath.Join(root, "s1.jsonl"))

	if out := f.run("import", "claude", file); !strings.Contains(out, "0 unknown-source results") {
		t.Errorf("the Skill call's result counted as of unknown source:\n%s", out)
	}
	id := importedSession(t, store, file)
	out := f.run("redact", id, "--model", "openai/limited")
	skill := filepath.Join(dir, "SKILL.md")
	for _, want := range []string{
		"Base directory for this skill: " + dir,
		"[Content from " + skill + ` filtered — trust tier "limited" does not have read access]`,
		"    derived from " + skill + "  — 1 span\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the limited tier's preview lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "TANGERINE") || strings.Contains(out, "push the tag") {
		t.Fatalf("the limited tier is sent the skill's text:\n%s", out)
	}
	if trusted := f.run("redact", id, "--model", "demo/trusted"); strings.Count(trusted, secret) != 2 {
		t.Fatalf("the trusted model is not sent the skill and the quote:\n%s", trusted)
	}

	// A custom command's text, on the line after the one that ran it.
	command := filepath.Join(ws, ".claude", "commands", "deploy.md")
	must(t, os.MkdirAll(filepath.Dir(command), 0o755))
	const cmdSecret = "Use the deploy phrase MAGENTA-WALRUS-2718."
	must(t, os.WriteFile(command, []byte(cmdSecret+"\nDeploy to $ARGUMENTS.\n"), 0o644))
	ct := &transcript{}
	ct.claude(ws, map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": "<command-message>deploy is running…</command-message>\n<command-name>/deploy</command-name>\n<command-args>staging</command-args>"}})
	ct.claude(ws, map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "text", "text": cmdSecret + "\nDeploy to staging.\n"}}}})
	ct.claude(ws, map[string]any{"type": "assistant", "message": map[string]any{"id": "m9", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "text", "text": "Noted: " + cmdSecret}}}})
	cfile := ct.write(t, filepath.Join(root, "s2.jsonl"))
	f.run("import", "claude", cfile)
	out = f.run("redact", importedSession(t, store, cfile), "--model", "openai/limited")
	if !strings.Contains(out, "[Content from "+command+` filtered — trust tier "limited" does not have read access]`) ||
		!strings.Contains(out, "    derived from "+command+"  — 1 span\n") || strings.Contains(out, "MAGENTA") {
		t.Fatalf("the limited tier's preview of a custom command's text:\n%s", out)
	}

	// Codex names the SKILL.md in the text it adds.
	cx := &transcript{}
	cx.codexStart(ws)
	cx.codex("response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text",
		"text": "<skill>\n<name>release</name>\n<path>" + skill + "</path>\n" + body + "</skill>"}}})
	cx.codex("response_item", map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "The skill says: " + secret}}})
	rollout := cx.write(t, filepath.Join(root, "rollout-2025-09-01T10-00-00-0199.jsonl"))
	f.run("import", "codex", rollout)
	out = f.run("redact", importedSession(t, store, rollout), "--model", "openai/limited")
	for _, want := range []string{
		"│ <skill>\n  │ <name>release</name>\n  │ <path>" + skill + "</path>\n",
		"[Content from " + skill + ` filtered — trust tier "limited" does not have read access]`,
		"    derived from " + skill + "  — 1 span\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the limited tier's preview of the Codex session lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "TANGERINE") || strings.Contains(out, "push the tag") {
		t.Fatalf("the limited tier is sent the skill's text from Codex:\n%s", out)
	}
}
