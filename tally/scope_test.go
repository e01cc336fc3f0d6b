package tally

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
)

// TestUpTo: a parent is read up to its last message made by a time; a
// message without a time counts as made before it; no time reads it all.
func TestUpTo(t *testing.T) {
	st, err := session.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := st.Create(session.Header{Title: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	at := []time.Time{t0, t0.Add(time.Second), {}, t0.Add(3 * time.Second), t0.Add(4 * time.Second), t0.Add(9 * time.Second)}
	for _, c := range at {
		m := &session.Message{Role: session.RoleUser, CreatedAt: c, Parts: []session.Part{{Kind: session.PartText, Text: "x"}}}
		if err := st.Append(h.ID, m); err != nil {
			t.Fatal(err)
		}
	}
	if h, err = st.Get(h.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		end  time.Time
		want uint64
	}{
		{time.Time{}, 6},
		{t0.Add(-time.Second), 0},
		{t0, 1},
		{t0.Add(3 * time.Second), 4}, // the third, without a time, is taken
		{t0.Add(5 * time.Second), 5},
		{t0.Add(time.Hour), 6},
	} {
		got, err := upTo(st, h, tc.end)
		if err != nil || got != tc.want {
			t.Errorf("upTo(%v) = %d, %v; want %d", tc.end, got, err, tc.want)
		}
		if again, _ := upTo(st, h, tc.end); again != got {
			t.Errorf("upTo(%v) remembered %d, want %d", tc.end, again, got)
		}
	}
}
