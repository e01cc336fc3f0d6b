package importers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// Parser turns an agent's transcript lines into messages.
type Parser interface {
	// Line handles one line (without its newline). It returns false when the
	// line was skipped: malformed, or of a kind the parser does not know.
	Line(line []byte) bool
	// Finish ends this import: held messages are written, calls still without
	// a result are marked.
	Finish()
	// State is what the parser needs to continue the file when it grows.
	State() (json.RawMessage, error)
}

// Factory makes a parser for file that writes to sink. state is the State of
// the previous import of the same file (nil for a first import).
type Factory func(sink *Sink, file string, state json.RawMessage) (Parser, error)

// Stats counts what one file's import did.
type Stats struct {
	Messages    int // messages written
	Tagged      int // tool results with sourcePaths
	Unknown     int // tool results of unknown source
	Skipped     int // lines skipped: malformed, unknown or too long
	Lines       int // lines read
	Subsessions int // subagent sessions created
}

// Result is one file's import.
type Result struct {
	File      string // canonical path
	Agent     string
	SessionID string // main session ("" when the file had no messages)
	Stats
	Unchanged bool // nothing new since the last import
	Resumed   bool // a grown file: only its new lines were imported
	Replaced  bool // the file was rewritten: its old sessions were replaced (but Kept)
	Pending   bool // an incomplete last line was left for the next import
	// Kept lists the sessions of a rewritten file that hold messages added
	// in scrim: they are kept as they are, and the file is imported into
	// new sessions.
	Kept []Kept
	// After is, for a grown file, how many messages added in scrim its main
	// session holds after the last imported one: the new lines follow them.
	After uint64
}

// Kept is a session that an import did not replace, and why.
type Kept struct {
	ID    string
	Added uint64 // messages added in scrim
	Known bool   // false: an older scrim imported it and did not count
}

// String is the summary line printed per file.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", r.File)
	switch {
	case r.Unchanged:
		b.WriteString("unchanged since the last import")
		if r.SessionID != "" {
			fmt.Fprintf(&b, " (session %s)", r.SessionID)
		}
		return b.String()
	case r.Resumed && r.After > 0:
		fmt.Fprintf(&b, "grown: appended after the %s added in scrim since the last import: ", plural(r.After, "message", "messages"))
	case r.Resumed:
		b.WriteString("grown: ")
	case r.Replaced && len(r.Kept) > 0:
		b.WriteString("changed since the last import; imported as a new session: ")
	case r.Replaced:
		b.WriteString("changed or deleted since the last import, re-imported: ")
	}
	fmt.Fprintf(&b, "%d messages, %d tool results tagged, %d unknown-source results, %d skipped lines",
		r.Messages, r.Tagged, r.Unknown, r.Skipped)
	if r.Subsessions > 0 {
		fmt.Fprintf(&b, ", %d subagent sessions", r.Subsessions)
	}
	if r.SessionID != "" {
		fmt.Fprintf(&b, " → session %s", r.SessionID)
	}
	if r.Pending {
		b.WriteString(" (last line incomplete, left for the next import)")
	}
	for _, k := range r.Kept {
		if k.Known {
			fmt.Fprintf(&b, "; %s, which has %s added in scrim, is kept", k.ID, plural(k.Added, "message", "messages"))
		} else {
			fmt.Fprintf(&b, "; %s, which may hold messages added in scrim (an older scrim imported it), is kept", k.ID)
		}
	}
	return b.String()
}

func plural(n uint64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Import imports one transcript file as one atomic unit: all of what it
// adds becomes visible at once, or nothing does. A file imported before is
// resumed after its last imported line when its imported part is unchanged
// (after any messages added in scrim since), and re-imported into fresh
// sessions when it was rewritten. A rewrite replaces the old sessions only
// when they hold nothing but what an import wrote: a session with messages
// added in scrim (or that an older scrim imported without counting) is kept.
// Nothing a user wrote is ever deleted by an import.
func Import(st *session.Store, agent, file string, newParser Factory) (Result, error) {
	res := Result{Agent: agent}
	abs, err := filepath.Abs(file)
	if err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	canon, err := policy.Canonical(abs)
	if err != nil {
		canon = abs
	}
	res.File = canon
	f, err := os.Open(canon)
	if err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	defer f.Close()
	rec, seen, err := st.Origin(canon)
	if err != nil {
		return res, err
	}
	b, err := st.BeginBulk()
	if err != nil {
		return res, err
	}
	defer b.Cancel()
	h := sha256.New()
	sink := &Sink{bulk: b, sessions: map[string]string{}, opened: map[string]bool{}, headers: map[string]session.Header{}, stats: &res.Stats}
	var state json.RawMessage
	added := map[string]uint64{} // by session key: messages added in scrim, all told
	addedKnown := true
	if seen {
		resume, err := canResume(st, f, &rec, agent, h)
		if err != nil {
			return res, fmt.Errorf("import %s: %w", file, err)
		}
		added, addedKnown = addedInScrim(st, &rec)
		if resume {
			res.Resumed, state = true, rec.State
			res.After = added[""] - rec.Added[""]
			for k, id := range rec.Sessions {
				sink.sessions[k] = id
			}
		} else {
			res.Replaced = true
			for _, k := range sortedKeys(rec.Sessions) {
				id := rec.Sessions[k]
				if _, err := st.Get(id); err != nil {
					continue // deleted since
				}
				if !addedKnown || added[k] > 0 {
					res.Kept = append(res.Kept, Kept{ID: id, Added: added[k], Known: addedKnown})
					continue
				}
				if err := b.Replace(id); err != nil {
					return res, err
				}
			}
			added, addedKnown = map[string]uint64{}, true
			h.Reset()
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return res, err
			}
			rec = session.Origin{}
		}
	}
	p, err := newParser(sink, canon, state)
	if err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	lr := newLineReader(f, h)
	if err := readLines(lr, p, sink, &res); err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	p.Finish()
	if err := sink.Err(); err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	res.Skipped += lr.tooLong
	res.SessionID = sink.sessions[""]
	if res.Resumed && lr.consumed == 0 {
		res.Unchanged, res.Resumed = true, false
		return res, nil
	}
	newState, err := p.State()
	if err != nil {
		return res, fmt.Errorf("import %s: save parser state: %w", file, err)
	}
	o := &session.Origin{
		File: canon, Agent: agent, Sessions: sink.sessions,
		Offset: rec.Offset + lr.consumed, Lines: rec.Lines + int64(res.Lines),
		SHA256: hex.EncodeToString(h.Sum(nil)), State: newState,
		Counts: map[string]uint64{}, Added: added, AddedKnown: addedKnown,
	}
	for k, id := range sink.sessions {
		if n, ok := b.Count(id); ok {
			o.Counts[k] = n
		} else if h, err := st.Get(id); err == nil {
			o.Counts[k] = h.Count // not written to now: as it stands, additions counted above
		}
	}
	if err := b.Commit(o); err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	return res, nil
}

// addedInScrim counts, by session key, the messages added in scrim to the
// sessions of rec: those counted before, and those beyond the count the
// last import left. known is false when rec does not say (an older scrim
// wrote it): then any session may hold some.
func addedInScrim(st *session.Store, rec *session.Origin) (added map[string]uint64, known bool) {
	added = map[string]uint64{}
	for k, v := range rec.Added {
		added[k] = v
	}
	for k, id := range rec.Sessions {
		h, err := st.Get(id)
		if err != nil {
			continue
		}
		if n, ok := rec.Counts[k]; ok && h.Count > n {
			added[k] += h.Count - n
		}
	}
	return added, rec.AddedKnown && rec.Counts != nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// canResume checks that the part of f imported before is unchanged, by the
// same importer, and its sessions still exist. On true, f is positioned after
// that part and h holds its hash state.
func canResume(st *session.Store, f *os.File, rec *session.Origin, agent string, h hash.Hash) (bool, error) {
	if rec.Agent != agent {
		return false, nil
	}
	for _, id := range rec.Sessions {
		if _, err := st.Get(id); err != nil {
			return false, nil // deleted since: import afresh
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() < rec.Offset {
		return false, nil
	}
	if _, err := io.CopyN(h, f, rec.Offset); err != nil {
		return false, err
	}
	return hex.EncodeToString(h.Sum(nil)) == rec.SHA256, nil
}

func readLines(lr *lineReader, p Parser, sink *Sink, res *Result) error {
	for {
		line, complete, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !complete {
			// The agent may still be writing this line: take it only if it is
			// whole JSON; otherwise the next import reads it again.
			if !json.Valid(line) {
				res.Pending = len(bytes.TrimSpace(line)) > 0
				return nil
			}
			lr.consumeTail(line)
		}
		if line == nil { // an over-long line, skipped by the reader
			res.Lines++
			continue
		}
		res.Lines++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !p.Line(line) {
			res.Skipped++
		}
		if err := sink.Err(); err != nil {
			return err
		}
	}
}
