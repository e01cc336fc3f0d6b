package crush

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/sqlitecopy"
)

// Agent is the name the CLI and origin records use.
const Agent = "crush"

// Source is the importers.Source of Crush databases.
var Source = importers.Source{Agent: Agent, Companions: sqlitecopy.Companions, Read: read}

// Match tells Crush databases under a folder: .crush/crush.db, and
// .opencode/opencode.db of the Go opencode Crush grew from (the same
// layout).
func Match(path string) bool {
	switch filepath.Base(filepath.Dir(path)) {
	case ".crush":
		return filepath.Base(path) == "crush.db"
	case ".opencode":
		return filepath.Base(path) == "opencode.db"
	}
	return false
}

type sessionRow struct {
	id, parent, title, cwd string
	created                int64
}

type messageRow struct {
	id, session, role, model, provider string
	parts                              []byte
	created                            int64
}

func read(file string, paths *importers.Paths) (importers.Read, error) {
	db, err := sqlitecopy.Open(file)
	if errors.Is(err, sqlitecopy.ErrNotSQLite) {
		return importers.Read{}, errors.New("not a Crush database (not SQLite): is this the right file?")
	}
	if err != nil {
		return importers.Read{}, err
	}
	defer db.Close()
	sessCols, err := db.Columns("sessions")
	if err != nil {
		return importers.Read{}, err
	}
	msgCols, err := db.Columns("messages")
	if err != nil {
		return importers.Read{}, err
	}
	if !sessCols["id"] || !msgCols["parts"] || !msgCols["session_id"] {
		return importers.Read{}, errors.New("not a Crush database (no sessions and messages tables): is this the right file?")
	}
	sessions, err := readSessions(db, sessCols)
	if err != nil {
		return importers.Read{}, fmt.Errorf("read sessions: %w", err)
	}
	msgs, err := readMessages(db, msgCols)
	if err != nil {
		return importers.Read{}, fmt.Errorf("read messages: %w", err)
	}
	return build(file, sessions, msgs, paths), nil
}

// build makes the sessions of a database out of its rows. The project is
// the folder .crush/ is in: where Crush ran, unless a session records its
// own folder.
func build(file string, sessions []sessionRow, msgs []messageRow, paths *importers.Paths) importers.Read {
	var rd importers.Read
	project := filepath.Dir(filepath.Dir(file))
	bySession := map[string][]messageRow{}
	for _, m := range msgs {
		bySession[m.session] = append(bySession[m.session], m)
	}
	for _, s := range sessions {
		cwd := s.cwd
		if cwd == "" {
			cwd = project
		}
		b := &builder{paths: paths, cwd: cwd, calls: map[string]*call{}, jobs: map[string]job{}}
		for _, m := range bySession[s.id] {
			rd.Records++
			if !b.message(m) {
				rd.Skipped++
			}
		}
		b.finish()
		title := s.title
		if title == "" {
			title = b.title
		}
		h := session.Header{Title: importers.Title(title), WorkDir: cwd, CreatedAt: unix(s.created),
			Origin: "imported from crush: " + file + " (session " + s.id + ")"}
		if s.parent != "" {
			h.Title = "subagent: " + h.Title
			h.Origin += " (subagent of " + s.parent + ")"
		}
		rd.Conversations = append(rd.Conversations, importers.Conversation{Key: s.id, Header: h, Sub: s.parent != "", Messages: b.msgs})
	}
	return rd
}

func readSessions(db *sqlitecopy.DB, cols map[string]bool) ([]sessionRow, error) {
	q := "SELECT id, " + col(cols, "parent_session_id") + ", " + col(cols, "title") + ", " + col(cols, "workspace_cwd") + ", " + intCol(cols, "created_at") + " FROM sessions ORDER BY " + intCol(cols, "created_at") + ", rowid"
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sessionRow
	for rows.Next() {
		var s sessionRow
		var parent, title, cwd sql.NullString
		if err := rows.Scan(&s.id, &parent, &title, &cwd, &s.created); err != nil {
			return nil, err
		}
		s.parent, s.title, s.cwd = parent.String, title.String, cwd.String
		out = append(out, s)
	}
	return out, rows.Err()
}

func readMessages(db *sqlitecopy.DB, cols map[string]bool) ([]messageRow, error) {
	q := "SELECT id, session_id, " + col(cols, "role") + ", CAST(parts AS BLOB), " + col(cols, "model") + ", " + col(cols, "provider") + ", " + intCol(cols, "created_at") + " FROM messages ORDER BY " + intCol(cols, "created_at") + ", rowid"
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []messageRow
	for rows.Next() {
		var m messageRow
		var role, model, provider sql.NullString
		if err := rows.Scan(&m.id, &m.session, &role, &m.parts, &model, &provider, &m.created); err != nil {
			return nil, err
		}
		m.role, m.model, m.provider = role.String, model.String, provider.String
		out = append(out, m)
	}
	return out, rows.Err()
}

// col is a text column, or NULL where this version has none.
func col(cols map[string]bool, name string) string {
	if cols[name] {
		return "CAST(" + name + " AS TEXT)"
	}
	return "NULL"
}

func intCol(cols map[string]bool, name string) string {
	if cols[name] {
		return "COALESCE(CAST(" + name + " AS INTEGER), 0)"
	}
	return "0"
}

// unix reads a Crush time: Unix seconds (milliseconds in some rows).
func unix(n int64) time.Time {
	switch {
	case n <= 0:
		return time.Time{}
	case n > 1e12:
		return time.UnixMilli(n).UTC()
	}
	return time.Unix(n, 0).UTC()
}

// part is one {type, data} of a message's parts.
type part struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// data holds the fields of every part kind the importer reads.
type data struct {
	Text string `json:"text"`
	// tool_call
	ID    string `json:"id"`
	Name  string `json:"name"`
	Input string `json:"input"`
	// tool_result
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
	Metadata   string `json:"metadata"`
	IsError    bool   `json:"is_error"`
	// binary (an attachment)
	Path     string `json:"Path"`
	MIMEType string `json:"MIMEType"`
	Bytes    []byte `json:"Data"`
	// finish
	Reason string `json:"reason"`
}

func decode(raw []byte, v any) bool {
	err := json.Unmarshal(raw, v)
	var ute *json.UnmarshalTypeError
	return err == nil || errors.As(err, &ute)
}

// modelID is a message's model as a scrim model ID.
func modelID(provider, model string) string {
	if provider == "" && strings.Contains(model, "/") {
		return model
	}
	return importers.ModelID(provider, model)
}
