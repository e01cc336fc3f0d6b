// Package ui is scrim's Bubble Tea program: the session list, the model picker
// and the aligned "stored | sent" panes that show what the active model would
// be sent. It also owns making untrusted text inert for any terminal output.
package ui
