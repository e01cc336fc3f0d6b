package opencode

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/sqlitecopy"
)

// readDB reads the database of opencode 1.2 and later, from a copy: the
// session, message and part tables, whose data columns hold the same JSON
// the storage and exports do (the IDs are columns of their own).
func readDB(file string, rd *importers.Read) ([]conversation, error) {
	db, err := sqlitecopy.Open(file)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	for _, t := range []string{"session", "message", "part"} {
		cols, err := db.Columns(t)
		if err != nil {
			return nil, err
		}
		if !cols["id"] {
			if cols, _ := db.Columns("messages"); cols["parts"] {
				return nil, errors.New("a database of the Go opencode, whose layout Crush kept: scrim import crush " + file)
			}
			return nil, errors.New("not an opencode database (no session, message and part tables): is this the right file?")
		}
	}
	var convs []conversation
	index := map[string]int{}
	rows, err := db.Query("SELECT id, COALESCE(parent_id, ''), COALESCE(title, ''), COALESCE(directory, ''), COALESCE(time_created, 0) FROM session ORDER BY time_created, id")
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	for rows.Next() {
		var s info
		if err := rows.Scan(&s.ID, &s.ParentID, &s.Title, &s.Directory, &s.Time.Created); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read sessions: %w", err)
		}
		index[s.ID] = len(convs)
		convs = append(convs, conversation{info: s})
	}
	rows.Close()
	msgAt := map[string][2]int{} // message ID → conversation, message
	err = each(db, "SELECT id, session_id, CAST(data AS BLOB) FROM message ORDER BY session_id, time_created, id", func(id, sessionID string, data []byte) {
		rd.Records++
		ci, ok := index[sessionID]
		var m message
		if !ok || !decode(data, &m) || m.Role == "" {
			rd.Skipped++
			return
		}
		m.ID, m.SessionID = id, sessionID
		msgAt[id] = [2]int{ci, len(convs[ci].msgs)}
		convs[ci].msgs = append(convs[ci].msgs, m)
	})
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	err = each(db, "SELECT id, message_id, CAST(data AS BLOB) FROM part ORDER BY message_id, id", func(id, messageID string, data []byte) {
		at, ok := msgAt[messageID]
		var p part
		if !ok || !decode(data, &p) {
			return
		}
		p.ID = id
		m := &convs[at[0]].msgs[at[1]]
		m.parts = append(m.parts, p)
	})
	if err != nil {
		return nil, fmt.Errorf("read parts: %w", err)
	}
	return convs, nil
}

func each(db *sqlitecopy.DB, q string, fn func(a, b string, data []byte)) error {
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a, b sql.NullString
		var data []byte
		if err := rows.Scan(&a, &b, &data); err != nil {
			return err
		}
		fn(a.String, b.String, data)
	}
	return rows.Err()
}
