package importers_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/gemini"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// A source's session that holds messages added in scrim is never
// replaced: when the source only grew, its new messages follow them; when
// it changed otherwise (a rewind), it is imported into a new session and
// the old one is kept, with what the user wrote.
func TestSourceKeepsWhatWasAddedInScrim(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "session-k.jsonl")
	head := `{"sessionId":"s","projectHash":"p"}` + "\n" + `{"id":"u1","type":"user","content":"first"}` + "\n"
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(head)
	first, err := importers.ImportSource(st, gemini.Source, file, nil)
	if err != nil {
		t.Fatal(err)
	}
	mine := &session.Message{Role: session.RoleUser, Parts: []session.Part{{Kind: session.PartText, Text: "written in scrim"}}}
	if err := st.Append(first.SessionID, mine); err != nil {
		t.Fatal(err)
	}
	write(head + `{"id":"g1","type":"gemini","content":"grown"}` + "\n")
	grown, err := importers.ImportSource(st, gemini.Source, file, nil)
	if err != nil || !grown.Resumed || grown.SessionID != first.SessionID || grown.After != 1 {
		t.Fatalf("grown import %+v %v", grown, err)
	}
	_, msgs := importtest.Session(t, st, "first")
	if len(msgs) != 3 || msgs[1].Text() != "written in scrim" || msgs[2].Text() != "grown" {
		t.Fatalf("after growing: %d messages", len(msgs))
	}
	write(head + `{"$rewindTo":"u1"}` + "\n" + `{"id":"u2","type":"user","content":"again"}` + "\n")
	rewound, err := importers.ImportSource(st, gemini.Source, file, nil)
	if err != nil || !rewound.Replaced || len(rewound.Kept) != 1 || rewound.Kept[0].ID != first.SessionID || rewound.Kept[0].Added != 1 {
		t.Fatalf("rewound import %+v %v", rewound, err)
	}
	if _, msgs := importtest.Session(t, st, "first"); len(msgs) != 3 {
		t.Errorf("the kept session has %d messages, want its 3", len(msgs))
	}
	if _, msgs := importtest.Session(t, st, "again"); len(msgs) != 1 {
		t.Errorf("the new session has %d messages, want 1", len(msgs))
	}
}

// A title the agent gives a session later (Gemini CLI's summary) becomes
// its title in scrim, unless it was renamed there.
func TestSourceRetitled(t *testing.T) {
	st := importtest.Store(t)
	file := filepath.Join(t.TempDir(), "session-t.jsonl")
	head := `{"sessionId":"s","projectHash":"p"}` + "\n" + `{"id":"u1","type":"user","content":"first prompt"}` + "\n"
	if err := os.WriteFile(file, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := importers.ImportSource(st, gemini.Source, file, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(head+`{"$set":{"summary":"Fix the parser"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := importers.ImportSource(st, gemini.Source, file, nil); err != nil {
		t.Fatal(err)
	}
	importtest.Session(t, st, "Fix the parser")
}
