// Package session owns scrim's data: the message schema, whose optional
// Meta.SourcePaths says which canonical files a message's content came from,
// and the Badger store that keeps sessions across runs, crashes and reloads.
// Importers of other agents' transcripts live below it, in importers/.
package session
