package importers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/scrim-dev/scrim/session"
)

// A Source is an agent's history that is not a log to append to: a JSON
// document rewritten on every turn (Gemini CLI), a database (Crush,
// opencode). It is read whole on every import; what makes the import
// incremental is per conversation: one whose messages are those imported
// before, with more after them, gets only the new ones.
type Source struct {
	Agent string
	// Companions are the files beside file whose changes change the
	// source too: a database's -wal. nil for a plain file.
	Companions func(file string) []string
	// Read reads file whole. It returns an error, not an empty read, for a
	// file that is not of its format.
	Read func(file string, paths *Paths) (Read, error)
}

// ErrIncomplete is what a Source's Read returns for a file caught while
// the agent rewrites it: the import leaves it for the next one.
var ErrIncomplete = errors.New("the file is being written")

// Read is what a Source holds.
type Read struct {
	Conversations []Conversation
	Records       int // records read (messages, rows, lines)
	Skipped       int // records skipped: malformed or of an unknown kind
}

// A Conversation is one session of a source, its messages built whole.
type Conversation struct {
	// Key tells the conversation apart within its source, across imports:
	// "" for a file's only one, the agent's session ID in a database.
	Key    string
	Header session.Header
	// Sub marks a sub-agent's conversation (counted as such).
	Sub      bool
	Messages []*session.Message
}

// sourceState is what the import record keeps of a source: the files'
// sizes and times, to tell an unchanged source by a stat, and per
// conversation what was imported.
type sourceState struct {
	Files    []fileStamp              `json:"files"`
	Sessions map[string]*convImported `json:"sessions"`
}

type fileStamp struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"modTime"` // 0: too recent to be trusted
}

// convImported is what an import wrote of one conversation: its first N
// messages, whose digest (notes left out) is Digest, and the notes it put
// on them (a call's "no result" note goes when the result comes).
type convImported struct {
	N      int     `json:"n"`
	Digest string  `json:"digest"`
	Notes  []noted `json:"notes,omitempty"`
	Title  string  `json:"title,omitempty"` // the title the import gave the session
}

type noted struct {
	Index int    `json:"i"`
	Seq   uint64 `json:"seq"`
	Note  string `json:"note"`
}

func stamps(files []string) ([]fileStamp, error) {
	out := make([]fileStamp, len(files))
	for i, f := range files {
		fi, err := os.Stat(f)
		if os.IsNotExist(err) && i > 0 {
			continue // a -wal that is not there (yet)
		}
		if err != nil {
			return nil, err
		}
		out[i] = fileStamp{fi.Size(), fi.ModTime().UnixNano()}
		if time.Since(fi.ModTime()) < racyWindow {
			out[i].ModTime = 0 // see racyWindow: checked on content next time
		}
	}
	return out, nil
}

// ImportSource imports file, a source of src's format, as one atomic unit,
// like Import does a transcript: a source unchanged since the last import
// costs a stat; of a changed one, each conversation that only grew gets its
// new messages (after any added in scrim), one that changed otherwise is
// imported into a new session, replacing the old one only when it holds
// nothing but what was imported; one that is gone from the source is kept.
func ImportSource(st *session.Store, src Source, file string, paths *Paths) (Result, error) {
	res := Result{Agent: src.Agent}
	canon, err := importPath(file)
	if err != nil {
		return res, err
	}
	res.File = canon
	files := []string{canon}
	if src.Companions != nil {
		files = append(files, src.Companions(canon)...)
	}
	now, err := stamps(files)
	if err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	rec, seen, err := st.Origin(canon)
	if err != nil {
		return res, err
	}
	var old sourceState
	if seen && rec.Agent == src.Agent {
		_ = json.Unmarshal(rec.State, &old) // unreadable: everything is imported afresh
	} else {
		rec = session.Origin{}
	}
	if old.Sessions == nil {
		old.Sessions = map[string]*convImported{}
	}
	if seen && rec.Agent == src.Agent && slices.Equal(old.Files, now) && trusted(now) && sessionsExist(st, &rec) {
		res.Unchanged, res.SessionID = true, rec.Sessions[""]
		return res, nil
	}
	if paths == nil {
		paths = NewPaths()
	}
	read, err := src.Read(canon, paths)
	if errors.Is(err, ErrIncomplete) {
		res.Incomplete = true // nothing recorded: the next import reads it again
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	res.Lines, res.Skipped = read.Records, read.Skipped
	b, err := st.BeginBulk()
	if err != nil {
		return res, err
	}
	defer b.Cancel()
	sink := &Sink{bulk: b, sessions: map[string]string{}, opened: map[string]bool{}, headers: map[string]session.Header{}, stats: &res.Stats, paths: paths}
	added, addedKnown := map[string]uint64{}, true
	if rec.Agent != "" {
		added, addedKnown = addedInScrim(st, &rec)
	}
	state := sourceState{Files: now, Sessions: map[string]*convImported{}}
	changed := false
	for _, c := range read.Conversations {
		imp, grew, err := importConversation(st, sink, &rec, old.Sessions[c.Key], c, added, addedKnown, &res)
		if err != nil {
			return res, fmt.Errorf("import %s: %w", file, err)
		}
		changed = changed || grew
		if imp != nil {
			state.Sessions[c.Key] = imp
		}
	}
	// Conversations gone from the source stay, as they are, and known.
	inSource := map[string]bool{}
	for _, c := range read.Conversations {
		inSource[c.Key] = true
	}
	for k, id := range rec.Sessions {
		if !inSource[k] {
			if _, err := st.Get(id); err == nil {
				sink.sessions[k] = id
				if o := old.Sessions[k]; o != nil {
					state.Sessions[k] = o
				}
			}
		}
	}
	if err := sink.Err(); err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	res.Subsessions = 0
	for _, c := range read.Conversations {
		if sink.opened[c.Key] {
			res.Sessions++
			if c.Sub {
				res.Subsessions++
			}
		}
	}
	res.SessionID = sink.sessions[""]
	res.Unchanged = seen && !changed && !res.Replaced
	raw, err := json.Marshal(&state)
	if err != nil {
		return res, err
	}
	o := &session.Origin{
		File: canon, Agent: src.Agent, Sessions: sink.sessions, State: raw,
		Size: now[0].Size, ModTime: now[0].ModTime,
		Counts: map[string]uint64{}, Added: map[string]uint64{}, AddedKnown: addedKnown,
	}
	for k, id := range sink.sessions {
		if n, ok := b.Count(id); ok {
			o.Counts[k] = n
		} else if h, err := st.Get(id); err == nil {
			o.Counts[k] = h.Count
		}
		if rec.Sessions[k] == id {
			o.Added[k] = added[k] // the same session: what was added in scrim stays counted
		}
	}
	if err := b.Commit(o); err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	return res, nil
}

// trusted reports whether every stamp has a time old enough to be trusted.
func trusted(s []fileStamp) bool {
	for _, f := range s {
		if f.Size > 0 && f.ModTime == 0 {
			return false
		}
	}
	return true
}

// importConversation writes what of c is new. grew reports whether it
// wrote or revised anything.
func importConversation(st *session.Store, sink *Sink, rec *session.Origin, prev *convImported, c Conversation, added map[string]uint64, addedKnown bool, res *Result) (*convImported, bool, error) {
	msgs := c.Messages
	oldID, had := rec.Sessions[c.Key]
	if had {
		if _, err := st.Get(oldID); err != nil {
			had = false // deleted since
		}
	}
	if had && prev != nil {
		if imp, grew, ok := continueConversation(sink, oldID, prev, c, res); ok {
			if grew && c.Key == "" && len(msgs) > prev.N {
				res.After = added[""]
			}
			return imp, grew, nil
		}
	}
	if had {
		res.Replaced = true
		if !addedKnown || added[c.Key] > 0 {
			res.Kept = append(res.Kept, Kept{ID: oldID, Added: added[c.Key], Known: addedKnown})
		} else if err := sink.bulk.Replace(oldID); err != nil {
			return nil, false, err
		}
	}
	if len(msgs) == 0 {
		return nil, false, nil
	}
	sink.Open(c.Key, c.Header)
	imp := &convImported{N: len(msgs), Digest: digestOf(msgs), Title: c.Header.Title}
	for i, m := range msgs {
		sink.Add(c.Key, m)
		if m.Meta.Note != "" {
			imp.Notes = append(imp.Notes, noted{i, m.Seq, m.Meta.Note})
		}
	}
	return imp, true, nil
}

// continueConversation imports c into session id when what was imported of
// it before is still the start of c: only the messages after it are added,
// and notes on the earlier ones revised. ok is false when c changed
// otherwise.
func continueConversation(sink *Sink, id string, prev *convImported, c Conversation, res *Result) (imp *convImported, grew, ok bool) {
	msgs := c.Messages
	if prev.N > len(msgs) || digestOf(msgs[:prev.N]) != prev.Digest {
		return nil, false, false
	}
	seqOf := map[int]noted{}
	for _, n := range prev.Notes {
		seqOf[n.Index] = n
	}
	imp = &convImported{N: len(msgs), Digest: digestOf(msgs), Title: c.Header.Title}
	var revise []noted
	for i := 0; i < prev.N; i++ {
		note := msgs[i].Meta.Note
		n, known := seqOf[i]
		if !known && note != "" {
			return nil, false, false // a note where none was: nothing to find the message by
		}
		if known && n.Note != note {
			revise = append(revise, noted{i, n.Seq, note})
		}
		if note != "" {
			imp.Notes = append(imp.Notes, noted{i, n.Seq, note})
		}
	}
	sink.sessions[c.Key] = id
	for _, r := range revise {
		note := r.Note
		sink.Revise(id, r.Seq, func(m *session.Message) { m.Meta.Note = note })
	}
	// A title the agent gave since (Gemini CLI's summary, Crush's) replaces
	// the one the import gave, unless the session was renamed since.
	retitled := c.Header.Title != "" && c.Header.Title != prev.Title
	if retitled {
		was, now := prev.Title, c.Header.Title
		sink.Open(c.Key, c.Header)
		sink.EditHeader(c.Key, func(h *session.Header) {
			if h.Title == was {
				h.Title = now
			}
		})
	}
	if prev.N < len(msgs) {
		res.Resumed = true
		sink.Open(c.Key, c.Header)
		for i := prev.N; i < len(msgs); i++ {
			sink.Add(c.Key, msgs[i])
			if msgs[i].Meta.Note != "" {
				imp.Notes = append(imp.Notes, noted{i, msgs[i].Seq, msgs[i].Meta.Note})
			}
		}
	}
	return imp, retitled || len(revise) > 0 || prev.N < len(msgs), true
}

// digestOf hashes messages as they are stored, notes left out (they change
// when a call's result comes, and are revised in place).
func digestOf(msgs []*session.Message) string {
	h := sha256.New()
	var buf []byte
	for _, m := range msgs {
		c := *m
		c.Meta.Note, c.SessionID, c.Seq, c.ID = "", "", 0, ""
		var err error
		buf, err = session.AppendMessageJSON(buf[:0], &c)
		if err != nil {
			buf = append(buf[:0], '?')
		}
		fmt.Fprintf(h, "%d\n", len(buf))
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}
