package shellread

import (
	"fmt"
	"path"
	"strings"
	"testing"
)

// lexical resolves names by joining and cleaning, without the disk, so that
// the tables below read as the paths they name.
func lexical(name, dir string) []string {
	if d, ok := drive(name); ok {
		return []string{d}
	}
	if d, ok := drive(dir); ok && !strings.HasPrefix(name, "/") {
		w, _ := drive(d + "/" + strings.ReplaceAll(name, `\`, "/"))
		return []string{w}
	}
	if strings.HasPrefix(name, "/") {
		return []string{path.Clean(name)}
	}
	if dir == "" {
		return nil
	}
	return []string{path.Clean(dir + "/" + name)}
}

// describe renders a Reading on one line: the files, each part's file and
// line count, the reason.
func describe(r Reading) string {
	var b strings.Builder
	if r.Unknown != "" {
		fmt.Fprintf(&b, "unknown(%s) ", r.Unknown)
	}
	fmt.Fprintf(&b, "files=%v", r.Files)
	if r.Parts != nil {
		var ps []string
		for _, p := range r.Parts {
			ps = append(ps, fmt.Sprintf("%s:%d", p.File, strings.Count(p.Text, "\n")+boolInt(!strings.HasSuffix(p.Text, "\n"))))
		}
		fmt.Fprintf(&b, " parts=%v", ps)
	}
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type readCase struct {
	name, cmd, out, want string
	dir                  string // default /ws
}

func runCases(t *testing.T, cases []readCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir
			if dir == "" {
				dir = "/ws"
			}
			r := Read(Command{Line: c.cmd, Dir: dir, Home: "/home/me"}, c.out, lexical)
			got := describe(r)
			if c.want != "" && strings.HasPrefix(c.want, "unknown") {
				if !strings.HasPrefix(got, "unknown") {
					t.Fatalf("%s\n got  %s\n want %s", c.cmd, got, c.want)
				}
				if !strings.Contains(got, strings.TrimPrefix(c.want, "unknown ")) {
					t.Fatalf("%s\n got  %s\n want %s", c.cmd, got, c.want)
				}
				return
			}
			if got != c.want {
				t.Fatalf("%s\n got  %s\n want %s", c.cmd, got, c.want)
			}
			if r.Parts != nil {
				var joined strings.Builder
				for _, p := range r.Parts {
					joined.WriteString(p.Text)
				}
				if joined.String() != c.out {
					t.Fatalf("parts do not join back to the output:\n%q\n%q", joined.String(), c.out)
				}
			}
		})
	}
}

func TestReaders(t *testing.T) { runCases(t, readerCases) }

var readerCases = []readCase{
	{name: "sed -n range", cmd: "sed -n '1,80p' main.go", out: "package main\n", want: "files=[/ws/main.go]"},
	{name: "sed -n with -e", cmd: "sed -n -e '5,9p' -e '20p' a.txt", out: "x\n", want: "files=[/ws/a.txt]"},
	{name: "sed substitution", cmd: "sed 's/a/b/g' a.txt", out: "x\n", want: "files=[/ws/a.txt]"},
	{name: "sed in place prints nothing", cmd: "sed -i 's/a/b/' a.txt", out: "", want: "files=[]"},
	{name: "sed -i with suffix is not known", cmd: "sed -i.bak 's/a/b/' a.txt", out: "", want: "unknown option -."},
	{name: "sed w command", cmd: "sed -n 'w /tmp/out' .env", out: "", want: "unknown sed script"},
	{name: "nl piped to sed", cmd: "nl -ba src/app.go | sed -n '10,40p'", out: "    10\tfunc main() {\n", want: "files=[/ws/src/app.go]"},
	{name: "cat several", cmd: "cat a.txt b.txt", out: "a\nb\n", want: "files=[/ws/a.txt /ws/b.txt]"},
	{name: "cat -n", cmd: "cat -n notes.md", out: "     1\tx\n", want: "files=[/ws/notes.md]"},
	{name: "cat absolute", cmd: "cat /etc/hosts", out: "127.0.0.1 localhost\n", want: "files=[/etc/hosts]"},
	{name: "head -n", cmd: "head -n 50 README.md", out: "# x\n", want: "files=[/ws/README.md]"},
	{name: "head -NUM", cmd: "head -20 README.md", out: "# x\n", want: "files=[/ws/README.md]"},
	{name: "head of two files names them", cmd: "head -n 2 README.md .env", out: "==> README.md <==\n# x\nintro\n\n==> .env <==\nTOKEN=1\nB=2\n", want: "files=[/ws/README.md /ws/.env] parts=[/ws/README.md:4 /ws/.env:3]"},
	{name: "head -q of two files", cmd: "head -q -n 2 README.md .env", out: "# x\nTOKEN=1\n", want: "files=[/ws/README.md /ws/.env]"},
	{name: "tail", cmd: "tail -n 20 log.txt", out: "x\n", want: "files=[/ws/log.txt]"},
	{name: "tail +N", cmd: "tail +5 log.txt", out: "x\n", want: "files=[/ws/log.txt]"},
	{name: "less more bat", cmd: "less a; more b; bat --style=plain c", out: "x\n", want: "files=[/ws/a /ws/b /ws/c]"},
	{name: "awk", cmd: "awk -F: '{print $1}' /etc/passwd", out: "root\n", want: "files=[/etc/passwd]"},
	{name: "awk getline", cmd: `awk 'BEGIN { while ((getline l < ".env") > 0) print l }'`, out: "", want: "unknown awk program"},
	{name: "cut sort uniq", cmd: "cut -d, -f2 data.csv | sort | uniq -c", out: "3 x\n", want: "files=[/ws/data.csv]"},
	{name: "jq", cmd: "jq -r '.name' package.json", out: "app\n", want: "files=[/ws/package.json]"},
	{name: "jq --arg", cmd: "jq --arg k v '.[$k]' a.json", out: "1\n", want: "files=[/ws/a.json]"},
	{name: "jq --rawfile", cmd: "jq -n --rawfile s .env '$s'", out: "\"TOKEN\"\n", want: "files=[/ws/.env]"},
	{name: "jq env", cmd: "jq -n env", out: "{}", want: "unknown environment"},
	{name: "yq", cmd: "yq '.a' conf.yaml", out: "1\n", want: "files=[/ws/conf.yaml]"},
	{name: "yq eval", cmd: "yq eval '.a' conf.yaml", out: "1\n", want: "files=[/ws/conf.yaml]"},
	{name: "xxd od strings base64", cmd: "xxd key.bin; od -c a; strings b.bin; base64 c", out: "x\n", want: "files=[/ws/key.bin /ws/a /ws/b.bin /ws/c]"},
	{name: "wc", cmd: "wc -l a.go b.go", out: "3 a.go\n", want: "files=[/ws/a.go /ws/b.go]"},
	{name: "diff", cmd: "diff -u old.txt new.txt", out: "--- old.txt\n+++ new.txt\n", want: "files=[/ws/old.txt /ws/new.txt]"},
	{name: "sqlite3", cmd: `sqlite3 app.db "select * from users"`, out: "1|me\n", want: "files=[/ws/app.db]"},
	{name: "sqlite3 readfile", cmd: `sqlite3 app.db "select readfile('.env')"`, out: "", want: "unknown SQL"},
	{name: "tac rev", cmd: "tac a | rev", out: "x\n", want: "files=[/ws/a]"},
	{name: "input redirection", cmd: "wc -l < big.txt", out: "10\n", want: "files=[/ws/big.txt]"},
	{name: "tilde", cmd: "cat ~/.ssh/config", out: "Host x\n", want: "files=[/home/me/.ssh/config]"},
	{name: "HOME", cmd: `cat "$HOME/.netrc"`, out: "machine x\n", want: "files=[/home/me/.netrc]"},
	{name: "quoted name with space", cmd: `cat "my notes.txt"`, out: "x\n", want: "files=[/ws/my notes.txt]"},
	{name: "escaped space", cmd: `cat my\ notes.txt`, out: "x\n", want: "files=[/ws/my notes.txt]"},
	{name: "stdin dash", cmd: "cat a - b < c", out: "x\n", want: "files=[/ws/a /ws/c /ws/b]"},
}

func TestNoFiles(t *testing.T) {
	runCases(t, []readCase{
		{name: "echo", cmd: "echo hello", out: "hello\n", want: "files=[]"},
		{name: "ls", cmd: "ls -la src", out: "total 0\n", want: "files=[]"},
		{name: "pwd and date", cmd: "pwd && date", out: "/ws\n", want: "files=[]"},
		{name: "git status", cmd: "git status --short", out: " M a.go\n", want: "files=[]"},
		{name: "git log", cmd: "git log --oneline -5", out: "abc fix\n", want: "files=[]"},
		{name: "find names", cmd: "find . -name '*.go' -type f", out: "./a.go\n", want: "files=[]"},
		{name: "rg --files", cmd: "rg --files src", out: "src/a.go\n", want: "files=[]"},
		{name: "mkdir and touch", cmd: "mkdir -p out && touch out/x", out: "", want: "files=[]"},
		{name: "output to a file", cmd: "cat .env > /tmp/copy", out: "", want: "files=[]"},
		{name: "output to dev null", cmd: "python3 x.py > /dev/null 2>&1", out: "", want: "files=[]"},
		{name: "inline python that computes", cmd: `python3 -c 'print(2**10)'`, out: "1024\n", want: "files=[]"},
		{name: "heredoc to cat", cmd: "cat <<EOF\nhello\nEOF", out: "hello\n", want: "files=[]"},
		{name: "test", cmd: "test -f a.txt && echo yes", out: "yes\n", want: "files=[]"},
		{name: "comment", cmd: "# just a note", out: "", want: "files=[]"},
	})
}

func TestShellSyntax(t *testing.T) {
	runCases(t, []readCase{
		{name: "cd then read", cmd: "cd src && cat app.go", out: "package app\n", want: "files=[/ws/src/app.go]"},
		{name: "cd absolute", cmd: "cd /etc; cat hosts", out: "x\n", want: "files=[/etc/hosts]"},
		{name: "cd in a subshell does not last", cmd: "(cd src && cat a.go); cat b.go", out: "x\n", want: "files=[/ws/src/a.go /ws/b.go]"},
		{name: "cd .. by name", cmd: "cd src/../lib && cat x", out: "x\n", want: "files=[/ws/lib/x]"},
		{name: "cd home", cmd: "cd && cat .bashrc", out: "x\n", want: "files=[/home/me/.bashrc]"},
		{name: "cd -", cmd: "cd - && cat x", out: "x\n", want: "unknown cd -"},
		{name: "bash -lc wrapper", cmd: `bash -lc "sed -n '1,20p' main.go"`, out: "x\n", want: "files=[/ws/main.go]"},
		{name: "sh -c wrapper", cmd: `sh -c 'cat a.txt'`, out: "x\n", want: "files=[/ws/a.txt]"},
		{name: "bash -euo pipefail -c", cmd: `bash -euo pipefail -c 'cat a'`, out: "x\n", want: "files=[/ws/a]"},
		{name: "bash script", cmd: "bash build.sh", out: "ok\n", want: "unknown shell script build.sh"},
		{name: "pipeline union", cmd: `cat .env.devnet.local | grep -iE "rpc|url" | head`, out: "RPC_URL=https://x?key=abc\n", want: "files=[/ws/.env.devnet.local]"},
		{name: "or true", cmd: "test -f .env && cat .env || true", out: "A=1\n", want: "files=[/ws/.env]"},
		{name: "if else", cmd: "if [ -f a ]; then cat a; else cat b; fi", out: "x\n", want: "files=[/ws/a /ws/b]"},
		{name: "for loop over literals", cmd: "for f in a.go b.go; do echo \"== $f\"; cat \"$f\"; done", out: "== a.go\nx\n", want: "files=[/ws/a.go /ws/b.go]"},
		{name: "for loop over a glob that matches nothing", cmd: "for f in *.nothing; do cat $f; done", out: "", want: "unknown matches nothing"},
		{name: "literal variable", cmd: "f=src/a.go; cat \"$f\"", out: "x\n", want: "files=[/ws/src/a.go]"},
		{name: "unknown variable", cmd: "cat $FILE", out: "x\n", want: "unknown $FILE"},
		{name: "default of an unknown variable is a guess", cmd: "cat ${FILE:-a.txt}", out: "x\n", want: "unknown $FILE"},
		{name: "positional", cmd: "cat $1", out: "x\n", want: "unknown $1"},
		{name: "command substitution names the file", cmd: "cat $(git ls-files | head -1)", out: "x\n", want: "unknown computed"},
		{name: "command substitution echoed", cmd: `echo "token: $(cat .env)"`, out: "token: A=1\n", want: "files=[/ws/.env]"},
		{name: "variable from a file", cmd: `t=$(cat secrets/key); echo "$t"`, out: "k\n", want: "files=[/ws/secrets/key]"},
		{name: "read loop", cmd: "while read -r l; do echo \"$l\"; done < .env", out: "A=1\n", want: "files=[/ws/.env]"},
		{name: "process substitution", cmd: "diff <(sort a.txt) <(sort b.txt)", out: "< x\n", want: "files=[/ws/a.txt /ws/b.txt]"},
		{name: "written then read back", cmd: "cat .env > /tmp/x; cat /tmp/x", out: "A=1\n", want: "files=[/tmp/x /ws/.env]"},
		{name: "copied then read", cmd: "cp .env /tmp/e && cat /tmp/e", out: "A=1\n", want: "files=[/tmp/e /ws/.env]"},
		{name: "tee", cmd: "cat .env | tee /tmp/t >/dev/null; cat /tmp/t", out: "A=1\n", want: "files=[/tmp/t /ws/.env]"},
		{name: "function", cmd: "show() { cat a.txt; }; show", out: "x\n", want: "files=[/ws/a.txt]"},
		{name: "eval", cmd: `eval "cat a"`, out: "x\n", want: "unknown program (eval)"},
		{name: "python script", cmd: "python3 dump.py", out: "x\n", want: "unknown python3 script dump.py"},
		{name: "python inline with open", cmd: `python3 -c "print(open('.env').read())"`, out: "A=1\n", want: "unknown inline"},
		{name: "python inline over stdin", cmd: `cat a.json | python3 -c "import json,sys; print(json.load(sys.stdin)['k'])"`, out: "v\n", want: "files=[/ws/a.json]"},
		{name: "node -e", cmd: `node -e "console.log(require('fs').readFileSync('.env','utf8'))"`, out: "A=1\n", want: "unknown inline"},
		{name: "unknown program", cmd: "frobnicate --all", out: "x\n", want: "unknown frobnicate is not known"},
		{name: "script by path", cmd: "./run.sh", out: "x\n", want: "unknown ./run.sh"},
		{name: "env prints credentials", cmd: "env", out: "AWS_SECRET_ACCESS_KEY=x\n", want: "unknown environment"},
		{name: "env runs a command", cmd: "env LC_ALL=C sort a.txt", out: "x\n", want: "files=[/ws/a.txt]"},
		{name: "printenv", cmd: "printenv | grep TOKEN", out: "TOKEN=x\n", want: "unknown environment"},
		{name: "timeout wrapper", cmd: "timeout 10 cat a.txt", out: "x\n", want: "files=[/ws/a.txt]"},
		{name: "nice nohup stdbuf command", cmd: "nice -n 5 nohup stdbuf -oL command cat a.txt", out: "x\n", want: "files=[/ws/a.txt]"},
		{name: "xargs -I", cmd: "printf '%s\\n' a b | xargs -I{} cat {}.txt", out: "x\n", want: "files=[/ws/a.txt /ws/b.txt]"},
		{name: "zsh -c", cmd: "zsh -c 'head -n 3 notes.md'", out: "x\n", want: "files=[/ws/notes.md]"},
		{name: "nested wrappers", cmd: `bash -lc "sh -c 'cat a'"`, out: "x\n", want: "files=[/ws/a]"},
		{name: "2>&1 and a heredoc for input", cmd: "cat a.txt 2>&1 <<EOF\nignored\nEOF", out: "x\n", want: "files=[/ws/a.txt]"},
		{name: "sudo wrapper", cmd: "sudo -u root cat /etc/shadow", out: "x\n", want: "files=[/etc/shadow]"},
		{name: "curl", cmd: "curl -s https://example.com", out: "<html>", want: "unknown network"},
		{name: "unknown option", cmd: "cat --frob a.txt", out: "x\n", want: "unknown --frob"},
		{name: "stderr to dev null keeps stdout", cmd: "cat a.txt 2>/dev/null", out: "x\n", want: "files=[/ws/a.txt]"},
		{name: "to stderr still shown", cmd: "cat a.txt >&2", out: "x\n", want: "files=[/ws/a.txt]"},
		{name: "parse error", cmd: "cat 'a", out: "", want: "unknown could not be parsed"},
		{name: "no folder recorded", cmd: "cat a.txt", dir: "-", out: "x\n", want: "unknown working folder"},
		{name: "xargs from echo", cmd: "echo a.txt b.txt | xargs cat", out: "x\n", want: "files=[/ws/a.txt /ws/b.txt]"},
		{name: "xargs from rg -l", cmd: "rg -l TODO | xargs cat", out: "x\n", want: "unknown xargs"},
		{name: "background", cmd: "cat a & cat b; wait", out: "x\n", want: "files=[/ws/a /ws/b]"},
		{name: "heredoc into python", cmd: "python3 - <<'EOF'\nprint(open('.env').read())\nEOF", out: "x\n", want: "unknown python3"},
	})
}

func TestSearches(t *testing.T) { runCases(t, searchCases) }

var searchCases = []readCase{
	{name: "rg -n folder", cmd: "rg -n TODO src", out: "src/a.go:12:// TODO x\nsrc/b.go:3:// TODO y\n", want: "files=[/ws/src/a.go /ws/src/b.go] parts=[/ws/src/a.go:1 /ws/src/b.go:1]"},
	{name: "rg -n head", cmd: "rg -n TOKEN | head -20", out: ".env:1:TOKEN=abc\nsrc/conf.go:5:os.Getenv(\"TOKEN\")\n", want: "files=[/ws/.env /ws/src/conf.go] parts=[/ws/.env:1 /ws/src/conf.go:1]"},
	{name: "rg without -n names bare", cmd: "rg TOKEN", out: ".env:TOKEN=abc\nREADME.md:set TOKEN first\n", want: "files=[/ws/.env /ws/README.md] parts=[/ws/.env:1 /ws/README.md:1]"},
	{name: "rg context lines", cmd: "rg -n -C1 key", out: "a.txt-1-before\na.txt:2:key\na.txt-3-after\n--\nsecrets/k-4-x\nsecrets/k:5:key=1\n", want: "files=[/ws/a.txt /ws/secrets/k] parts=[/ws/a.txt:4 /ws/secrets/k:2]"},
	{name: "rg context whose match was cut off", cmd: "rg -n -A2 TOKEN | head -4", out: "a.txt:1:TOKEN\na.txt-2-x\n--\n.env-1-TOKEN=abc\n", want: "files=[/ws/a.txt /ws/.env] parts=[/ws/a.txt:3 /ws/.env:1]"},
	{name: "rg heading", cmd: "rg --heading -n foo src", out: "src/a.go\n1:foo\n2:foo bar\n\nsrc/b.go\n9:foo\n", want: "files=[/ws/src/a.go /ws/src/b.go] parts=[/ws/src/a.go:4 /ws/src/b.go:2]"},
	{name: "rg -l", cmd: "rg -l password .", out: "./config.yml\n./secrets/db\n", want: "files=[/ws/config.yml /ws/secrets/db] parts=[/ws/config.yml:1 /ws/secrets/db:1]"},
	{name: "rg -c", cmd: "rg -c TODO src", out: "src/a.go:3\nsrc/b.go:1\n", want: "files=[/ws/src/a.go /ws/src/b.go] parts=[/ws/src/a.go:1 /ws/src/b.go:1]"},
	{name: "rg -S -g -t options", cmd: "rg -n -S -g '*.go' -t go Token src", out: "src/a.go:1:Token\n", want: "files=[/ws/src/a.go] parts=[/ws/src/a.go:1]"},
	{name: "rg over stdin", cmd: "cat .env | rg KEY", out: "KEY=1\n", want: "files=[/ws/.env]"},
	{name: "rg single file not on this machine", cmd: "rg -n TOKEN config.txt", out: "3:TOKEN=abc\n", want: "files=[/ws/config.txt]"},
	{name: "grep -n one file", cmd: "grep -n TOKEN .env", out: "1:TOKEN=abc\n", want: "files=[/ws/.env]"},
	{name: "grep two files", cmd: "grep -n x a.txt b.txt", out: "a.txt:1:x\nb.txt:4:x\n", want: "files=[/ws/a.txt /ws/b.txt] parts=[/ws/a.txt:1 /ws/b.txt:1]"},
	{name: "grep -rn", cmd: "grep -rn TOKEN . | head", out: "./.env:1:TOKEN=1\n./src/a.go:3:TOKEN\n", want: "files=[/ws/.env /ws/src/a.go] parts=[/ws/.env:1 /ws/src/a.go:1]"},
	{name: "grep -r without -n", cmd: "grep -r TOKEN .", out: "./.env:TOKEN=1\n./b.txt:no TOKEN: here\n", want: "files=[/ws/.env /ws/b.txt] parts=[/ws/.env:1 /ws/b.txt:1]"},
	{name: "grep -rh names nothing", cmd: "grep -rh TOKEN .", out: "TOKEN=1\n", want: "unknown without printing the names"},
	{name: "grep -l", cmd: "grep -rl secret src", out: "src/a.go\n", want: "files=[/ws/src/a.go] parts=[/ws/src/a.go:1]"},
	{name: "grep -c two files", cmd: "grep -c x a b", out: "a:1\nb:0\n", want: "files=[/ws/a /ws/b] parts=[/ws/a:1 /ws/b:1]"},
	{name: "grep -m -i -E -o", cmd: "grep -m 3 -i -E -o 'ab|cd' f.txt", out: "ab\n", want: "files=[/ws/f.txt]"},
	{name: "grep -A on two files", cmd: "grep -n -A1 k x.txt y.txt", out: "x.txt:1:k\nx.txt-2-after\n--\ny.txt:5:k\n", want: "files=[/ws/x.txt /ws/y.txt] parts=[/ws/x.txt:3 /ws/y.txt:1]"},
	{name: "grep in pipeline keeps names", cmd: "grep -rn api src | grep -v test | sort | head -5", out: "src/a.go:1:api\n", want: "files=[/ws/src/a.go] parts=[/ws/src/a.go:1]"},
	{name: "search transformed loses names", cmd: "grep -rn api src | cut -d: -f3", out: "api\n", want: "unknown transformed"},
	{name: "two searches", cmd: "rg -n foo src; rg -n bar lib", out: "src/a:1:foo\nlib/b:2:bar\n", want: "files=[/ws/src/a /ws/lib/b] parts=[/ws/src/a:1 /ws/lib/b:1]"},
	{name: "search mixed with a read", cmd: "cat README.md; rg -n foo src", out: "# readme\nsrc/a:1:foo\n", want: "files=[/ws/README.md /ws/src/a]"},
	{name: "no match", cmd: "rg -n nothing src", out: "", want: "files=[]"},
	{name: "colour escapes", cmd: "grep --color=always -rn x .", out: "\x1b[35m./a\x1b[m:1:x\n", want: "files=[/ws/a] parts=[/ws/a:1]"},
	{name: "grep -Z", cmd: "grep -rZ x .", out: "./a\x00x\n./b\x00x:y\n", want: "files=[/ws/a /ws/b] parts=[/ws/a:1 /ws/b:1]"},
	{name: "absolute root", cmd: "rg -n TOKEN /srv/app", out: "/srv/app/.env:1:TOKEN=1\n", want: "files=[/srv/app/.env] parts=[/srv/app/.env:1]"},
	{name: "leading error line goes to the first file", cmd: "grep -rn x .", out: "grep: ./locked: Permission denied\n./a:1:x\n", want: "files=[/ws/a] parts=[/ws/a:2]"},
}

func TestGit(t *testing.T) {
	runCases(t, []readCase{
		{name: "show rev:path", cmd: "git show HEAD:config/.env", out: "A=1\n", want: "files=[/ws/config/.env]"},
		{name: "show rev:./path from a subfolder", cmd: "cd sub && git show HEAD:./x.txt", out: "x\n", want: "files=[/ws/sub/x.txt]"},
		{name: "diff named by headers", cmd: "git diff", out: "diff --git a/a.go b/a.go\nindex 1..2\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-A=1\n+A=2\n", want: "files=[/ws/a.go /ws/.env] parts=[/ws/a.go:7 /ws/.env:6]"},
		{name: "log -p", cmd: "git log -p -1", out: "commit abc\nAuthor: me\n\n    fix\n\ndiff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n", want: "files=[/ws/a.go] parts=[/ws/a.go:11]"},
		{name: "show a commit", cmd: "git show abc123", out: "commit abc123\n\ndiff --git a/k b/k\n+x\n", want: "files=[/ws/k] parts=[/ws/k:4]"},
		{name: "diff --stat", cmd: "git diff --stat", out: " a.go | 2 +-\n", want: "files=[]"},
		{name: "blame", cmd: "git blame src/a.go", out: "abc (me 1) x\n", want: "files=[/ws/src/a.go]"},
		{name: "config", cmd: "git config --get remote.origin.url", out: "https://tok@github.com/x\n", want: "files=[/ws/.git/config]"},
		{name: "grep", cmd: "git grep -n TOKEN", out: "src/a.go:3:TOKEN\n", want: "files=[/ws/src/a.go] parts=[/ws/src/a.go:1]"},
		{name: "-C", cmd: "git -C /other show HEAD:a.txt", out: "x\n", want: "files=[/other/a.txt]"},
		{name: "unknown subcommand", cmd: "git frob", out: "x\n", want: "unknown git frob"},
	})
}

func TestPowerShell(t *testing.T) {
	for _, c := range []struct {
		argv      []string
		out, want string
	}{
		{[]string{"powershell.exe", "-Command", `Get-Content -Path src\main.rs -TotalCount 50`}, "fn main\n", "files=[C:/Users/me/proj/src/main.rs]"},
		{[]string{"pwsh", "-NoProfile", "-Command", `gc .env | Select-Object -First 5`}, "A=1\n", "files=[C:/Users/me/proj/.env]"},
		{[]string{"powershell", "-Command", `type 'C:\Users\me\proj\secrets\key.txt'`}, "k\n", "files=[C:/Users/me/proj/secrets/key.txt]"},
		{[]string{"powershell", "-Command", `Select-String -Path src\a.cs,src\b.cs -Pattern Token`}, `src\a.cs:3:Token` + "\n", "files=[C:/Users/me/proj/src/a.cs] parts=[C:/Users/me/proj/src/a.cs:1]"},
		{[]string{"powershell", "-Command", `Get-ChildItem -Recurse src | Select-String Token`}, "src\\a.cs:3:Token\nsrc\\b.cs:9:Token\n", "files=[C:/Users/me/proj/src/a.cs C:/Users/me/proj/src/b.cs] parts=[C:/Users/me/proj/src/a.cs:1 C:/Users/me/proj/src/b.cs:1]"},
		{[]string{"powershell", "-Command", `Get-Content $env:USERPROFILE\.ssh\id_rsa`}, "k\n", "unknown(the PowerShell command could not be parsed) files=[]"},
		{[]string{"powershell", "-Command", `Invoke-WebRequest https://x`}, "k\n", "unknown(the PowerShell command Invoke-WebRequest is not known to scrim) files=[]"},
	} {
		r := Read(Command{Argv: c.argv, Dir: `C:\Users\me\proj`}, c.out, lexical)
		if got := describe(r); got != c.want {
			t.Errorf("%q\n got  %s\n want %s", c.argv, got, c.want)
		}
	}
}

func TestArgv(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"bash", "-lc", "cat a.txt"}, "files=[/ws/a.txt]"},
		{[]string{"/bin/bash", "-lc", "cd src && rg -n x"}, "files=[/ws/src/a] parts=[/ws/src/a:1]"},
		{[]string{"cat", "a.txt"}, "files=[/ws/a.txt]"},
		{[]string{"bash", "-c"}, "files=[]"},
	} {
		r := Read(Command{Argv: c.argv, Dir: "/ws"}, "a:1:x\n", lexical)
		if got := describe(r); got != c.want {
			t.Errorf("%q\n got  %s\n want %s", c.argv, got, c.want)
		}
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ cmd, want string }{
		{"cat secrets/api.key .env", "[/ws/secrets/api.key /ws/.env]"},
		{"python3 tools/dump.py --out /tmp/x", "[/ws/tools/dump.py /tmp/x]"},
		{"cd secrets && ls", "[/ws/secrets]"},
		{"echo hi > out/log.txt", "[]"},
		{"grep -rn TOKEN .", "[/ws]"},
		{"curl https://example.com/a/b", "[]"},
	} {
		r := Read(Command{Line: c.cmd, Dir: "/ws"}, "", lexical)
		if got := fmt.Sprint(r.Names); got != c.want && got != strings.Replace(c.want, "[]", "[]", 1) {
			if !(c.want == "[]" && len(r.Names) == 0) {
				t.Errorf("%s: names %v, want %s", c.cmd, r.Names, c.want)
			}
		}
	}
}

// TestWrites: the files a command writes, which its text may hold the
// content of: a redirection's target (not a device), tee's, sed -i's,
// sort -o's, cp's (the target as a file or as a folder), in order.
func TestWrites(t *testing.T) {
	for _, c := range []struct{ cmd, want string }{
		{`echo "TOKEN=abc" >> secrets/.env`, "[/ws/secrets/.env]"},
		{"cat > notes.env <<'EOF'\nK=V\nEOF", "[/ws/notes.env]"},
		{"printf 'K=V' | tee -a a.env b.env", "[/ws/a.env /ws/b.env]"},
		{"sed -i 's/old/new/' config.ini", "[/ws/config.ini]"},
		{"sort -o sorted.txt list.txt", "[/ws/sorted.txt]"},
		{"cp .env backup", "[/ws/backup /ws/backup/.env]"},
		{"cd sub && echo x > y.txt", "[/ws/sub/y.txt]"},
		{"go test ./... 2>/dev/null > /dev/stderr", "[]"},
		{"cat .env 2> errors.log", "[]"}, // only error messages go there
		{"cat .env", "[]"},
	} {
		r := Read(Command{Line: c.cmd, Dir: "/ws"}, "", lexical)
		if got := fmt.Sprint(r.Writes); got != c.want {
			t.Errorf("%q: writes %v, want %s", c.cmd, r.Writes, c.want)
		}
	}
}

// TestCopies: what a command wrote into each file it writes: the files
// whose content went there, none for its own words, or why it cannot be
// told.
func TestCopies(t *testing.T) {
	for _, c := range []struct{ cmd, want string }{
		{"cp secrets/.env /tmp/n", "[{/tmp/n [/ws/secrets/.env] } {/tmp/n/.env [/ws/secrets/.env] }]"},
		{"cat secrets/.env | base64 > enc.txt", "[{/ws/enc.txt [/ws/secrets/.env] }]"},
		{"echo hello > out.txt", "[{/ws/out.txt [] }]"},
		{"grep -rn TOKEN . > hits.txt", "[{/ws/hits.txt [] what a search of folders printed into it}]"},
		{"python3 dump.py > out.json", "[{/ws/out.json [] the command runs the python3 script dump.py, which may read anything}]"},
	} {
		r := Read(Command{Line: c.cmd, Dir: "/ws"}, "", lexical)
		if got := fmt.Sprint(r.Copies); got != c.want {
			t.Errorf("%q: copies %v, want %s", c.cmd, got, c.want)
		}
	}
}
