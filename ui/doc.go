// Package ui is scrim's Bubble Tea program: the session list, the model picker
// and the aligned "stored | sent" panes that show, beside each stored message,
// exactly what the active model would be sent (runner.Build's output). It also
// owns making untrusted text inert for any terminal output (Inert).
//
// The root Model (app.go) routes keys (input.go; every binding in keys.go) and
// does no I/O: loads, builds and writes are tea.Cmds whose results carry the
// session (and model) they belong to. A session is never loaded whole:
// pages.go reads pages of messages around the viewport and builds what is sent
// of them, transcript.go renders each message's rows once per width, layout
// and model, scroll.go moves an anchor (message, line) so that no total height
// is ever needed, and counts.go counts redactions over the whole session in
// the background. styles.go is the palette; wrap.go lays text out in a pane.
package ui
