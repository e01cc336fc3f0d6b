package search_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/dgraph-io/badger/v4"

	"github.com/scrim-dev/scrim/search"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// BenchmarkScanOrIndex is the measurement behind scanning instead of
// keeping an index (README, Performance: search). On a store imported from
// the generated tree (SCRIM_BENCH_TREE_FILES files, default 300) it times:
//   - scan: search.Run for text that is nowhere, so every record is read;
//   - write: the store's records written again into a fresh Badger with a
//     write batch, as an import writes them;
//   - write+index: the same, with a word index in the same batch, the
//     cheapest index kept by the store itself (one key per distinct word of
//     3+ letters per message: x/<word>/<session>/<seq>); a trigram index,
//     which substring queries need, has several times more keys;
//     it also reports reading one word's postings from that index.
//
// Both writes read the records the same way, so the difference is the
// index's cost at import.
func BenchmarkScanOrIndex(b *testing.B) {
	files := 300
	if n, err := strconv.Atoi(os.Getenv("SCRIM_BENCH_TREE_FILES")); err == nil {
		files = n
	}
	root := b.TempDir()
	tree, err := importtest.WriteClaudeTree(filepath.Join(root, "projects"), importtest.TreeOptions{Files: files})
	if err != nil {
		b.Fatal(err)
	}
	st, err := session.Open(filepath.Join(root, "store"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	paths := make([]string, len(tree))
	for i, f := range tree {
		paths[i] = f.Path
	}
	if err := importers.ImportFiles(st, claude.Agent, paths, claude.New, 2, func(int, importers.Result, error) {}); err != nil {
		b.Fatal(err)
	}
	heads, _, err := st.List()
	if err != nil {
		b.Fatal(err)
	}

	b.Run("scan", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			stats, err := search.Run(context.Background(), st, search.Query{Text: "zq-no-such-text"}, func(search.Hit) error { return nil })
			if err != nil || stats.Decoded != 0 {
				b.Fatalf("%v, %d decoded", err, stats.Decoded)
			}
			b.ReportMetric(float64(stats.Messages), "msgs")
		}
	})
	for _, index := range []bool{false, true} {
		name := "write"
		if index {
			name = "write+index"
		}
		b.Run(name, func(b *testing.B) {
			var postings, msgs int
			for i := 0; i < b.N; i++ {
				dir := filepath.Join(b.TempDir(), "copy")
				db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil).WithMemTableSize(16 << 20).WithValueThreshold(1 << 10).WithCompactL0OnClose(false))
				if err != nil {
					b.Fatal(err)
				}
				wb := db.NewWriteBatch()
				postings, msgs = 0, 0
				for _, h := range heads {
					_, err := st.ScanStored(h.ID, func(seq uint64, v []byte) error {
						msgs++
						key := binary.BigEndian.AppendUint64([]byte("m/"+h.ID+"/"), seq)
						if err := wb.Set(key, append([]byte(nil), v...)); err != nil {
							return err
						}
						if !index {
							return nil
						}
						var m session.Message
						if err := session.DecodeStored(h.ID, seq, v, &m); err != nil {
							return err
						}
						for w := range words(&m) {
							postings++
							k := binary.BigEndian.AppendUint64([]byte("x/"+w+"/"+h.ID+"/"), seq)
							if err := wb.Set(k, nil); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				if err := wb.Flush(); err != nil {
					b.Fatal(err)
				}
				if index && i == b.N-1 {
					b.StopTimer()
					b.ReportMetric(float64(lookup(b, db, "wrong").Microseconds()), "lookup-µs")
					b.StartTimer()
				}
				db.Close()
			}
			b.ReportMetric(float64(msgs), "msgs")
			b.ReportMetric(float64(postings)/float64(max(msgs, 1)), "postings/msg")
		})
	}
}

// lookup is how long reading word's postings takes (the first of them and
// all are one read: a prefix of the index).
func lookup(b *testing.B, db *badger.DB, word string) time.Duration {
	start := time.Now()
	n := 0
	err := db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = []byte("x/" + word + "/")
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil || n == 0 {
		b.Fatalf("lookup %s: %v, %d postings", word, err, n)
	}
	return time.Since(start)
}

// words are the distinct lower-cased words of 3 to 64 letters, digits or
// underscores in m's text and tool inputs.
func words(m *session.Message) map[string]struct{} {
	out := map[string]struct{}{}
	add := func(s string) {
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
			if len(w) >= 3 && len(w) <= 64 {
				out[strings.ToLower(w)] = struct{}{}
			}
		}
	}
	for _, p := range m.Parts {
		add(p.Text)
		add(string(p.Input))
	}
	return out
}
