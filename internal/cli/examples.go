package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are shown under each command's --help, by command path. Every
// command a user runs has some (TestEveryCommandHasExamples).
var examples = map[string]string{
	"scrim": `scrim                                  # the TUI on your store, importing what agents write meanwhile
scrim --model anthropic/claude-sonnet-4-5   # open it with that model active
scrim --no-watch --store ./store`,
	"scrim check": `scrim check
scrim check ~/backup/store --repair    # copies what reads into ~/backup/store.repaired-TIME`,
	"scrim demo": `scrim demo
scrim demo --model demo/public --keep`,
	"scrim export": `scrim export 3f2a --model anthropic/claude-sonnet-4-5 --format html -o review.html
scrim export 3f2a --model demo/limited --format md | pbcopy
scrim export 3f2a --format jsonl -o 3f2a.jsonl   # the stored history: not redacted`,
	"scrim import": `scrim import claude                    # ~/.claude/projects
scrim import codex ~/.codex/sessions/2025/09
scrim import claude session.jsonl --verbose
scrim import gemini                    # ~/.gemini/tmp/<project hash>/chats
scrim import crush ~/src               # every .crush/crush.db under ~/src
scrim import opencode                  # ~/.local/share/opencode: opencode.db, or the older storage/
scrim import opencode session.json     # a file opencode export wrote`,
	"scrim models": `scrim models
scrim models --provider anthropic --format json`,
	"scrim new": `scrim new --title "fix the parser"
scrim new --title "review" --workdir ~/src/app`,
	"scrim policy": `scrim policy check`,
	"scrim policy check": `scrim policy check --policy ./policy.toml
scrim policy check --dir ~/src/app`,
	"scrim policy explain": `scrim policy explain --model anthropic/claude-sonnet-4-5 ~/.ssh/id_rsa src/main.go`,
	"scrim redact": `scrim redact 3f2a --model anthropic/claude-sonnet-4-5
scrim redact 3f2a --model openai/gpt-5 --format json | jq .report`,
	"scrim rename": `scrim rename 3f2a "checkout test fix"`,
	"scrim rm":     `scrim rm 3f2a 9c01`,
	"scrim send": `scrim send 3f2a --model demo/limited "what does loadConfig read?"
echo "and why?" | scrim send 3f2a -`,
	"scrim search": `scrim search API_TOKEN
scrim search 'func load\w+' --regex --session 3f2a
scrim search api_token --model anthropic/claude-sonnet-4-5   # what that model would see; the rest: withheld
scrim search token --format json | jq -r .text`,
	"scrim sessions": `scrim sessions
scrim sessions --format json | jq '.[].title'
scrim sessions --model anthropic/claude-sonnet-4-5 --format json | jq '.[] | {title, redacted: .counts.redactedMessages}'`,
	"scrim show": `scrim show 3f2a
scrim show 3f2a --last 5
scrim show 3f2a --format json`,
	"scrim tool":          `scrim tool read --session 3f2a --model demo/limited src/config.go`,
	"scrim tool bash":     `scrim tool bash --session 3f2a --model demo/trusted -- ls -la`,
	"scrim tool glob":     `scrim tool glob --session 3f2a --model demo/limited '**/*.go'`,
	"scrim tool grep":     `scrim tool grep --session 3f2a --model demo/limited 'API_KEY' src`,
	"scrim tool read":     `scrim tool read --session 3f2a --model demo/limited src/config.go --offset 10 --limit 30`,
	"scrim tool webfetch": `scrim tool webfetch --session 3f2a --model demo/trusted https://go.dev/doc/`,
	"scrim version":       `scrim version`,
}

// addExamples puts each command's examples under its --help.
func addExamples(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if e, ok := examples[c.CommandPath()]; ok && c.Example == "" {
			c.Example = indent(e)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
