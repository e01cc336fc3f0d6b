package importers

import "strings"

// unpairedPrefix starts the note on an assistant message whose tool call got
// no result in the transcript.
const unpairedPrefix = "no result recorded for tool call "

// UnpairedNote is that note for the call id to tool name.
func UnpairedNote(id, name string) string { return unpairedPrefix + id + " (" + name + ")" }

// AddNote adds a remark to a message's note.
func AddNote(note, add string) string {
	if note == "" {
		return add
	}
	return note + "; " + add
}

// DropUnpaired takes the unpaired-call note for call id out of a message's
// note: its result turned up after all.
func DropUnpaired(note, id string) string {
	var keep []string
	for _, n := range strings.Split(note, "; ") {
		if n != "" && !strings.HasPrefix(n, unpairedPrefix+id+" ") {
			keep = append(keep, n)
		}
	}
	return strings.Join(keep, "; ")
}
