package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/internal/userdirs"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/codex"
)

// importer is one agent the import command knows.
type importer struct {
	factory importers.Factory
	folder  string // default folder, under the home folder
	match   func(name string) bool
}

var importerFor = map[string]importer{
	claude.Agent: {claude.New, filepath.Join(".claude", "projects"), func(n string) bool { return strings.HasSuffix(n, ".jsonl") }},
	codex.Agent:  {codex.New, filepath.Join(".codex", "sessions"), func(n string) bool { return strings.HasSuffix(n, ".jsonl") }},
}

func newImportCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "import claude|codex [PATH...]",
		Short: "Import Claude Code or Codex transcripts (files or folders, recursively)",
		Long: `Import Claude Code or Codex transcripts into the session store, recovering
which files each tool result's content came from.

PATH is a transcript file or a folder searched recursively for *.jsonl files;
without PATH, ~/.claude/projects or ~/.codex/sessions. Importing a file again
adds only the lines it gained since (after any messages added in scrim); a
file that was rewritten is imported afresh, replacing its old sessions only
where they hold nothing but what was imported: a session with messages added
in scrim is kept as it is. Each file prints one summary line.`,
		Args: usage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runImport(args[0], args[1:])
		},
	}
}

func (a *app) runImport(agent string, paths []string) error {
	imp, ok := importerFor[agent]
	if !ok {
		return usageError("unknown agent %q: use scrim import claude or scrim import codex", agent)
	}
	if len(paths) == 0 {
		home, err := userdirs.Home(a.lookupEnv)
		if err != nil {
			return fmt.Errorf("cannot find the home folder (%v); pass the transcripts' PATH", err)
		}
		paths = []string{filepath.Join(home, imp.folder)}
	}
	files, err := importers.Files(paths, imp.match)
	if err != nil {
		return fmt.Errorf("%v; pass a transcript file or folder", err)
	}
	if len(files) == 0 {
		return fmt.Errorf("no %s transcripts (*.jsonl) found in %s", agent, strings.Join(paths, ", "))
	}
	st, err := a.Store()
	if err != nil {
		return err
	}
	// Collect garbage sooner: an import makes short-lived copies of every
	// line, and the default would let the heap (mostly the store's memtable)
	// grow to twice what is live before collecting.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	failed := 0
	var total importers.Stats
	for _, f := range files {
		// A binary named by mistake would otherwise be read to its end and
		// "import" quietly as nothing.
		res, err := importers.Result{}, checkTranscriptText(f)
		if err == nil {
			res, err = importers.Import(st, agent, f, imp.factory)
		}
		if err != nil {
			if len(files) == 1 {
				return err // one file: its error is the one line
			}
			failed++
			fmt.Fprintf(a.stderr, "scrim: %s\n", oneLine(termsafe.Inert(err.Error())))
			continue
		}
		// File names are untrusted text: printed inert, on one line.
		fmt.Fprintln(a.stdout, oneLine(termsafe.Inert(res.String())))
		total.Messages += res.Messages
		total.Tagged += res.Tagged
		total.Unknown += res.Unknown
		total.Skipped += res.Skipped
	}
	if len(files) > 1 {
		fmt.Fprintf(a.stdout, "%d files: %d messages, %d tool results tagged, %d unknown-source results, %d skipped lines\n",
			len(files)-failed, total.Messages, total.Tagged, total.Unknown, total.Skipped)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files could not be imported (see above); fix or remove them and import again", failed, len(files))
	}
	return nil
}

// checkTranscriptText says so when a file is binary (a NUL byte in its first
// 8,000 bytes, git's rule): JSON lines never hold one.
func checkTranscriptText(path string) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	head := make([]byte, 8000)
	n, _ := io.ReadFull(file, head)
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return fmt.Errorf("%s looks binary (NUL byte), not a JSON-lines transcript: is this the right file?", path)
	}
	return nil
}
