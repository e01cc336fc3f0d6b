package importers

import "testing"

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
