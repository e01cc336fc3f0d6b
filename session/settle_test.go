package session

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSettle: a bulk write of short messages, of which Badger keeps keys
// and values in its tables, leaves compactions owing; Settle waits for
// them, so that the process that opens the store next does not do them.
func TestSettle(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 60 MB of tables")
	}
	st := openTemp(t)
	h, err := st.Create(Header{Title: "short messages"})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a short line of a long session. ", 12)
	owed := false
	for round := 0; round < 20 && !owed; round++ {
		batch := make([]*Message, 0, 20000)
		for i := range cap(batch) {
			batch = append(batch, &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: fmt.Sprintf("%d.%d %s", round, i, text)}}})
		}
		if err := st.AppendBulk(h.ID, batch); err != nil {
			t.Fatal(err)
		}
		owed = !st.settled()
	}
	if !owed {
		t.Fatal("fixture: the writes left no compaction owing")
	}
	if !st.Settle(time.Minute) {
		t.Fatal("Settle gave up within a minute")
	}
	if !st.settled() {
		t.Fatal("Settle returned with compactions still owing")
	}
}
