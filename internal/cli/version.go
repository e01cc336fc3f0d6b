package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is scrim's module version and the VCS revision it was built from,
// as the Go toolchain recorded them: "v1.2.0", or for a build of a checkout
// "(devel) 314ae1b3c2d1 2026-12-01T15:27:00Z" with "+modified" when the tree
// had uncommitted changes.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) { // a pseudo-version names it already
		v += " " + rev[:min(12, len(rev))] + modified
		if at != "" {
			v += " " + at
		}
	}
	return v + " " + bi.GoVersion
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print scrim's version, the revision it was built from and its Go version (also --version)",
		Args:  usage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(a.stdout, "scrim "+version())
			return err
		},
	}
}
