package session

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// ticking returns a clock that advances 1 ms per reading, in UTC so that
// times survive a JSON round trip unchanged.
func ticking() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

func openAt(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	s.Now = ticking()
	t.Cleanup(func() { s.Close() })
	return s
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	return openAt(t, t.TempDir())
}

func reopen(t *testing.T, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return openAt(t, s.Dir())
}

func create(t *testing.T, s *Store, h Header) Header {
	t.Helper()
	h, err := s.Create(h)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return h
}

func textMsg(role Role, text string) *Message {
	return &Message{Role: role, Parts: []Part{{Kind: PartText, Text: text}}}
}

// allKeys lists every key in the store, message keys shown with their Seq.
func allKeys(t *testing.T, s *Store) []string {
	t.Helper()
	var keys []string
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := string(it.Item().Key())
			switch {
			case strings.HasPrefix(k, "m/"):
				k = fmt.Sprintf("%s#%d", k[:len(k)-8], binary.BigEndian.Uint64([]byte(k[len(k)-8:])))
			case strings.HasPrefix(k, "u/"):
				k = "u/…/" + k[len("u/")+9:]
			}
			keys = append(keys, k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func setRaw(t *testing.T, s *Store, key, val []byte) {
	t.Helper()
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(key, val) }); err != nil {
		t.Fatal(err)
	}
}

func TestSourcePathsRoundTrip(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "round trip", WorkDir: "/work"})
	at := time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)
	msgs := []*Message{
		textMsg(RoleUser, "read a.go and grep for TODO"),
		{Role: RoleAssistant, Model: "anthropic/claude-sonnet-4-5", Parts: []Part{
			{Kind: PartText, Text: "Reading."},
			{Kind: PartToolCall, CallID: "c1", Name: "read", Input: json.RawMessage(`{"path":"/src/a.go"}`)}}},
		{Role: RoleTool, Tool: "read", ToolCallID: "c1", Model: "anthropic/claude-sonnet-4-5",
			Parts: []Part{{Kind: PartToolResult, Text: "1\tpackage a\n", SourcePath: "/src/a.go"}},
			Meta:  Meta{SourcePaths: []string{"/src/a.go"}}},
		{Role: RoleTool, Tool: "grep", ToolCallID: "c2", Parts: []Part{
			{Kind: PartToolResult, Text: "/src/b.go:3:// TODO", SourcePath: "/src/b.go"},
			{Kind: PartToolResult, Text: "/src/a.go:9:// TODO", SourcePath: "/src/a.go"},
			{Kind: PartToolResult, Text: "/src/b.go:7:// TODO", SourcePath: "/src/b.go"}},
			Meta: Meta{SourcePaths: []string{"/src/b.go", "/src/a.go"}}},
		{Role: RoleTool, Tool: "bash", ToolCallID: "c3", IsError: true, Parts: []Part{{Kind: PartToolResult, Text: "exit 1"}}},
		{Role: RoleUser, CreatedAt: at, Parts: []Part{{Kind: PartText, Text: "imported: both files, not split"}},
			Meta: Meta{SourcePaths: []string{"/src/a.go", "/etc/hosts"}, Note: "imported"}},
		{Role: RoleEvent, Parts: []Part{{Kind: PartText, Text: "model switched — ünïcödé ✓"}}},
		{Role: RoleSystem}, // no parts at all
	}
	if err := s.Append(h.ID, msgs[:3]...); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendBulk(h.ID, msgs[3:]); err != nil {
		t.Fatal(err)
	}

	s = reopen(t, s)
	got, bad, err := s.Messages(h.ID)
	if err != nil || len(bad) != 0 {
		t.Fatalf("Messages: %v %v", err, bad)
	}
	if len(got) != len(msgs) {
		t.Fatalf("got %d messages, want %d", len(got), len(msgs))
	}
	for i, m := range msgs {
		if !reflect.DeepEqual(got[i], *m) {
			t.Errorf("message %d after reopen:\n got %+v\nwant %+v", i+1, got[i], *m)
		}
	}
	for _, i := range []int{0, 1, 4, 6, 7} {
		if got[i].Meta.SourcePaths != nil {
			t.Errorf("message %d: absent sourcePaths came back as %#v, want nil", i+1, got[i].Meta.SourcePaths)
		}
	}
	if !got[5].CreatedAt.Equal(at) {
		t.Errorf("given CreatedAt not kept: %v", got[5].CreatedAt)
	}
	// The stored record itself omits the field.
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(msgKey(h.ID, 1))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if strings.Contains(string(v), "sourcePaths") {
				return fmt.Errorf("record of a message without sourcePaths mentions them: %s", v)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAppendRejectsInvalidWithoutWriting(t *testing.T) {
	bad := map[string]*Message{
		"empty non-nil sourcePaths": {Role: RoleTool, Meta: Meta{SourcePaths: []string{}}},
		"relative sourcePath":       {Role: RoleTool, Meta: Meta{SourcePaths: []string{"a.go"}}},
		"parts disagree":            {Role: RoleTool, Parts: []Part{{Kind: PartText, SourcePath: "/a"}}, Meta: Meta{SourcePaths: []string{"/b"}}},
		"redaction placeholder":     {Role: RoleTool, Parts: []Part{{Kind: PartText, Text: "[Content from /a filtered]", Redacted: true}}},
		"unknown role":              {Role: "bot"},
		"tool input not JSON":       {Role: RoleAssistant, Parts: []Part{{Kind: PartToolCall, Input: json.RawMessage("{")}}},
	}
	for name, m := range bad {
		for _, bulk := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bulk=%v", name, bulk), func(t *testing.T) {
				s := openTemp(t)
				h := create(t, s, Header{Title: "t"})
				before := allKeys(t, s)
				m := *m
				batch := []*Message{textMsg(RoleUser, "fine"), &m, textMsg(RoleUser, "also fine")}
				var err error
				if bulk {
					err = s.AppendBulk(h.ID, batch)
				} else {
					err = s.Append(h.ID, batch...)
				}
				if err == nil || !strings.Contains(err.Error(), "message 2 of 3") {
					t.Fatalf("append: %v, want an error naming message 2 of 3", err)
				}
				if after := allKeys(t, s); !reflect.DeepEqual(after, before) {
					t.Fatalf("keys changed by a rejected append:\nbefore %q\nafter  %q", before, after)
				}
				if got, _ := s.Get(h.ID); got.Count != 0 || !got.UpdatedAt.Equal(h.UpdatedAt) {
					t.Fatalf("header changed: %+v", got)
				}
			})
		}
	}
}

func TestSeqAssignment(t *testing.T) {
	s := openTemp(t)
	a := create(t, s, Header{Title: "a"})
	b := create(t, s, Header{Title: "b"})
	if err := s.Append(a.ID, textMsg(RoleUser, "1"), textMsg(RoleAssistant, "2")); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(b.ID, textMsg(RoleUser, "b1")); err != nil {
		t.Fatal(err)
	}
	m3 := &Message{Role: RoleAssistant, Model: "ollama/llama3", Parts: []Part{{Kind: PartText, Text: "3"}}}
	if err := s.Append(a.ID, m3); err != nil {
		t.Fatal(err)
	}
	if m3.Seq != 3 || m3.SessionID != a.ID || m3.ID != a.ID+"-3" || m3.CreatedAt.IsZero() {
		t.Fatalf("store-assigned fields: %+v", m3)
	}
	bulk := make([]*Message, 10)
	for i := range bulk {
		bulk[i] = textMsg(RoleTool, fmt.Sprint(4+i))
	}
	bulk[9].ID = "given-id"
	bulk[9].Role, bulk[9].Model = RoleAssistant, "anthropic/claude-opus-4"
	if err := s.AppendBulk(a.ID, bulk); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(a.ID); err != nil { // nothing to append is not an error
		t.Fatal(err)
	}
	got, _, err := s.Messages(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range got {
		if m.Seq != uint64(i+1) || m.Text() != fmt.Sprint(i+1) {
			t.Fatalf("message %d: seq %d text %q", i, m.Seq, m.Text())
		}
	}
	if got[12].ID != "given-id" {
		t.Fatalf("given ID replaced: %q", got[12].ID)
	}
	h, _ := s.Get(a.ID)
	if h.Count != 13 || h.LastModel != "anthropic/claude-opus-4" || !h.UpdatedAt.After(a.UpdatedAt) {
		t.Fatalf("header after appends: %+v", h)
	}
	if hb, _ := s.Get(b.ID); hb.Count != 1 {
		t.Fatalf("other session's count: %d", hb.Count)
	}
	if err := s.Append("nope", textMsg(RoleUser, "x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append to unknown session: %v", err)
	}
}

func TestRangeAndScan(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "paging"})
	const n = 1000
	msgs := make([]*Message, n)
	for i := range msgs {
		msgs[i] = textMsg(RoleTool, fmt.Sprint(i+1))
	}
	if err := s.AppendBulk(h.ID, msgs); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		from, to    uint64
		first, last uint64 // 0, 0: empty
	}{
		{1, 200, 1, 200},
		{801, 1000, 801, 1000},
		{990, 5000, 990, 1000},
		{0, 3, 1, 3},
		{500, 500, 500, 500},
		{500, 400, 0, 0},
		{1001, 2000, 0, 0},
		{0, ^uint64(0), 1, 1000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%d", tt.from, tt.to), func(t *testing.T) {
			got, bad, err := s.Range(h.ID, tt.from, tt.to)
			if err != nil || len(bad) != 0 {
				t.Fatal(err, bad)
			}
			if tt.first == 0 {
				if len(got) != 0 {
					t.Fatalf("got %d messages, want none", len(got))
				}
				return
			}
			if want := int(tt.last - tt.first + 1); len(got) != want {
				t.Fatalf("got %d messages, want %d", len(got), want)
			}
			for i, m := range got {
				if m.Seq != tt.first+uint64(i) || m.Text() != fmt.Sprint(m.Seq) {
					t.Fatalf("position %d: seq %d text %q", i, m.Seq, m.Text())
				}
			}
		})
	}
	t.Run("scan in pages", func(t *testing.T) {
		var seen []uint64
		for from := uint64(1); from <= n; from += 128 {
			_, err := s.Scan(h.ID, from, from+127, func(m *Message) error {
				seen = append(seen, m.Seq)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for i, seq := range seen {
			if seq != uint64(i+1) {
				t.Fatalf("page scan position %d has seq %d", i, seq)
			}
		}
		if len(seen) != n {
			t.Fatalf("page scan saw %d messages", len(seen))
		}
	})
	t.Run("scan stops on error", func(t *testing.T) {
		stop := errors.New("enough")
		count := 0
		_, err := s.Scan(h.ID, 1, n, func(*Message) error {
			if count++; count == 10 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || count != 10 {
			t.Fatalf("err %v after %d messages", err, count)
		}
	})
	if _, _, err := s.Range("missing", 1, 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("range of unknown session: %v", err)
	}
}

func TestResolve(t *testing.T) {
	s := openTemp(t)
	for _, id := range []string{"abc123", "abd456", "abcdef00", "abcdef", "zz"} {
		create(t, s, Header{ID: id, Title: id})
	}
	tests := []struct {
		in, want string
		err      error
	}{
		{"abc1", "abc123", nil},
		{"abd", "abd456", nil},
		{"abd456", "abd456", nil},
		{"abcdef", "abcdef", nil}, // a full ID wins over longer IDs it prefixes
		{"abcdef0", "abcdef00", nil},
		{"z", "zz", nil},
		{"ab", "", ErrAmbiguous},
		{"abc", "", ErrAmbiguous},
		{"q", "", ErrNotFound},
		{"abc1234", "", ErrNotFound},
		{"", "", ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := s.Resolve(tt.in)
			if got != tt.want || !errors.Is(err, tt.err) {
				t.Fatalf("Resolve(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
	_, err := s.Resolve("ab")
	if want := `"ab" matches sessions abc123, abcdef, abcdef00, abd456; give more of the ID`; err.Error() != want {
		t.Fatalf("ambiguous message %q, want %q", err, want)
	}
	_, err = s.Resolve("q")
	if want := `no session matches "q" (list them with: scrim sessions)`; err.Error() != want {
		t.Fatalf("not-found message %q, want %q", err, want)
	}
}

func TestCreateRefusesBadOrTakenIDs(t *testing.T) {
	s := openTemp(t)
	create(t, s, Header{ID: "a", Title: "a"})
	for _, id := range []string{"a/b", "a b", "../x", strings.Repeat("x", 129), "é"} {
		if _, err := s.Create(Header{ID: id}); err == nil {
			t.Errorf("Create(%q) accepted", id)
		}
	}
	if _, err := s.Create(Header{ID: "a"}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate ID: %v", err)
	}
	if keys := allKeys(t, s); len(keys) != 3 { // v, s/a, u/…/a
		t.Errorf("refused creates wrote keys: %q", keys)
	}
}

func TestRenameAndUpdate(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "old", Origin: "imported from claude: x.jsonl"})
	if err := s.Append(h.ID, textMsg(RoleUser, "hi")); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(h.ID, "new title"); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	got, err := s.Get(h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "new title" || got.Count != 1 || got.Origin != h.Origin || !got.CreatedAt.Equal(h.CreatedAt) {
		t.Fatalf("after rename: %+v", got)
	}
	// Update cannot change the ID or the count.
	got, err = s.Update(h.ID, func(h *Header) { h.ID, h.Count, h.WorkDir = "other", 99, "/w" })
	if err != nil || got.ID != h.ID || got.Count != 1 || got.WorkDir != "/w" {
		t.Fatalf("Update: %+v %v", got, err)
	}
	if list, _, _ := s.List(); len(list) != 1 || list[0].Title != "new title" {
		t.Fatalf("List after rename: %+v", list)
	}
	if err := s.Rename("nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rename unknown: %v", err)
	}
	if n := len(allKeys(t, s)); n != 4 { // v, s/, u/ (one: the old entry moved), m/#1
		t.Fatalf("keys after renames: %q", allKeys(t, s))
	}
}

func TestListNewestFirst(t *testing.T) {
	s := openTemp(t)
	a := create(t, s, Header{Title: "a"})
	b := create(t, s, Header{Title: "b"})
	c := create(t, s, Header{Title: "c"})
	if err := s.Append(a.ID, textMsg(RoleUser, "x")); err != nil { // a is now the newest
		t.Fatal(err)
	}
	list, bad, err := s.List()
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	var ids []string
	for _, h := range list {
		ids = append(ids, h.ID)
	}
	if want := []string{a.ID, c.ID, b.ID}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("order %v, want %v", ids, want)
	}
	if list[0].Count != 1 {
		t.Fatalf("count in list: %+v", list[0])
	}
}

// Index entries that point nowhere or at an old time must not hide, repeat
// or resurrect a session.
func TestListIgnoresStaleIndex(t *testing.T) {
	s := openTemp(t)
	a := create(t, s, Header{Title: "a"})
	setRaw(t, s, recencyKey(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), "ghost"), nil)
	setRaw(t, s, recencyKey(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC), a.ID), nil)
	list, bad, err := s.List()
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	if len(list) != 1 || list[0].ID != a.ID || !list[0].UpdatedAt.Equal(a.UpdatedAt) {
		t.Fatalf("List: %+v", list)
	}
	if err := s.Delete(a.ID); err != nil {
		t.Fatal(err)
	}
	for _, k := range allKeys(t, s) {
		if strings.HasSuffix(k, a.ID) {
			t.Fatalf("Delete left %q", k)
		}
	}
}

func TestCorruptHeaderReportedAndDeletable(t *testing.T) {
	s := openTemp(t)
	a := create(t, s, Header{Title: "a"})
	b := create(t, s, Header{Title: "b"})
	setRaw(t, s, headerKey(a.ID), []byte("\x00garbage"))
	list, bad, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != b.ID {
		t.Fatalf("List: %+v", list)
	}
	if len(bad) != 1 || bad[0].SessionID != a.ID || bad[0].Seq != 0 {
		t.Fatalf("decode errors: %+v", bad)
	}
	if err := s.Delete(a.ID); err != nil {
		t.Fatal(err)
	}
	for _, k := range allKeys(t, s) {
		if strings.Contains(k, a.ID) {
			t.Fatalf("Delete of a corrupt session left %q", k)
		}
	}
}

// Renaming is not activity: the session keeps its updated time and its
// place in the list.
func TestRenameKeepsTheOrder(t *testing.T) {
	s := openTest(t)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	old, _ := s.Create(Header{Title: "old"})
	recent, _ := s.Create(Header{Title: "recent"})
	if err := s.Rename(old.ID, "old, renamed"); err != nil {
		t.Fatal(err)
	}
	hs, _, err := s.List()
	if err != nil || len(hs) != 2 || hs[0].ID != recent.ID || hs[1].Title != "old, renamed" {
		t.Fatalf("list after rename: %+v, %v", hs, err)
	}
	if h, _ := s.Get(old.ID); !h.UpdatedAt.Equal(old.UpdatedAt) {
		t.Fatalf("updated %v, was %v", h.UpdatedAt, old.UpdatedAt)
	}
}
