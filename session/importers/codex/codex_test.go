package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

const fixture = "testdata/rollout-2025-09-01T10-00-00-0199aaaa.jsonl"

func TestRolloutFixture(t *testing.T) {
	st := importtest.Store(t)
	res, err := importers.Import(st, Agent, fixture, New)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(fixture)
	want := abs + ": 14 messages, 4 tool results tagged, 0 unknown-source results, 2 skipped lines → session " + res.SessionID
	if res.String() != want {
		t.Errorf("summary\n got  %s\n want %s", res, want)
	}
	h, msgs := importtest.Session(t, st, "Why does the login fail?")
	if h.WorkDir != "/home/dev/api" || h.LastModel != "openai/gpt-5-codex" || h.Origin != "imported from codex: "+abs {
		t.Errorf("header %+v", h)
	}
	m := " model=openai/gpt-5-codex"
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"user parts=[text] paths=nil",
		"assistant" + m + " parts=[text call:call_1:shell] paths=nil",
		"tool bash" + m + " parts=[tool_result from:/home/dev/api/src/login.py] paths=[/home/dev/api/src/login.py]",
		"assistant" + m + " parts=[call:call_2:shell] paths=nil",
		"tool bash" + m + " parts=[tool_result from:/home/dev/api/.env] paths=[/home/dev/api/.env]",
		"assistant" + m + " parts=[call:call_3:shell] paths=nil",
		"tool bash" + m + " parts=[from:/home/dev/api/src/login.py] paths=[/home/dev/api/src/login.py]",
		"assistant" + m + " parts=[call:call_4:shell] paths=nil",
		"tool bash" + m + " parts=[tool_result] paths=[/home/dev/api/a.txt /home/dev/api/b.txt]",
		"assistant" + m + " parts=[call:call_5:apply_patch:writes:/home/dev/api/src/login.py] paths=[/home/dev/api/src/login.py]",
		"tool apply_patch" + m + " parts=[tool_result] paths=nil nofiles",
		"assistant" + m + " parts=[call:call_6:shell] paths=nil note=no result recorded for tool call call_6 (shell)",
		"assistant" + m + " parts=[text] paths=nil",
	})
	// Visible text appears twice in a rollout and is imported once.
	for i, want := range map[int]string{
		1:  "Why does the login fail?",
		13: "The login read SECRET from the environment; it now uses settings.secret.",
		5:  "Exit code: 0\nWall time: 0.0 seconds\nOutput:\nSECRET=hunter2\n",
	} {
		if got := msgs[i].Text(); got != want {
			t.Errorf("message %d text %q, want %q", i+1, got, want)
		}
	}
	if got := string(msgs[2].Parts[1].Input); got != `{"command":["bash","-lc","cat src/login.py"],"workdir":"/home/dev/api"}` {
		t.Errorf("call input %s", got)
	}
}

// TestOlderRollout: rollouts before the {timestamp, type, payload} lines
// carried bare items after a first meta line; they import too, and their
// commands are read from the calls' arguments (there are no events).
func TestOlderRollout(t *testing.T) {
	st := importtest.Store(t)
	res, err := importers.Import(st, Agent, "testdata/rollout-2025-05-01-old-format.jsonl", New)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 0 || res.Messages != 4 {
		t.Errorf("%s", res)
	}
	_, msgs := importtest.Session(t, st, "Show me x.txt")
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"assistant parts=[call:c1:shell] paths=nil",
		"tool bash parts=[tool_result from:/home/dev/old/x.txt] paths=[/home/dev/old/x.txt]",
		"assistant parts=[text] paths=nil",
	})
}

// Newer rollouts' bookkeeping records are not skipped; items Codex keeps
// for itself are not imported.
func TestBookkeepingRecords(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rollout-new.jsonl")
	lines := `{"timestamp":"2026-10-01T10:00:00Z","type":"session_meta","payload":{"id":"x","cwd":"/w","model_provider":"openai","history_mode":"legacy"}}
{"timestamp":"2026-10-01T10:00:00Z","type":"world_state","payload":{"full":true,"state":{"agents_md":"x"}}}
{"timestamp":"2026-10-01T10:00:00Z","type":"inter_agent_communication_metadata","payload":{"trigger_turn":false}}
{"timestamp":"2026-10-01T10:00:00Z","type":"security_risk_score","payload":{"scores":{}}}
{"timestamp":"2026-10-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}
{"timestamp":"2026-10-01T10:00:02Z","type":"response_item","payload":{"type":"ghost_snapshot","ghost_commit":{}}}
{"timestamp":"2026-10-01T10:00:02Z","type":"response_item","payload":{"type":"context_compaction","encrypted_content":"x"}}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := importers.Import(importtest.Store(t), Agent, file, New)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 0 || res.Messages != 1 {
		t.Fatalf("%s", res)
	}
}

// userText is a rollout line of the user's message text.
func userText(text string) string {
	b, _ := json.Marshal(text)
	return `{"timestamp":"2026-10-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":` + string(b) + `}]}}` + "\n"
}

// rolloutIn writes a rollout that starts in folder cwd, then lines, to
// file, imports it into a store of its own and returns the session titled
// "hi".
func rolloutIn(t *testing.T, file, cwd, lines string) []session.Message {
	t.Helper()
	b, _ := json.Marshal(cwd)
	meta := `{"timestamp":"2026-10-01T10:00:00Z","type":"session_meta","payload":{"id":"x","cwd":` + string(b) + `,"model_provider":"openai"}}` + "\n"
	if err := os.WriteFile(file, []byte(meta+lines), 0o644); err != nil {
		t.Fatal(err)
	}
	st := importtest.Store(t)
	if _, err := importers.Import(st, Agent, file, New); err != nil {
		t.Fatal(err)
	}
	_, msgs := importtest.Session(t, st, "hi")
	return msgs
}

// TestSkillText: the text Codex adds when a skill is used is its SKILL.md's
// (named in the text), the lines around it no file's; a path that cannot be
// resolved makes the message of unknown source, and a text that only looks
// like one (no path line) is the user's.
func TestSkillText(t *testing.T) {
	msgs := rolloutIn(t, filepath.Join(t.TempDir(), "rollout-new.jsonl"), "/w", userText("hi")+
		userText("<skill>\n<name>lint</name>\n<path>skills/lint/SKILL.md</path>\nRun the linter.\n</skill>")+
		userText("<skill>\n<name>lint</name>\n<path>\x00</path>\nRun the linter.\n</skill>")+
		userText("<skill>\n<name>lint</name>\nno path here\n</skill>"))
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"user parts=[text from:/w/skills/lint/SKILL.md text] paths=[/w/skills/lint/SKILL.md]",
		"user parts=[text] paths=nil unknown=a skill's instructions whose file cannot be resolved",
		"user parts=[text] paths=nil",
	})
	if got := msgs[1].Parts[1].Text; got != "Run the linter.\n" {
		t.Errorf("the skill's part is %q", got)
	}
}

// TestAgentsInstructions: the instructions Codex gathers from AGENTS.md
// files are each file's text, found by what the files hold: the global one
// (beside the rollout's sessions folder), then the project's from its root
// (the folder with .git) down to the session's folder, an override before
// AGENTS.md. Text that no file holds now (a file changed since) makes the
// message of unknown source.
func TestAgentsInstructions(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, proj := filepath.Join(root, "codex"), filepath.Join(root, "proj")
	sub := filepath.Join(proj, "sub")
	for f, text := range map[string]string{
		filepath.Join(home, "AGENTS.md"):             "Global rule.\n",
		filepath.Join(proj, "AGENTS.md"):             "Project rule.\n",
		filepath.Join(sub, "AGENTS.override.md"):     "Sub override.\n",
		filepath.Join(sub, "AGENTS.md"):              "Not read: the override is.\n",
		filepath.Join(proj, ".git", "HEAD"):          "ref: refs/heads/main\n",
		filepath.Join(root, "AGENTS.md"):             "Above the project's root: not read.\n",
		filepath.Join(home, "sessions", "2026", "x"): "",
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	instructions := func(body string) string {
		return "# AGENTS.md instructions for " + sub + "\n\n<INSTRUCTIONS>\n" + body + "\n</INSTRUCTIONS>"
	}
	msgs := rolloutIn(t, filepath.Join(home, "sessions", "2026", "rollout-new.jsonl"), sub, userText("hi")+
		userText(instructions("Global rule.\n\n--- project-doc ---\n\nProject rule.\n\nSub override."))+
		userText(instructions("Global rule.\n\n--- project-doc ---\n\nAn older project rule.\n\nSub override."))+
		userText("# AGENTS.md instructions for "+sub+"\n\nnot the shape"))
	g, p, o := filepath.Join(home, "AGENTS.md"), filepath.Join(proj, "AGENTS.md"), filepath.Join(sub, "AGENTS.override.md")
	importtest.Compare(t, msgs, []string{
		"user parts=[text] paths=nil",
		"user parts=[text from:" + g + " text from:" + p + " text from:" + o + " text] paths=[" + g + " " + p + " " + o + "]",
		"user parts=[text from:" + g + " text from:" + o + " text] paths=[" + g + " " + o + "] unknown=instructions Codex gathered from AGENTS.md files, not all of which hold them now",
		"user parts=[text] paths=nil",
	})
	var joined strings.Builder
	for _, pt := range msgs[1].Parts {
		joined.WriteString(pt.Text)
	}
	if want := instructions("Global rule.\n\n--- project-doc ---\n\nProject rule.\n\nSub override."); joined.String() != want {
		t.Errorf("the parts join to %q, not the text %q", joined.String(), want)
	}
}
