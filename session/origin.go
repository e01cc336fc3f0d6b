package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Origin records how far a transcript file has been imported, so that
// importing it again adds only what it gained since (or nothing). It is
// written in the same transaction as the import's session headers.
type Origin struct {
	File  string `json:"file"`  // canonical path of the transcript
	Agent string `json:"agent"` // claude, codex
	// Sessions maps the importer's session keys ("" is the main
	// conversation, others e.g. subagents) to scrim session IDs.
	Sessions map[string]string `json:"sessions"`
	Offset   int64             `json:"offset"` // bytes imported: whole lines only
	Lines    int64             `json:"lines"`  // lines imported
	// SHA256 is the hex digest of the file's first Offset bytes, in records
	// older scrims wrote: if they changed, the file was rewritten and is
	// imported afresh. Newer records have Head and Tail instead.
	SHA256 string `json:"sha256,omitempty"`
	// Head and Tail are the hex SHA-256 digests of the first and the last
	// (up to) 64 KiB of the file's first Offset bytes: a file that grew is
	// resumed when both still match, without reading all it held.
	Head string `json:"head,omitempty"`
	Tail string `json:"tail,omitempty"`
	// Size and ModTime (Unix nanoseconds) are the file's when the import
	// began: a file that still has both is unchanged, and is not opened.
	Size    int64 `json:"size,omitempty"`
	ModTime int64 `json:"modTime,omitempty"`
	// State is the importer's own continuation state (open tool calls…).
	State      json.RawMessage `json:"state,omitempty"`
	ImportedAt time.Time       `json:"importedAt"`
	// Counts is each session's message count when this import committed,
	// by session key: messages beyond it were added in scrim (a send, a
	// tool run), not imported. Added sums those, by key, over all the
	// imports of the file; AddedKnown says Added is complete (false for a
	// record that an older scrim wrote without counts).
	Counts     map[string]uint64 `json:"counts,omitempty"`
	Added      map[string]uint64 `json:"added,omitempty"`
	AddedKnown bool              `json:"addedKnown,omitempty"`
}

func originKey(file string) []byte { return []byte("o/" + file) }

func putOrigin(txn *badger.Txn, o *Origin) error {
	if o.File == "" {
		return errors.New("origin without a file")
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return txn.Set(originKey(o.File), b)
}

// Origin returns the import record of a transcript file (its canonical
// path); ok is false when the file was never imported.
func (s *Store) Origin(file string) (o Origin, ok bool, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(originKey(file))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		return s.value(item, func(v []byte) error { return json.Unmarshal(v, &o) })
	})
	if err != nil {
		return Origin{}, false, fmt.Errorf("read import record of %s: %w", file, err)
	}
	return o, ok, nil
}

// Origins lists all import records, in file order.
func (s *Store) Origins() ([]Origin, error) {
	var out []Origin
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte("o/")
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var o Origin
			if err := s.value(it.Item(), func(v []byte) error { return json.Unmarshal(v, &o) }); err != nil {
				continue // an unreadable record only costs a re-import
			}
			out = append(out, o)
		}
		return nil
	})
	return out, err
}

// PutOrigin writes a file's import record as it is (scrim check --repair
// copies them into a fresh store).
func (s *Store) PutOrigin(o *Origin) error {
	return s.db.Update(func(txn *badger.Txn) error { return putOrigin(txn, o) })
}
