package importers

import (
	"github.com/scrim-dev/scrim/session"
)

// Sink is where a parser puts what it finds: messages of the file's main
// session (key "") and of any further sessions it opens (subagents). Store
// errors are kept, not returned: the driver stops at the first one.
type Sink struct {
	bulk     *session.Bulk
	sessions map[string]string // key → session ID, from earlier imports and this one
	opened   map[string]bool   // keys registered with bulk in this import
	paths    *Paths            // shared by the files of a run
	headers  map[string]session.Header
	stats    *Stats
	err      error
}

// Paths is the path resolver of this import, shared by the files of a run
// (they name the same files again and again).
func (k *Sink) Paths() *Paths {
	if k.paths == nil {
		k.paths = NewPaths()
	}
	return k.paths
}

// Open declares session key with the header it gets if it is new (title,
// origin, work folder). Calling it again for a known key does nothing, so
// parsers may call it on every line.
func (k *Sink) Open(key string, h session.Header) {
	if _, ok := k.headers[key]; ok {
		return
	}
	k.headers[key] = h
}

// id returns the session ID of key, registering it with the bulk on first use.
func (k *Sink) id(key string) string {
	if k.opened[key] {
		return k.sessions[key]
	}
	if k.err != nil {
		return ""
	}
	if id, ok := k.sessions[key]; ok {
		if _, err := k.bulk.Continue(id); err != nil {
			k.err = err
			return ""
		}
	} else {
		h := k.headers[key]
		id, err := k.bulk.NewSession(h)
		if err != nil {
			k.err = err
			return ""
		}
		k.sessions[key] = id
		if key != "" {
			k.stats.Subsessions++
		}
	}
	k.opened[key] = true
	return k.sessions[key]
}

// Reserve keeps the next place in session key for a message that will be
// Put later (an assistant turn still being assembled). It returns the
// session ID and Seq to set on the message.
func (k *Sink) Reserve(key string) (id string, seq uint64) {
	id = k.id(key)
	if id == "" {
		return "", 0
	}
	return id, k.bulk.Reserve(id)
}

// Put writes a message whose SessionID and Seq came from Reserve.
func (k *Sink) Put(m *session.Message) {
	if k.err != nil || m.SessionID == "" {
		return
	}
	if err := k.bulk.Put(m); err != nil {
		k.err = err
		return
	}
	k.count(m)
}

// Add appends a message to session key.
func (k *Sink) Add(key string, m *session.Message) {
	m.SessionID, m.Seq = k.Reserve(key)
	k.Put(m)
}

func (k *Sink) count(m *session.Message) {
	k.stats.Messages++
	if m.Role == session.RoleTool {
		switch {
		case m.Meta.SourcePaths != nil:
			k.stats.Tagged++
		case !m.Meta.NoFiles: // a result known to hold no file content is neither
			k.stats.Unknown++
		}
	}
}

// Revise changes a message already Put (in this import or an earlier one)
// when the import commits.
func (k *Sink) Revise(id string, seq uint64, fn func(*session.Message)) {
	k.bulk.Revise(id, seq, fn)
}

// EditHeader changes session key's header when the import commits.
func (k *Sink) EditHeader(key string, fn func(*session.Header)) {
	if id := k.id(key); id != "" {
		k.bulk.EditHeader(id, fn)
	}
}

// Known reports whether session key exists (from an earlier import or this one).
func (k *Sink) Known(key string) bool {
	_, ok := k.sessions[key]
	return ok
}

// Err is the first store error.
func (k *Sink) Err() error { return k.err }
