package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

const (
	cart  = "/home/dev/shop/src/cart.go"
	env   = "/home/dev/shop/.env"
	model = "model=anthropic/claude-sonnet-4-20250514"
)

func TestSessionFixture(t *testing.T) {
	st := importtest.Store(t)
	res, err := importers.Import(st, Agent, "testdata/session.jsonl", New)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata/session.jsonl")
	wantSummary := abs + ": 23 messages, 6 tool results tagged, 3 unknown-source results, 2 skipped lines, 1 subagent session → session " + res.SessionID
	if res.String() != wantSummary {
		t.Errorf("summary\n got  %s\n want %s", res, wantSummary)
	}
	h, msgs := importtest.Session(t, st, "Fixing the checkout test")
	if h.WorkDir != "/home/dev/shop" || h.LastModel != "anthropic/claude-opus-4-1-20250805" || h.Origin != "imported from claude: "+abs {
		t.Errorf("header %+v", h)
	}
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"assistant " + model + " parts=[text call:toolu_01:Read call:toolu_02:Read] paths=nil",
		"tool read " + model + " parts=[from:" + cart + "] paths=[" + cart + "]",
		"tool read " + model + " parts=[from:" + env + " tool_result] paths=[" + env + "]",
		"assistant " + model + " parts=[call:toolu_03:Grep] paths=nil",
		"tool grep " + model + " parts=[from:" + cart + " from:/home/dev/shop/src/cart-test.go from:/home/dev/shop/docs/notes.md] paths=[" + cart + " /home/dev/shop/src/cart-test.go /home/dev/shop/docs/notes.md]",
		"assistant " + model + " parts=[call:toolu_04:Grep] paths=nil",
		"tool grep " + model + " parts=[tool_result] paths=[/home/dev/shop/src/payment.go /home/dev/shop/config/.env.production]",
		"assistant " + model + " parts=[call:toolu_05:Bash call:toolu_06:Glob call:toolu_07:WebFetch call:toolu_08:Task] paths=nil",
		"tool glob " + model + " parts=[tool_result] paths=nil nofiles",
		"tool bash error " + model + " parts=[tool_result] paths=nil unknown=the command runs a program (go), which may read anything",
		"tool webfetch " + model + " parts=[tool_result] paths=nil unknown=content fetched from the web",
		"tool task " + model + " parts=[tool_result] paths=nil unknown=a subagent's answer, which may repeat what it read",
		"assistant " + model + " parts=[call:toolu_09:Read call:toolu_10:Grep] paths=nil",
		"tool grep " + model + " parts=[from:" + cart + "] paths=[" + cart + "]",
		"tool read error " + model + " parts=[tool_result] paths=nil nofiles",
		"event parts=[text] paths=nil",
		"user parts=[text] paths=nil",
		"assistant model=anthropic/claude-opus-4-1-20250805 parts=[text call:toolu_11:Read] paths=nil note=no result recorded for tool call toolu_11 (Read)",
	})
	// Text is kept as the model saw it: line prefixes of both styles.
	for i, want := range map[int]string{
		0: "Fix the failing checkout test",

		2:  "     1→package cart\n     2→\n     3→func Total() int { return 3 }",
		3:  "1\tSTRIPE_KEY=sk_test_4242\n2\tDB_URL=postgres://shop@db/shop\n<system-reminder>\nWhenever you read a file, you should consider whether it looks malicious.\n</system-reminder>\n",
		16: "Claude Code: Conversation compacted",
	} {
		if got := msgs[i].Text(); got != want {
			t.Errorf("message %d text %q, want %q", i+1, got, want)
		}
	}
	if got := msgs[1].Parts[0].Text; got != "I'll read the cart and the config." {
		t.Errorf("assistant text %q", got)
	}
	if got := msgs[3].Parts[0].Text; got != "1\tSTRIPE_KEY=sk_test_4242\n2\tDB_URL=postgres://shop@db/shop" {
		t.Errorf(".env part %q: the reminder must be a part of its own", got)
	}
	grep := msgs[5].Parts
	for i, want := range []string{
		"/home/dev/shop/src/cart.go:3:func Total() int { return 3 }",
		"/home/dev/shop/src/cart-test.go-4-func TestTotal(t *testing.T) {\n/home/dev/shop/src/cart-test.go:5:\tif Total() != 2 {\n--",
		"/home/dev/shop/docs/notes.md:7:Total counts items, not prices.",
	} {
		if grep[i].Text != want {
			t.Errorf("grep part %d %q, want %q", i, grep[i].Text, want)
		}
	}

	side, smsgs := importtest.Session(t, st, "subagent: List the TODOs in the repo")
	if side.Origin != "imported from claude: "+abs+" (sidechain)" {
		t.Errorf("sidechain origin %q", side.Origin)
	}
	haiku := "model=anthropic/claude-3-5-haiku-20241022"
	importtest.Compare(t, smsgs, []string{
		"user parts=[text] paths=nil",
		"assistant " + haiku + " parts=[call:toolu_s1:Read] paths=nil",
		"tool read " + haiku + " parts=[from:/home/dev/shop/TODO.md] paths=[/home/dev/shop/TODO.md]",
		"assistant " + haiku + " parts=[text] paths=nil",
	})
	if !strings.Contains(msgs[12].Text(), "Two TODOs") {
		t.Errorf("the Task result stays in the main session: %q", msgs[12].Text())
	}
	importtest.Linked(t, st, h.Title, side.Title)
}

// TestSubagentFiles: agent-*.jsonl beside a session and in
// <session>/subagents/ are sessions of their own, linked to the parent file
// by their origin.
func TestSubagentFiles(t *testing.T) {
	st := importtest.Store(t)
	dir, _ := filepath.Abs("testdata/projects/-home-dev-shop")
	files, err := importers.Files([]string{dir}, func(n string) bool { return strings.HasSuffix(n, ".jsonl") })
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("files %q", files)
	}
	for _, f := range files {
		if _, err := importers.Import(st, Agent, f, New); err != nil {
			t.Fatal(err)
		}
	}
	parent := dir + "/1111-aaaa.jsonl"
	sonnet, haiku := "model=anthropic/claude-sonnet-4-5-20250929", "model=anthropic/claude-haiku-4-5-20251001"
	for _, tc := range []struct {
		title, origin string
		want          []string
	}{
		{"Audit the payment code", "imported from claude: " + parent, []string{
			"user parts=[text] paths=nil",
			"assistant " + sonnet + " parts=[call:toolu_p1:Task] paths=nil",
			"tool task " + sonnet + " parts=[tool_result] paths=nil unknown=a subagent's answer, which may repeat what it read",
		}},
		{"subagent: Review src/payment.go for secrets", "imported from claude: " + dir + "/1111-aaaa/subagents/agent-cd34.jsonl (subagent of " + parent + ")", []string{
			"user parts=[text] paths=nil",
			"assistant " + haiku + " parts=[call:toolu_c1:Read] paths=nil",
			"tool read " + haiku + " parts=[from:/home/dev/shop/src/payment.go] paths=[/home/dev/shop/src/payment.go]",
			"assistant " + haiku + " parts=[text] paths=nil",
		}},
		{"subagent: Warmup", "imported from claude: " + dir + "/agent-ab12.jsonl (subagent of " + parent + ")", []string{
			"user parts=[text] paths=nil",
			"assistant " + haiku + " parts=[call:toolu_w1:Grep] paths=nil",
			"tool grep " + haiku + " parts=[tool_result] paths=[/home/dev/shop/src/cart.go /home/dev/shop/TODO.md]",
		}},
	} {
		t.Run(tc.title, func(t *testing.T) {
			h, msgs := importtest.Session(t, st, tc.title)
			if h.Origin != tc.origin {
				t.Errorf("origin %q, want %q", h.Origin, tc.origin)
			}
			importtest.Compare(t, msgs, tc.want)
		})
	}
	importtest.Linked(t, st, "Audit the payment code", "subagent: Review src/payment.go for secrets", "subagent: Warmup")
	importtest.Linked(t, st, "subagent: Warmup")
}

// TestEditsAndOtherTools: results that quote a file (Edit, Write,
// NotebookRead, an image Read) are attributed to it; other tools and a
// result whose call is missing stay of unknown source. The line's
// toolUseResult names only one file: with several results on the line it is
// not applied to them all.
func TestEditsAndOtherTools(t *testing.T) {
	st := importtest.Store(t)
	res, err := importers.Import(st, Agent, "testdata/edits.jsonl", New)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := st.Messages(res.SessionID)
	m := " model=anthropic/claude-sonnet-4-5"
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"assistant" + m + " parts=[call:t1:Edit:writes:/home/dev/shop/src/cart.go call:t2:Write:writes:/home/dev/shop/src/new.go call:t3:NotebookRead call:t4:mcp__github__get_issue call:t5:Read] paths=[/home/dev/shop/src/cart.go /home/dev/shop/src/new.go]",
		"tool edit" + m + " parts=[tool_result] paths=[/home/dev/shop/src/cart.go]",
		"tool write" + m + " parts=[tool_result] paths=[/home/dev/shop/src/new.go]",
		"tool notebookread" + m + " parts=[from:/home/dev/shop/nb/analysis.ipynb] paths=[/home/dev/shop/nb/analysis.ipynb]",
		"tool mcp__github__get_issue" + m + " parts=[tool_result] paths=nil unknown=the result of an MCP tool (mcp__github__get_issue)",
		"tool read" + m + " parts=[from:/home/dev/shop/logo.png] paths=[/home/dev/shop/logo.png]",
		"tool" + m + " parts=[tool_result] paths=nil note=imported tool result whose call is not in the transcript unknown=the tool call this result answers is not in the transcript",
	})
	if got := msgs[6].Text(); got != "[image: image/png]" {
		t.Errorf("image result stored as %q", got)
	}
}

// Claude Code's bookkeeping lines are not content and not skipped; the
// last ai-title titles the session unless the user gave one.
func TestBookkeepingAndTitles(t *testing.T) {
	dir := t.TempDir()
	lines := `{"type":"user","cwd":"/w","sessionId":"s","uuid":"u1","message":{"role":"user","content":"do the thing"}}
{"type":"ai-title","aiTitle":"First guess","sessionId":"s"}
{"type":"last-prompt","lastPrompt":"do the thing","sessionId":"s"}
{"type":"permission-mode","permissionMode":"acceptEdits","sessionId":"s"}
{"type":"agent-name","agentName":"x","sessionId":"s"}
{"type":"cost-state","totalCostUSD":0.1}
{"type":"mode","mode":"normal"}
{"type":"worktree-state","state":{}}
{"type":"pr-link","url":"https://example.com/pr/1"}
{"type":"agent-setting","x":1}
{"type":"ai-title","aiTitle":"Fix the flaky upload test","sessionId":"s"}
`
	for _, c := range []struct{ extra, title string }{
		{"", "Fix the flaky upload test"},
		{`{"type":"custom-title","customTitle":"mine","sessionId":"s"}` + "\n", "mine"},
	} {
		file := filepath.Join(dir, "s"+c.title+".jsonl")
		if err := os.WriteFile(file, []byte(lines+c.extra), 0o644); err != nil {
			t.Fatal(err)
		}
		st := importtest.Store(t)
		res, err := importers.Import(st, Agent, file, New)
		if err != nil {
			t.Fatal(err)
		}
		if res.Skipped != 0 || res.Messages != 1 {
			t.Fatalf("%s", res)
		}
		importtest.Session(t, st, c.title)
	}
}
