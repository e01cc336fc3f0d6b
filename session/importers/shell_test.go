package importers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/shellread"
)

// TestMayWrite: the first look lets through every way a command writes a
// file that shellread knows (and a few that write none), and stops the
// commands that only read.
func TestMayWrite(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want bool
	}{
		{`echo "TOKEN=abc" >> secrets/.env`, true},
		{"cat > notes.env <<'EOF'\nK=V\nEOF", true},
		{"printf 'K=V' | tee -a a.env", true},
		{"sed -i 's/old/new/' config.ini", true},
		{"sed -Ei.bak 's/a/b/' config.ini", true},
		{"sed --in-place -e 's/a/b/' config.ini", true},
		{"sed -n '1,80p' src/main.go", false},
		{"nl -ba src/main.go | sed -n '40,60p'", false},
		{"sort -o sorted.txt list.txt", true},
		{"uniq in.txt out.txt", true},
		{"xxd in.bin out.hex", true},
		{"cp .env backup", true},
		{"install -m 600 key /etc/app/key", true},
		{"cat .env >| copy.env", true},
		{"cat .env 2> errors.log", true}, // writes only error messages: shellread tells
		{"go test ./... 2>&1", false},
		{"rg -n TOKEN . 2>/dev/null", false},
		{"ls -la &> /dev/null", false},
		{"cat .env", false},
		{"git status", false},
	} {
		if got := mayWrite(c.cmd); got != c.want {
			t.Errorf("mayWrite(%q) = %v, want %v", c.cmd, got, c.want)
		}
	}
}

// TestCopiesFollow: a read of a file earlier commands wrote from others
// reads those, through copies of copies; a file written anew from its own
// words holds none; a script's output read back is of unknown source.
func TestCopiesFollow(t *testing.T) {
	var c Copies
	read := func(cmd string) shellread.Reading {
		return c.Follow(shellread.Read(shellread.Command{Line: cmd, Dir: "/ws"}, "x\n", NewPaths().Resolve))
	}
	read("cp secrets/.env a.txt")
	read("cp a.txt b.txt")
	if r := read("cat b.txt"); fmt.Sprint(r.Files) != "[/ws/b.txt /ws/a.txt /ws/secrets/.env]" || r.Unknown != "" {
		t.Errorf("cat b.txt reads %v (%q)", r.Files, r.Unknown)
	}
	read("echo fresh > a.txt")
	if r := read("cat a.txt"); fmt.Sprint(r.Files) != "[/ws/a.txt]" {
		t.Errorf("a.txt written anew still reads %v", r.Files)
	}
	read("python3 gen.py > out.txt")
	if r := read("head out.txt"); !strings.HasPrefix(r.Unknown, "it reads /ws/out.txt, into which an earlier command wrote ") {
		t.Errorf("a script's output read back: %q", r.Unknown)
	}
	if from, why := c.Of("/ws/b.txt"); fmt.Sprint(from) != "[/ws/a.txt /ws/secrets/.env]" || why != "" {
		t.Errorf("Of(b.txt) = %v, %q", from, why)
	}
	// A background command's output file: what the command reads, or, for
	// a search, that its files cannot be told without the output.
	p := NewPaths()
	c.Output("/tmp/a.output", p.Reads(shellread.Command{Line: "cat secrets/.env", Dir: "/ws"}))
	c.Output("/tmp/b.output", p.Reads(shellread.Command{Line: "rg -n TOKEN secrets", Dir: "/ws"}))
	c.Output("/tmp/c.output", p.Reads(shellread.Command{Line: "sleep 5; echo done", Dir: "/ws"}))
	if from, why := c.Of("/tmp/a.output"); fmt.Sprint(from) != "[/ws/secrets/.env]" || why != "" {
		t.Errorf("Of(a.output) = %v, %q", from, why)
	}
	if _, why := c.Of("/tmp/b.output"); !strings.Contains(why, "the output of a background command that reads /ws/secrets") {
		t.Errorf("Of(b.output): %q", why)
	}
	if from, why := c.Of("/tmp/c.output"); from != nil || why != "" {
		t.Errorf("Of(c.output) = %v, %q", from, why)
	}
	for i := range maxCopies + 10 {
		c.note(shellread.Copy{File: fmt.Sprintf("/ws/f%d", i), From: []string{"/ws/secrets/.env"}})
	}
	if len(c) != maxCopies {
		t.Errorf("%d copies kept, at most %d", len(c), maxCopies)
	}
}
