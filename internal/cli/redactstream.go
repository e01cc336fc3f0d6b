package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
)

// redactBatch is how many messages a streaming command reads, redacts and
// writes at a time: enough for redact.History to share a batch out across
// two cores (it splits from 2,048 messages a core), few enough that a batch
// and its redacted copy are a few megabytes whatever the session's length.
const redactBatch = 4096

// streamRedacted redacts the stored session h for model a batch at a time,
// in order, exactly as runner.Build redacts it whole, and hands each batch
// to fn: stored, as read (events included), and sent, what model may be sent
// of it. It returns the report of the whole session, how many messages were
// read, and the records that could not be decoded (left out, as the store
// leaves them out of a whole load).
//
// For a tier with derived = "redact", the session is read once before (twice
// when fingerprints turn up after content they must be checked against) to
// gather what the tier withholds of all of it; for secrets = "redact", each
// batch's credentials come from the store (secrets.Lookup), scanned and
// kept there where they are not. Each pass reads the session up to the
// message count h had when the command started: a message appended
// meanwhile is not half seen.
func streamRedacted(st *session.Store, pol *policy.Policy, h session.Header, model string, fn func(stored, sent []session.Message) error) (redact.Report, int, []session.DecodeError, error) {
	s := redact.NewStream(model, pol)
	if s.Gathers() {
		if _, err := readBatches(st, h, func(b []session.Message, _ bool) error { s.Gather(b); return nil }); err != nil {
			return redact.Report{}, 0, nil, err
		}
		if s.Stale() {
			if _, err := readBatches(st, h, func(b []session.Message, last bool) error { s.Recheck(b, last); return nil }); err != nil {
				return redact.Report{}, 0, nil, err
			}
		}
	}
	read := 0
	bad, err := readBatches(st, h, func(b []session.Message, _ bool) error {
		ctx, err := runner.Context(st, h.ID, b, model, pol)
		if err != nil {
			return err
		}
		read += len(b)
		return fn(b, s.Next(b, ctx.Findings))
	})
	if err != nil {
		return redact.Report{}, 0, nil, err
	}
	return s.Report(), read, bad, nil
}

// readBatches streams session h, messages 1 to h.Count, to fn in batches of
// redactBatch (the last one shorter, perhaps empty; last says which it is).
// fn must not keep a batch: its room is reused for the next.
func readBatches(st *session.Store, h session.Header, fn func(b []session.Message, last bool) error) ([]session.DecodeError, error) {
	batch := make([]session.Message, 0, min(h.Count, redactBatch))
	bad, err := st.Scan(h.ID, 1, h.Count, func(m *session.Message) error {
		batch = append(batch, *m)
		if len(batch) < redactBatch {
			return nil
		}
		err := fn(batch, false)
		clear(batch) // nothing of the batch outlives it
		batch = batch[:0]
		return err
	})
	if err != nil {
		return bad, err
	}
	return bad, fn(batch, true)
}

// spool holds what a streaming command writes only at its end, after
// figures known only then: in memory up to spoolMemory, then in a temporary
// file, so that it stays bounded however long the session.
type spool struct {
	mem  bytes.Buffer
	file *os.File
	w    *bufio.Writer
}

const spoolMemory = 4 << 20

func (s *spool) Write(p []byte) (int, error) {
	if s.w != nil {
		return s.w.Write(p)
	}
	if s.mem.Len()+len(p) <= spoolMemory {
		return s.mem.Write(p)
	}
	f, err := os.CreateTemp("", "scrim-spool-*")
	if err != nil {
		return 0, err
	}
	// Gone from the folder at once where the system allows it: nothing is
	// left behind, however the command ends.
	os.Remove(f.Name())
	s.file, s.w = f, bufio.NewWriterSize(f, 64<<10)
	if _, err := s.mem.WriteTo(s.w); err != nil {
		return 0, err
	}
	s.mem = bytes.Buffer{}
	return s.w.Write(p)
}

// WriteTo writes everything spooled to w.
func (s *spool) WriteTo(w io.Writer) (int64, error) {
	if s.file == nil {
		return s.mem.WriteTo(w)
	}
	if err := s.w.Flush(); err != nil {
		return 0, err
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, s.file)
}

// Close removes the temporary file, if there is one.
func (s *spool) Close() error {
	if s.file == nil {
		return nil
	}
	s.file.Close()
	err := os.Remove(s.file.Name())
	if os.IsNotExist(err) {
		err = nil
	}
	return err
}
