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
	"time"

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
	// Incomplete: a source caught while it was being rewritten (a JSON
	// document cut short) was left for the next import.
	Incomplete bool
	// Kept lists the sessions of a rewritten file that hold messages added
	// in scrim: they are kept as they are, and the file is imported into
	// new sessions.
	Kept []Kept
	// After is, for a grown file, how many messages added in scrim its main
	// session holds after the last imported one: the new lines follow them.
	After uint64
	// Sessions is, for a source of many sessions (a database), how many
	// of them the import wrote to.
	Sessions int

	waiting bool // committed with a group, which has not committed yet
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
	case r.Incomplete:
		b.WriteString("being written (incomplete JSON), left for the next import")
		return b.String()
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
	fmt.Fprintf(&b, "%s, %s tagged, %s, %s",
		plural(uint64(r.Messages), "message", "messages"), plural(uint64(r.Tagged), "tool result", "tool results"),
		plural(uint64(r.Unknown), "unknown-source result", "unknown-source results"), plural(uint64(r.Skipped), "skipped line", "skipped lines"))
	if r.Subsessions > 0 {
		fmt.Fprintf(&b, ", %s", plural(uint64(r.Subsessions), "subagent session", "subagent sessions"))
	}
	if r.SessionID != "" {
		fmt.Fprintf(&b, " → session %s", r.SessionID)
	} else if r.Sessions > 0 {
		fmt.Fprintf(&b, " → %s", plural(uint64(r.Sessions), "session", "sessions"))
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
	return importFile(st, agent, file, newParser, nil, false, nil, nil)
}

// importPath is file as an import records it: absolute, and canonical when
// it can be made so.
func importPath(file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", fmt.Errorf("import %s: %w", file, err)
	}
	if canon, err := policy.Canonical(abs); err == nil {
		return canon, nil
	}
	return abs, nil
}

// importFile is Import with the path resolver shared by a run's files (nil:
// a new one); checkBinary refuses a file that is not text (the import
// command's files, which a user may have named by mistake); a small import
// commits with g when g is not nil (res.waiting: it is visible once g
// commits).
func importFile(st *session.Store, agent, file string, newParser Factory, paths *Paths, checkBinary bool, g *session.Group, read func(n int64)) (Result, error) {
	res := Result{Agent: agent}
	canon, err := importPath(file)
	if err != nil {
		return res, err
	}
	res.File = canon
	fi, err := os.Stat(canon)
	if err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	rec, seen, err := st.Origin(canon)
	if err != nil {
		return res, err
	}
	// A file whose size and modification time are those the last import
	// saw is unchanged: it costs a stat, not a read.
	if seen && rec.Agent == agent && rec.Size == fi.Size() && rec.ModTime == fi.ModTime().UnixNano() && rec.Size > 0 && sessionsExist(st, &rec) {
		res.Unchanged, res.SessionID = true, rec.Sessions[""]
		return res, nil
	}
	f, err := os.Open(canon)
	if err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	defer f.Close()
	if checkBinary {
		if err := checkText(f, file, agent); err != nil {
			return res, err
		}
	}
	b, err := st.BeginBulk()
	if err != nil {
		return res, err
	}
	defer b.Cancel()
	if paths == nil {
		paths = NewPaths()
	}
	sink := &Sink{bulk: b, sessions: map[string]string{}, opened: map[string]bool{}, headers: map[string]session.Header{}, stats: &res.Stats, paths: paths}
	var state json.RawMessage
	added := map[string]uint64{} // by session key: messages added in scrim, all told
	addedKnown := true
	var h hash.Hash // only to resume a record an older scrim wrote
	if seen && rec.Head == "" {
		h = sha256.New()
	}
	if seen {
		resume, err := canResume(st, f, fi, &rec, agent, h)
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
	var r io.Reader = f
	if read != nil {
		r = &countingReader{r: f, report: read}
	}
	lr := newLineReader(r, nil)
	if err := readLines(lr, p, sink, &res); err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	p.Finish()
	if err := sink.Err(); err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	res.Skipped += lr.tooLong
	res.SessionID = sink.sessions[""]
	newState, err := p.State()
	if err != nil {
		return res, fmt.Errorf("import %s: save parser state: %w", file, err)
	}
	o := &session.Origin{
		File: canon, Agent: agent, Sessions: sink.sessions,
		Offset: rec.Offset + lr.consumed, Lines: rec.Lines + int64(res.Lines),
		State: newState, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(),
		Counts: map[string]uint64{}, Added: added, AddedKnown: addedKnown,
	}
	if time.Since(fi.ModTime()) < racyWindow {
		// Changed just now: a write in the same tick of the file system's
		// clock could leave size and time as they are. Not trusted: the
		// next import checks the file's ends instead.
		o.ModTime = 0
	}
	if o.Head, o.Tail, err = headTail(f, o.Offset); err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	if res.Resumed && lr.consumed == 0 {
		// Nothing new (a touch, or an unfinished last line): only the
		// record's size and time change, so that the next run is a stat.
		res.Unchanged, res.Resumed = true, false
	}
	for k, id := range sink.sessions {
		if n, ok := b.Count(id); ok {
			o.Counts[k] = n
		} else if h, err := st.Get(id); err == nil {
			o.Counts[k] = h.Count // not written to now: as it stands, additions counted above
		}
	}
	if g != nil {
		res.waiting, err = g.Add(b, o)
	} else {
		err = b.Commit(o)
	}
	if err != nil {
		return res, fmt.Errorf("import %s: %w", file, err)
	}
	return res, nil
}

// sessionsExist reports whether every session of rec is still in the store.
func sessionsExist(st *session.Store, rec *session.Origin) bool {
	for _, id := range rec.Sessions {
		if _, err := st.Get(id); err != nil {
			return false
		}
	}
	return true
}

// utf8BOM is the byte order mark an editor on Windows may put at the start
// of a file it saves: JSON lines have none, but a transcript saved so is
// still one.
var utf8BOM = []byte("\ufeff")

// checkText says so when a file is binary (a NUL byte in its first 8,000
// bytes, git's rule): JSON lines never hold one. A binary named by mistake
// would otherwise be read to its end and "import" quietly as nothing.
func checkText(f *os.File, name, agent string) error {
	head := make([]byte, 64<<10)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("import %s: %w", name, err)
	}
	head = head[:n]
	if bytes.IndexByte(head[:min(n, 8000)], 0) >= 0 {
		return fmt.Errorf("%s looks binary (NUL byte), not a JSON-lines transcript: is this the right file?", name)
	}
	// The first whole line tells a transcript from another file, and one
	// agent's transcript from the other's: imported by the wrong importer,
	// every line would be skipped and the import "succeed" as nothing.
	first, _, whole := bytes.Cut(bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n"), []byte{'\n'})
	if !whole || len(bytes.TrimSpace(first)) == 0 {
		return nil // empty, or a first line longer than we look at
	}
	if !json.Valid(first) {
		return fmt.Errorf("%s is not a JSON-lines transcript (its first line is not JSON): is this the right file?", name)
	}
	if other := sniffAgent(first); other != "" && other != agent {
		return fmt.Errorf("%s looks like a %s transcript, not a %s one: scrim import %s %s", name, agentName[other], agentName[agent], other, name)
	}
	return nil
}

// agentName is how messages name each agent's transcripts.
var agentName = map[string]string{"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}

// LooksLike names the agent whose JSON-lines transcript line is ("Claude
// Code", "Codex", "Gemini CLI"), for a source's error when it is handed
// another agent's; "" when it cannot tell.
func LooksLike(line []byte) string { return agentName[sniffAgent(line)] }

// sniffAgent says whose transcript line is: Gemini CLI's header names a
// projectHash; Codex rollout lines carry their content in a payload under
// a timestamp and a type; Claude Code lines carry a sessionId, or a
// summary. "" when it cannot tell.
func sniffAgent(line []byte) string {
	var l struct {
		Type        string          `json:"type"`
		Payload     json.RawMessage `json:"payload"`
		SessionID   string          `json:"sessionId"`
		Message     json.RawMessage `json:"message"`
		ProjectHash string          `json:"projectHash"`
	}
	if json.Unmarshal(line, &l) != nil {
		return ""
	}
	switch {
	case len(l.ProjectHash) > 0 || l.Type == "gemini":
		return "gemini" // a Gemini CLI session's header or message record
	case len(l.Payload) > 0 && l.SessionID == "" && len(l.Message) == 0:
		return "codex"
	case l.SessionID != "" || len(l.Message) > 0 || l.Type == "summary":
		return "claude"
	}
	return ""
}

// racyWindow is how recent a modification time must be not to be trusted
// to tell changes apart (file systems stamp times at a coarse tick; git
// calls this racy).
const racyWindow = 2 * time.Second

// edge is how much of each end of a file's imported part Head and Tail hash.
const edge = 64 << 10

// headTail hashes the first and the last edge bytes of f's first n bytes.
func headTail(f *os.File, n int64) (head, tail string, err error) {
	sum := func(off, size int64) (string, error) {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, off, size)); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	if head, err = sum(0, min(n, edge)); err != nil {
		return "", "", err
	}
	tail, err = sum(max(0, n-edge), min(n, edge))
	return head, tail, err
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
// that part. A record with Head and Tail is checked on them: the file has
// at least Offset bytes, and its first and last 64 KiB of them are those
// imported. That catches what agents do to a transcript (Claude Code
// rewrites it on /rewind and compaction: its end, or all of it, changes),
// not a change in the middle that keeps both ends and the length (see
// docs/sessions.md). A record an older scrim wrote is checked on the digest
// of all of it, written into h.
func canResume(st *session.Store, f *os.File, fi os.FileInfo, rec *session.Origin, agent string, h hash.Hash) (bool, error) {
	if rec.Agent != agent || !sessionsExist(st, rec) || fi.Size() < rec.Offset {
		return false, nil
	}
	if rec.Head != "" {
		head, tail, err := headTail(f, rec.Offset)
		if err != nil || head != rec.Head || tail != rec.Tail {
			return false, err
		}
		_, err = f.Seek(rec.Offset, io.SeekStart)
		return err == nil, err
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
		if res.Lines == 0 {
			line = bytes.TrimPrefix(line, utf8BOM) // only a file's first line can start with one
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

// countingReader tells report of the bytes read through it, a mebibyte or
// more at a time, and the rest when the read ends.
type countingReader struct {
	r      io.Reader
	n      int64 // read and not yet reported
	report func(n int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n >= 1<<20 || err != nil && c.n > 0 {
		c.report(c.n)
		c.n = 0
	}
	return n, err
}
