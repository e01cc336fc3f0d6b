package opencode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scrim-dev/scrim/session/importers"
)

// storageRoot is the storage folder of a stored session's file,
// storage/session/<project>/<id>.json; ok is false for any other path.
func storageRoot(file string) (root string, ok bool) {
	if filepath.Ext(file) != ".json" {
		return "", false
	}
	project := filepath.Dir(file)
	sessions := filepath.Dir(project)
	if filepath.Base(sessions) != "session" || filepath.Base(filepath.Dir(sessions)) != "storage" {
		return "", false
	}
	return filepath.Dir(sessions), true
}

// messageFiles lists a stored session's message files, in ID order
// (opencode's IDs sort by time).
func messageFiles(root, sessionID string) []string {
	return jsonFiles(filepath.Join(root, "message", sessionID))
}

func partFiles(root, messageID string) []string {
	return jsonFiles(filepath.Join(root, "part", messageID))
}

func jsonFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out
}

// storageFiles are all the files a stored session is made of besides its
// own: its messages and their parts.
func storageFiles(root, sessionID string) []string {
	var out []string
	for _, m := range messageFiles(root, sessionID) {
		out = append(out, m)
		out = append(out, partFiles(root, strings.TrimSuffix(filepath.Base(m), ".json"))...)
	}
	return out
}

// stored reads a stored session's messages and parts.
func stored(root string, s info, rd *importers.Read) conversation {
	c := conversation{info: s}
	for _, f := range messageFiles(root, s.ID) {
		rd.Records++
		data, err := os.ReadFile(f)
		var msg message
		if err != nil || !decode(data, &msg) || msg.Role == "" {
			rd.Skipped++
			continue
		}
		if msg.ID == "" {
			msg.ID = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		for _, pf := range partFiles(root, msg.ID) {
			data, err := os.ReadFile(pf)
			var pt part
			if err == nil && decode(data, &pt) {
				msg.parts = append(msg.parts, pt)
			}
		}
		c.msgs = append(c.msgs, msg)
	}
	return c
}
