//go:build unix

package cli

import (
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
