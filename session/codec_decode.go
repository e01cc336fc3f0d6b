package session

import (
	"encoding/json"
)

// The shapes of stored records, read by decoder (codec_json.go).

var messageKeys = objectKeys("id", "sessionId", "seq", "role", "model", "tool", "toolCallId", "isError", "parts", "meta", "createdAt")

// roles and kinds are the values a record's role and its parts' kinds
// take: decoded as these strings, not copied.
var (
	roles = []string{string(RoleUser), string(RoleAssistant), string(RoleTool), string(RoleSystem), string(RoleEvent)}
	kinds = []string{string(PartText), string(PartToolCall), string(PartToolResult)}
)

// message reads a whole record in the shape marshalMessage writes.
func (d *decoder) message(m *Message) error {
	err := d.object(messageKeys, func(k int) error {
		var err error
		var s string
		switch k {
		case 0:
			m.ID, err = d.short()
		case 1:
			m.SessionID, err = d.known([]string{d.sid})
		case 2:
			m.Seq, err = d.uint()
		case 3:
			s, err = d.known(roles)
			m.Role = Role(s)
		case 4:
			m.Model, err = d.short()
		case 5:
			m.Tool, err = d.short()
		case 6:
			m.ToolCallID, err = d.short()
		case 7:
			m.IsError, err = d.bool()
		case 8:
			m.Parts, err = d.parts()
		case 9:
			err = d.meta(&m.Meta, m.Parts)
		case 10:
			err = d.timeInto(&m.CreatedAt)
		}
		return err
	})
	if err != nil {
		return err
	}
	d.ws()
	if d.i != len(d.data) {
		return errSlow
	}
	return nil
}

var partKeys = objectKeys("kind", "text", "sourcePath", "redacted", "callId", "name", "input", "filtered")

// parts reads the parts array; null is json.Marshal's nil slice.
func (d *decoder) parts() ([]Part, error) {
	if rest := d.data[d.i:]; len(rest) >= 4 && string(rest[:4]) == "null" {
		d.i += 4 // json.Marshal's nil slice
		return nil, nil
	}
	if !d.next('[') {
		return nil, errSlow
	}
	if d.next(']') {
		return []Part{}, nil
	}
	// Decoded into room on the stack for the few most messages have, then
	// copied into a slice of their number. Grown by append, a message of
	// 30 parts (a search's hits, each from its file) was given room for
	// 63, and the parts were a seventh of what the 20k benchmark session's
	// first preview allocated; counted first (bytes.Count of each part's
	// opening), the whole rest of every record was searched once more.
	var room [8]Part
	parts := room[:0]
	for {
		// Decoded in place: a Part of its own that the closure captures
		// would be moved to the heap, 136 bytes for every part decoded,
		// then copied in (at a million messages, a seventh of what a
		// first count allocates).
		parts = append(parts, Part{})
		p := &parts[len(parts)-1]
		err := d.object(partKeys, func(k int) error {
			var err error
			var s string
			switch k {
			case 0:
				s, err = d.known(kinds)
				p.Kind = PartKind(s)
			case 1:
				p.Text, err = d.text()
			case 2:
				p.SourcePath, err = d.str()
			case 3:
				p.Redacted, err = d.bool()
			case 4:
				p.CallID, err = d.short()
			case 5:
				p.Name, err = d.short()
			case 6:
				p.Input, err = d.raw()
			case 7:
				// Never stored: only a redacted copy's notes come this way.
				var raw []byte
				if raw, err = d.raw(); err == nil {
					var f []Filtered // not &p.Filtered, which would move the parts' room to the heap
					err = json.Unmarshal(raw, &f)
					p.Filtered = f
				}
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if d.next(',') {
			continue
		}
		if d.next(']') {
			var out []Part
			if d.shared != nil {
				out = d.shared.partsOf(len(parts))
			} else {
				out = make([]Part, len(parts))
			}
			copy(out, parts)
			return out, nil
		}
		return nil, errSlow
	}
}

var metaKeys = objectKeys("sourcePaths", "note", "unknownSource", "noFiles")

// meta reads a record's meta; a source path that one of its parts names
// too (a tool result of one file) is decoded as that part's.
func (d *decoder) meta(m *Meta, parts []Part) error {
	return d.object(metaKeys, func(k int) error {
		var err error
		switch k {
		case 0:
			m.SourcePaths, err = d.paths(parts)
		case 1:
			m.Note, err = d.str()
		case 2:
			m.UnknownSource, err = d.str()
		case 3:
			m.NoFiles, err = d.bool()
		}
		return err
	})
}

var headerKeys = objectKeys("id", "title", "createdAt", "updatedAt", "lastModel", "messages", "origin", "workDir")

// header reads a session header in the shape json.Marshal writes.
func (d *decoder) header(h *Header) error {
	err := d.object(headerKeys, func(k int) error {
		var err error
		switch k {
		case 0:
			h.ID, err = d.str()
		case 1:
			h.Title, err = d.str()
		case 2:
			err = d.timeInto(&h.CreatedAt)
		case 3:
			err = d.timeInto(&h.UpdatedAt)
		case 4:
			h.LastModel, err = d.str()
		case 5:
			h.Count, err = d.uint()
		case 6:
			h.Origin, err = d.str()
		case 7:
			h.WorkDir, err = d.str()
		}
		return err
	})
	if err != nil {
		return err
	}
	d.ws()
	if d.i != len(d.data) {
		return errSlow
	}
	return nil
}
