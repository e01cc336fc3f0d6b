package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/sqlitecopy"
)

// Agent is the name the CLI and origin records use.
const Agent = "opencode"

// Source is the importers.Source of opencode's databases, JSON storage
// and exports; which one a file is, its content tells.
var Source = importers.Source{Agent: Agent, Companions: companions, Read: read}

// Prune names the folders of opencode's storage not to watch: its parts
// and messages, a folder per message and session (the session's own file
// is rewritten as it goes, which is what makes it due).
func Prune(dir string) bool {
	base := filepath.Base(dir)
	return (base == "part" || base == "message") && filepath.Base(filepath.Dir(dir)) == "storage"
}

// Match tells opencode's files under a folder: its database
// (opencode.db), and the session files of the JSON storage
// (storage/session/<project>/<id>.json) unless a database beside the
// storage holds them (1.2 migrated them into it).
func Match(path string) bool {
	if filepath.Ext(path) == ".db" {
		return strings.HasPrefix(filepath.Base(path), "opencode")
	}
	root, ok := storageRoot(path)
	if !ok {
		return false
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(root), "opencode.db"))
	return err != nil
}

// companions are the files beside file that are part of the source: a
// database's -wal, a stored session's messages and parts.
func companions(file string) []string {
	if root, ok := storageRoot(file); ok {
		return storageFiles(root, strings.TrimSuffix(filepath.Base(file), ".json"))
	}
	if filepath.Ext(file) == ".db" {
		return sqlitecopy.Companions(file)
	}
	return nil
}

func read(file string, paths *importers.Paths) (importers.Read, error) {
	var rd importers.Read
	f, err := os.Open(file)
	if err != nil {
		return rd, err
	}
	head := make([]byte, 16)
	n, _ := f.Read(head)
	f.Close()
	var convs []conversation
	switch {
	case bytes.HasPrefix(head[:n], []byte("SQLite format 3")):
		convs, err = readDB(file, &rd)
	case bytes.HasPrefix(bytes.TrimSpace(head[:n]), []byte("{")):
		var data []byte
		if data, err = os.ReadFile(file); err == nil {
			convs, err = readJSON(file, data, &rd)
		}
	default:
		return rd, errors.New("not an opencode database, stored session or export: is this the right file?")
	}
	if err != nil {
		return rd, err
	}
	for i := range convs {
		rd.Conversations = append(rd.Conversations, build(file, &convs[i], paths, &rd))
	}
	return rd, nil
}

// readJSON reads an export, or a stored session with its messages and
// parts.
func readJSON(file string, data []byte, rd *importers.Read) ([]conversation, error) {
	var doc struct {
		Info     *info             `json:"info"`
		Messages []json.RawMessage `json:"messages"`
		ID       string            `json:"id"`
	}
	if !decode(data, &doc) {
		first, _, _ := bytes.Cut(data, []byte{'\n'})
		if other := importers.LooksLike(first); other != "" {
			return nil, fmt.Errorf("looks like a %s transcript, not an opencode session: scrim import %s", other, strings.ToLower(strings.Fields(other)[0]))
		}
		return nil, errors.New("not an opencode export or stored session (unreadable JSON): is this the right file?")
	}
	switch {
	case doc.Info != nil && doc.Messages != nil:
		return []conversation{exported(doc.Info, doc.Messages, rd)}, nil
	case doc.ID != "":
		root, ok := storageRoot(file)
		if !ok {
			return nil, errors.New("a stored opencode session outside its storage folder (storage/session/<project>/): its messages cannot be found")
		}
		var s info
		decode(data, &s)
		return []conversation{stored(root, s, rd)}, nil
	}
	return nil, errors.New("not an opencode export or stored session (no info and messages): is this the right file?")
}

// exported reads an export's messages: [{info, parts}].
func exported(s *info, raws []json.RawMessage, rd *importers.Read) conversation {
	c := conversation{info: *s}
	for _, raw := range raws {
		rd.Records++
		var m struct {
			Info  json.RawMessage   `json:"info"`
			Parts []json.RawMessage `json:"parts"`
		}
		var msg message
		if !decode(raw, &m) || !decode(m.Info, &msg) || msg.Role == "" {
			rd.Skipped++
			continue
		}
		for _, p := range m.Parts {
			var pt part
			if decode(p, &pt) {
				msg.parts = append(msg.parts, pt)
			}
		}
		c.msgs = append(c.msgs, msg)
	}
	return c
}
