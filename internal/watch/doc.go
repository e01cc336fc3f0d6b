// Package watch imports AI coding-agent transcripts while they are written:
// it watches folders (recursively, and folders that do not exist yet from
// their nearest existing parent) with fsnotify, and imports each *.jsonl
// file that appears or grows through the same importer as `scrim import`,
// once a burst of writes to it has settled; for agents whose history is a
// source read whole (Gemini CLI's session files, Crush's and opencode's
// databases), each file the agent's matcher takes, a database when its
// -wal is written. While the TUI is open it holds
// the session store, so this is how transcripts reach the store then.
//
// Each file's import is all or nothing (importers.Import), so stopping or
// killing the process mid-import leaves the store as `scrim import` would;
// what interrupted imports left behind is cleaned once, when the watcher
// starts. A half-written last line is left for the pass that follows the
// write that completes it.
package watch
