package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/userdirs"
	"github.com/scrim-dev/scrim/session"
)

func newCheckCmd(a *app) *cobra.Command {
	var repair bool
	cmd := &cobra.Command{
		Use:   "check [DIR] [--repair]",
		Short: "Verify every checksum and record of a session store; --repair copies what can be read into a fresh store",
		Long: `Check reads every key of the session store (DIR, else --store, $SCRIM_STORE or
the default), verifying the checksums of its tables and values and scrim's own
invariants (each session's messages against its header, the recency index,
import records), and prints what is damaged. It never changes the store: it
reads a snapshot made beside it. Exit 0 when the store is whole, 1 when not.

--repair copies every readable session into a fresh store beside the old one,
DIR.repaired-TIME: whole sessions exactly, damaged ones with what can be read
and an event saying what could not. The old store is left as it is.`,
		Args: usage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := a.StoreDir()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if dir, err = userdirs.Expand(args[0], a.lookupEnv); err != nil {
					return err
				}
			}
			// Stopped (Ctrl-C, SIGTERM), a check leaves no snapshot (a
			// copy of every table: 450 MB at a million messages) and a
			// repair no half-made store beside the store.
			now := a.now()
			defer onInterrupt(func() {
				session.RemoveCheckSnapshots(dir)
				if repair {
					session.RemoveRepaired(dir, now)
				}
			})()
			rep, err := session.Check(dir)
			if err != nil {
				return err
			}
			writeCheck(a, rep)
			if repair {
				r, err := session.Repair(dir, now)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "repaired into %s: %d sessions whole, %d partly (an event in each says what is missing), %d lost; %d import records\n",
					inertLine(r.To), len(r.Whole), len(r.Partial), len(r.Lost), r.Origins)
				for _, id := range r.Partial {
					fmt.Fprintf(a.stdout, "  partly: %s\n", id)
				}
				for _, id := range r.Lost {
					fmt.Fprintf(a.stdout, "  lost:   %s\n", id)
				}
				fmt.Fprintf(a.stdout, "use it with --store %s; %s itself is unchanged\n", inertLine(r.To), inertLine(dir))
				return nil
			}
			if rep.Damaged() {
				return fmt.Errorf("session store %s is damaged (%d problems above): scrim check --repair %s copies what can be read into a fresh store", dir, len(rep.Problems), dir)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "copy every readable session into a fresh store beside this one")
	return cmd
}

func writeCheck(a *app, rep *session.CheckReport) {
	msgs := 0
	for _, s := range rep.Sessions {
		msgs += len(s.Readable)
	}
	fmt.Fprintf(a.stdout, "session store %s\n", inertLine(rep.Dir))
	if rep.Tables != "" {
		fmt.Fprintf(a.stdout, "  tables: %s\n", inertLine(rep.Tables))
	}
	fmt.Fprintf(a.stdout, "  %d sessions, %d messages read, %d import records\n", len(rep.Sessions), msgs, rep.Origins)
	if !rep.Damaged() {
		fmt.Fprintln(a.stdout, "  ok: every checksum matches and every session's messages are all there")
		return
	}
	fmt.Fprintf(a.stdout, "  damaged (%d):\n", len(rep.Problems))
	for _, p := range rep.Problems {
		fmt.Fprintf(a.stdout, "    %s\n", inertLine(p))
	}
}
