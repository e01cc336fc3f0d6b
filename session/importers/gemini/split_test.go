package gemini

import (
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// The framing run_shell_command and read_file put around content is cut
// from it, across versions; what is not framing stays output.
func TestSplit(t *testing.T) {
	for _, c := range []struct{ text, head, body, tail string }{
		{"Output: KEY=1\nProcess Group PGID: 991", "Output: ", "KEY=1", "\nProcess Group PGID: 991"},
		{"Output: a\nb\nExit Code: 1\nProcess Group PGID: 7", "Output: ", "a\nb", "\nExit Code: 1\nProcess Group PGID: 7"},
		{"Command: cat .env\nDirectory: (root)\nStdout: KEY=1\nStderr: (empty)\nError: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 12",
			"Command: cat .env\nDirectory: (root)\nStdout: ", "KEY=1\nStderr: (empty)", "\nError: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 12"},
		{"Exit Code: 1", "", "Exit Code: 1", ""}, // a whole output that looks like framing stays output
		{"plain", "", "plain", ""},
	} {
		head, body, tail := splitShell(c.text)
		if head != c.head || body != c.body || tail != c.tail {
			t.Errorf("splitShell(%q) = %q, %q, %q; want %q, %q, %q", c.text, head, body, tail, c.head, c.body, c.tail)
		}
	}
	head, body := splitTruncated("\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-2 of 9 total lines.\nAction: …\n\n--- FILE CONTENT (truncated) ---\na\nb")
	if body != "a\nb" || head == "" {
		t.Errorf("splitTruncated: %q, %q", head, body)
	}
	if head, body := splitTruncated("IMPORTANT: not a header\na"); head != "" || body == "" {
		t.Errorf("splitTruncated of a file that starts like the header: %q, %q", head, body)
	}
}

// A line of a file that looks like read_many_files' heading does not end
// that file's part; text after a heading-like line in the same text stays
// the file's too.
func TestManyHeadingsInContent(t *testing.T) {
	b := &builder{paths: importers.NewPaths(), workspace: []string{"/w"}}
	m := &session.Message{Role: session.RoleTool}
	b.many(m, []string{"Tool execution succeeded.", "--- /w/.env ---\n\nA=1\n\n--- /w/README.md ---\nB=2\n\n--- notes ---\nC=3\n\n--- End of content ---\nD=4\n", "--- /w/b.txt ---\n\nE=5\n"})
	if len(m.Parts) != 3 || m.Parts[1].SourcePath != "/w/.env" || m.Parts[0].SourcePath != "" || m.Parts[2].SourcePath != "/w/b.txt" {
		for _, p := range m.Parts {
			t.Logf("%q from %q", p.Text, p.SourcePath)
		}
		t.Fatalf("parts: %d", len(m.Parts))
	}
	// One text, as older versions wrote it: headings after blank lines.
	m = &session.Message{Role: session.RoleTool}
	b.many(m, []string{"--- /w/.env ---\n\nA=1\n\n--- /w/b.txt ---\n\nE=5\n\n--- End of content ---\nD=4\n"})
	if len(m.Parts) != 2 || m.Parts[0].SourcePath != "/w/.env" || m.Parts[1].SourcePath != "/w/b.txt" || !strings.Contains(m.Parts[1].Text, "D=4") {
		for _, p := range m.Parts {
			t.Logf("%q from %q", p.Text, p.SourcePath)
		}
		t.Fatalf("one text: %d parts", len(m.Parts))
	}
}
