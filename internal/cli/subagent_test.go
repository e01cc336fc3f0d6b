//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A subagent reads a denied file; its answer (the Task result) and the main
// conversation's next message repeat what it read. The subagent's read is
// in its own session, so the main session's fingerprints must come from it
// too: with derived = "redact" neither repetition is sent, even when the
// tier withholds the Task result as of unknown source, and the trusted
// model is sent everything.

const subagentPolicy = `
default_tier = "limited"

[tiers.trusted]
label = "trusted"
read  = ["/**"]

[tiers.limited]
label          = "limited"
read           = ["/**"]
deny           = ["**/secrets/**"]
derived        = "redact"
unknown_source = "%s"

[[models]]
match = "demo/trusted"
tier  = "trusted"
`

// alsoFrom begins the report's line that names one session of the agent run.
const alsoFrom = "also from what 1 session of its agent run withheld (subagents, and parents up to its end): "

const (
	subagentNotes = "LAUNCH_CODE=PURPLE-ELEPHANT-4242-ZEBRA\nThe quarterly numbers are confidential and must never leak out\n"
	subagentValue = "PURPLE-ELEPHANT-4242-ZEBRA"
)

// subagentLine is a line of the subagent's transcript: a sidechain line of
// session s1 with its agentId, chained to the line before by parentUuid as
// Claude Code writes them.
func subagentLine(tr *transcript, cwd, agent string, v map[string]any) {
	v["isSidechain"], v["agentId"] = true, agent
	v["cwd"], v["sessionId"], v["uuid"] = cwd, "s1", fmt.Sprintf("%s-%d", agent, tr.n)
	if tr.n > 0 {
		v["parentUuid"] = fmt.Sprintf("%s-%d", agent, tr.n-1)
	}
	v["timestamp"] = time.Date(2025, 6, 1, 10, 0, 30+tr.n, 0, time.UTC).Format(time.RFC3339Nano)
	tr.add(v)
}

// denyFixture is a workspace whose secrets/notes.env the policy's limited
// tier may not read (derived = "redact", unknown_source as given), and a
// store beside it.
type denyFixture struct {
	t                           *testing.T
	root, ws, notes, pol, store string
}

func newDenyFixture(t *testing.T, unknown string) *denyFixture {
	t.Helper()
	isolate(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	f := &denyFixture{t: t, root: root, ws: filepath.Join(root, "ws"), pol: filepath.Join(root, "policy.toml"), store: filepath.Join(root, "store")}
	f.notes = filepath.Join(f.ws, "secrets", "notes.env")
	must(t, os.MkdirAll(filepath.Dir(f.notes), 0o755))
	must(t, os.WriteFile(f.notes, []byte(subagentNotes), 0o644))
	must(t, os.WriteFile(f.pol, []byte(fmt.Sprintf(subagentPolicy, unknown)), 0o644))
	return f
}

// run runs scrim on the fixture's store and policy, and fails the test
// unless it exits 0.
func (f *denyFixture) run(args ...string) string {
	f.t.Helper()
	out, stderr, code := scrim(f.t, "", append([]string{"--store", f.store, "--policy", f.pol}, args...)...)
	if code != exitOK {
		f.t.Fatalf("%q: exit %d: %s", args, code, stderr)
	}
	return out
}

// subagentTranscripts writes the main conversation and the subagent's, as
// Claude Code 2.1 does (the subagent in <session>/subagents/agent-ID.jsonl)
// or, inline, as Claude Code 1.x did (sidechain lines in the session's
// file). It returns the files in the order given to import.
func subagentTranscripts(t *testing.T, dir, ws string, inline bool) (main string, sub string) {
	t.Helper()
	notes := filepath.Join(ws, "secrets", "notes.env")
	answer := "The notes say:\n" + strings.TrimSuffix(subagentNotes, "\n")

	side := &transcript{}
	agent := "a1b2"
	subagentLine(side, ws, agent, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Read secrets/notes.env and report"}})
	subagentLine(side, ws, agent, map[string]any{"type": "assistant", "message": map[string]any{"id": "ms1", "role": "assistant", "model": "claude-haiku-4-5",
		"content": []any{map[string]any{"type": "tool_use", "id": "toolu_s1", "name": "Read", "input": map[string]any{"file_path": notes}}}}})
	subagentLine(side, ws, agent, map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_s1", "content": numbered(subagentNotes, "→")}}},
		"toolUseResult": map[string]any{"type": "text", "file": map[string]any{"filePath": notes, "content": subagentNotes}}})
	subagentLine(side, ws, agent, map[string]any{"type": "assistant", "message": map[string]any{"id": "ms2", "role": "assistant", "model": "claude-haiku-4-5",
		"content": []any{map[string]any{"type": "text", "text": answer}}}})

	tr := &transcript{}
	tr.claude(ws, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "What is in the notes?"}})
	tr.claudeCall(ws, "toolu_1", "Task", map[string]any{"description": "Read notes", "prompt": "Read secrets/notes.env and report", "subagent_type": "Explore"})
	if inline {
		tr.b.WriteString(side.b.String())
	}
	tr.claudeResult(ws, "toolu_1", []any{map[string]any{"type": "text", "text": answer}, map[string]any{"type": "text", "text": "agentId: " + agent + " (for resuming)"}}, false,
		map[string]any{"status": "completed", "agentId": agent, "content": []any{map[string]any{"type": "text", "text": answer}}})
	tr.claude(ws, map[string]any{"type": "assistant", "message": map[string]any{"id": "m9", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "text", "text": "The launch code is " + subagentValue + "."}}}})

	main = tr.write(t, filepath.Join(dir, "s1.jsonl"))
	if inline {
		return main, ""
	}
	must(t, os.MkdirAll(filepath.Join(dir, "s1", "subagents"), 0o755))
	return main, side.write(t, filepath.Join(dir, "s1", "subagents", "agent-"+agent+".jsonl"))
}

func TestSubagentReadsReachTheParent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, unknown string
		inline        bool
	}{
		{"subagent file, unknown source sent", "send", false},
		{"subagent file, unknown source withheld", "withhold", false},
		{"sidechain, unknown source sent", "send", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newDenyFixture(t, tc.unknown)
			ws, store, run := f.ws, f.store, f.run
			dir := filepath.Join(f.root, "projects", "-ws")
			must(t, os.MkdirAll(dir, 0o755))
			mainFile, subFile := subagentTranscripts(t, dir, ws, tc.inline)

			// The main conversation first, as a watch may import it: its
			// subagent is not known yet, and what it gathers and counts is
			// kept.
			run("import", "claude", mainFile)
			id := importedSession(t, store, mainFile)
			before := run("redact", id, "--model", "openai/limited", "--format", "json")
			run("sessions", "--model", "openai/limited", "--format", "json")
			if !tc.inline {
				if !strings.Contains(before, subagentValue) {
					t.Fatalf("before its subagent is imported, nothing of the main session is denied:\n%s", before)
				}
				run("import", "claude", subFile)
			}

			for _, pass := range []string{"first", "kept"} {
				out := run("redact", id, "--model", "openai/limited", "--format", "json")
				if strings.Contains(out, subagentValue) || strings.Contains(out, "quarterly numbers") {
					t.Fatalf("%s preview sends what the subagent read:\n%s", pass, out)
				}
				var doc struct {
					Messages []struct {
						Parts []struct {
							Text string `json:"text"`
						} `json:"parts"`
					} `json:"messages"`
					Report struct {
						Derived     int `json:"derived"`
						DerivedFrom []struct {
							Path  string `json:"path"`
							Spans int    `json:"spans"`
						} `json:"derivedFrom"`
						Related []string `json:"related"`
					} `json:"report"`
				}
				must(t, json.Unmarshal([]byte(out), &doc))
				notes := filepath.Join(ws, "secrets", "notes.env")
				want := 1 // the main conversation's last message
				if tc.unknown == "send" {
					want = 2 // and the Task result's two lines, one span
				}
				if doc.Report.Derived != want || len(doc.Report.DerivedFrom) != 1 || doc.Report.DerivedFrom[0].Path != notes {
					t.Fatalf("%s preview's report: %+v, want %d spans derived from %s", pass, doc.Report, want, notes)
				}
				if len(doc.Report.Related) != 1 || doc.Report.Related[0] == id {
					t.Fatalf("%s preview's report names related sessions %q, want the subagent's", pass, doc.Report.Related)
				}
				if text := run("redact", id, "--model", "openai/limited"); !strings.Contains(text, "\n    "+alsoFrom+doc.Report.Related[0]+"\n") {
					t.Fatalf("the text report does not name the subagent:\n%s", text)
				}
				last := doc.Messages[len(doc.Messages)-1].Parts[0].Text
				if wantText := "The launch code is [Content from " + notes + ` filtered — trust tier "limited" does not have read access].`; last != wantText {
					t.Fatalf("%s preview's last message %q, want %q", pass, last, wantText)
				}
			}
			// The count kept before the subagent came is not taken.
			var list []struct {
				ID     string `json:"id"`
				Counts struct {
					Derived int  `json:"derived"`
					Kept    bool `json:"kept"`
				} `json:"counts"`
			}
			must(t, json.Unmarshal([]byte(run("sessions", "--model", "openai/limited", "--format", "json")), &list))
			for _, s := range list {
				if s.ID == id && s.Counts.Derived == 0 {
					t.Fatalf("the main session's count says nothing derived: %+v", s)
				}
			}
			// Switching back to the trusted model restores everything.
			if out := run("redact", id, "--model", "demo/trusted", "--format", "json"); !strings.Contains(out, subagentValue) {
				t.Fatalf("the trusted model is not sent what was stored:\n%s", out)
			}
		})
	}
}

// Codex's multi-agent tools: the parent spawns an agent and waits for its
// answer; the agent's rollout (forked: it first repeats its parent's
// session_meta) reads the denied file with a shell command. The parent's
// wait result and its last message are not sent to the limited tier.
func TestCodexSubagentReadsReachTheParent(t *testing.T) {
	t.Parallel()
	f := newDenyFixture(t, "send")
	root, ws, store, run := f.root, f.ws, f.store, f.run
	day := filepath.Join(root, "sessions", "2025", "09", "01")
	must(t, os.MkdirAll(day, 0o755))
	const parentID, childID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0199a1b2-ffff-7e5f-8a9b-0c1d2e3f4a5b"
	answer := "The notes say:\n" + strings.TrimSuffix(subagentNotes, "\n")

	parent := &transcript{}
	parent.codex("session_meta", map[string]any{"id": parentID, "cwd": ws, "originator": "codex_cli_rs", "cli_version": "0.150.0", "model_provider": "openai", "source": "cli"})
	parent.codex("turn_context", map[string]any{"cwd": ws, "model": "gpt-5-codex"})
	parent.codex("response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "What is in the notes?"}}})
	parent.codexCall("call_1", "spawn_agent", map[string]any{"message": "Read secrets/notes.env and report", "agent_type": "explorer"})
	parent.codexOutput("call_1", `{"agent_id":"`+childID+`","nickname":"Hypatia"}`)
	parent.codexCall("call_2", "wait", map[string]any{"ids": []string{childID}, "timeout_ms": 30000})
	parent.codexOutput("call_2", `{"status":{"`+childID+`":{"completed":"`+strings.ReplaceAll(answer, "\n", `\n`)+`"}},"timed_out":false}`)
	parent.codex("response_item", map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "The launch code is " + subagentValue + "."}}})
	parentFile := parent.write(t, filepath.Join(day, "rollout-2025-09-01T10-00-00-"+parentID+".jsonl"))

	child := &transcript{}
	child.codex("session_meta", map[string]any{"id": childID, "forked_from_id": parentID, "cwd": ws, "model_provider": "openai", "agent_nickname": "Hypatia", "agent_role": "explorer",
		"source": map[string]any{"subagent": map[string]any{"thread_spawn": map[string]any{"parent_thread_id": parentID, "depth": 1}}}})
	child.codex("session_meta", map[string]any{"id": parentID, "cwd": ws, "model_provider": "openai", "source": "cli"})
	child.codex("response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "What is in the notes?"}}})
	child.codex("turn_context", map[string]any{"cwd": ws, "model": "gpt-5-codex-mini"})
	child.codex("response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Read secrets/notes.env and report"}}})
	child.codexExec("call_c1", ws, "cat secrets/notes.env", subagentNotes)
	child.codex("response_item", map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": answer}}})
	child.write(t, filepath.Join(day, "rollout-2025-09-01T10-00-05-"+childID+".jsonl"))

	run("import", "codex", filepath.Join(root, "sessions"))
	if list := run("sessions"); !strings.Contains(list, "subagent: Read secrets/notes.env and report") {
		t.Fatalf("the agent's rollout is not titled as a subagent:\n%s", list)
	}
	id := importedSession(t, store, parentFile)
	out := run("redact", id, "--model", "openai/limited")
	if strings.Contains(out, subagentValue) || strings.Contains(out, "quarterly") {
		t.Fatalf("the parent sends what its agent read:\n%s", out)
	}
	if strings.Contains(out, "#3     unknown source") {
		t.Errorf("spawn_agent's result (the agent's ID) is taken for an answer:\n%s", out)
	}
	for _, want := range []string{
		"#5 tool wait (openai/gpt-5-codex)\n  · unknown source, sent unchecked: a subagent's answer, which may repeat what it read\n",
		"derived from " + filepath.Join(ws, "secrets", "notes.env") + "  — 3 spans",
		alsoFrom,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the parent's preview lacks %q:\n%s", want, out)
		}
	}
}

// A Gemini CLI subagent (chats/<the parent's session ID>/<its own>.jsonl,
// kind "subagent") reads the denied file; the parent's agent-tool result and
// its last message repeat it, and are not sent to the limited tier.
func TestGeminiSubagentReadsReachTheParent(t *testing.T) {
	t.Parallel()
	f := newDenyFixture(t, "send")
	root, ws, notes, store := f.root, f.ws, f.notes, f.store
	const parentID, childID = "8f3c2d1e-1111-4000-8000-000000000001", "4b5a6c7d-2222-4000-8000-000000000002"
	chats := filepath.Join(root, "gemini", "tmp", "ab12", "chats")
	must(t, os.MkdirAll(filepath.Join(chats, parentID), 0o755))
	answer := "The notes say:\n" + strings.TrimSuffix(subagentNotes, "\n")
	write := func(path string, records ...map[string]any) string { return jsonLines(t, path, records...) }
	call := func(id, name string, args map[string]any, out string) map[string]any {
		return map[string]any{"id": id, "name": name, "args": args, "status": "success", "timestamp": "2026-01-05T10:00:03.000Z",
			"result": []any{map[string]any{"functionResponse": map[string]any{"id": id, "name": name, "response": map[string]any{"output": out}}}}}
	}
	gemini := func(id, text string, calls ...map[string]any) map[string]any {
		r := map[string]any{"id": id, "timestamp": "2026-01-05T10:00:02.000Z", "type": "gemini", "content": text, "model": "gemini-2.5-pro"}
		if calls != nil {
			r["toolCalls"] = calls
		}
		return r
	}
	user := func(id, text string) map[string]any {
		return map[string]any{"id": id, "timestamp": "2026-01-05T10:00:01.000Z", "type": "user", "content": []any{map[string]any{"text": text}}}
	}
	parentFile := write(filepath.Join(chats, "session-2026-01-05T10-00-"+parentID[:8]+".jsonl"),
		map[string]any{"sessionId": parentID, "projectHash": "ab12", "startTime": "2026-01-05T10:00:00.000Z", "lastUpdated": "2026-01-05T10:00:09.000Z", "kind": "main", "directories": []string{ws}},
		user("u1", "What is in the notes?"),
		gemini("g1", "", call("codebase_investigator-1", "codebase_investigator", map[string]any{"objective": "Read secrets/notes.env"}, answer)),
		gemini("g2", "The launch code is "+subagentValue+"."))
	write(filepath.Join(chats, parentID, childID+".jsonl"),
		map[string]any{"sessionId": childID, "projectHash": "ab12", "startTime": "2026-01-05T10:00:01.000Z", "lastUpdated": "2026-01-05T10:00:02.000Z", "kind": "subagent", "directories": []string{ws}},
		user("s1", "Read secrets/notes.env"),
		gemini("s2", "", call("read_file-1", "read_file", map[string]any{"file_path": notes}, subagentNotes)),
		gemini("s3", answer))

	f.run("import", "gemini", filepath.Join(root, "gemini", "tmp"))
	out := f.run("redact", importedSession(t, store, parentFile), "--model", "openai/limited")
	if strings.Contains(out, subagentValue) || strings.Contains(out, "quarterly") {
		t.Fatalf("the parent sends what its subagent read:\n%s", out)
	}
	if !strings.Contains(out, "derived from "+notes+"  — ") || !strings.Contains(out, alsoFrom) {
		t.Fatalf("the parent's report does not say where the spans come from:\n%s", out)
	}
}

// The other way: the parent reads the denied file, then hands its value to
// a subagent in the Task prompt. The subagent's session, previewed on its
// own, withholds it: its figures rest on its parent up to its own last
// message, so the parent running on after it does not make them be made
// again.
func TestParentReadsReachTheSubagent(t *testing.T) {
	t.Parallel()
	f := newDenyFixture(t, "send")
	dir := filepath.Join(f.root, "projects", "-ws")
	must(t, os.MkdirAll(filepath.Join(dir, "s1", "subagents"), 0o755))
	at := func(sec int) string {
		return time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano)
	}
	n := 0
	line := func(b *strings.Builder, sec int, agent string, v map[string]any) {
		n++
		v["cwd"], v["sessionId"], v["uuid"], v["timestamp"] = f.ws, "s1", fmt.Sprintf("l%d", n), at(sec)
		if agent != "" {
			v["isSidechain"], v["agentId"] = true, agent
		}
		j, err := json.Marshal(v)
		must(t, err)
		b.Write(j)
		b.WriteByte('\n')
	}
	prompt := "Check where LAUNCH_CODE=" + subagentValue + " is used"
	var parent, sub strings.Builder
	line(&parent, 1, "", map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Is the launch code used anywhere?"}})
	line(&parent, 2, "", map[string]any{"type": "assistant", "message": map[string]any{"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": map[string]any{"file_path": f.notes}}}}})
	line(&parent, 3, "", map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": numbered(subagentNotes, "→")}}}})
	line(&parent, 4, "", map[string]any{"type": "assistant", "message": map[string]any{"id": "m2", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "tool_use", "id": "toolu_2", "name": "Task", "input": map[string]any{"description": "Find uses", "prompt": prompt, "subagent_type": "Explore"}}}}})
	line(&sub, 5, "b9", map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
	line(&sub, 6, "b9", map[string]any{"type": "assistant", "message": map[string]any{"id": "s1", "role": "assistant", "model": "claude-haiku-4-5",
		"content": []any{map[string]any{"type": "text", "text": "Nothing in the code uses " + subagentValue + "."}}}})
	line(&parent, 7, "", map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_2", "content": "Nothing in the code uses it."}}}})
	mainFile := filepath.Join(dir, "s1.jsonl")
	must(t, os.WriteFile(mainFile, []byte(parent.String()), 0o644))
	subFile := filepath.Join(dir, "s1", "subagents", "agent-b9.jsonl")
	must(t, os.WriteFile(subFile, []byte(sub.String()), 0o644))

	f.run("import", "claude", dir)
	subID, parentID := importedSession(t, f.store, subFile), importedSession(t, f.store, mainFile)
	out := f.run("redact", subID, "--model", "openai/limited")
	if strings.Contains(out, subagentValue) {
		t.Fatalf("the subagent's session sends what its parent read:\n%s", out)
	}
	if !strings.Contains(out, "    derived from "+f.notes+"  — 2 spans\n") || !strings.Contains(out, "    "+alsoFrom+parentID+"\n") {
		t.Fatalf("the subagent's report does not say where the spans come from:\n%s", out)
	}

	// Counted once; then the parent runs on, after the subagent's end.
	counts := func() map[string]bool {
		var list []struct {
			ID     string `json:"id"`
			Counts struct {
				Derived int  `json:"derived"`
				Kept    bool `json:"kept"`
			} `json:"counts"`
		}
		must(t, json.Unmarshal([]byte(f.run("sessions", "--model", "openai/limited", "--format", "json")), &list))
		kept := map[string]bool{}
		for _, s := range list {
			kept[s.ID] = s.Counts.Kept
			if s.ID == subID && s.Counts.Derived != 2 {
				t.Fatalf("the subagent's count: %+v, want 2 derived spans", s)
			}
		}
		return kept
	}
	counts()
	var more strings.Builder
	line(&more, 60, "", map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "Thanks. Now read the README."}})
	line(&more, 61, "", map[string]any{"type": "assistant", "message": map[string]any{"id": "m3", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "text", "text": "Reading it."}}}})
	fh, err := os.OpenFile(mainFile, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = fh.WriteString(more.String())
	must(t, err)
	must(t, fh.Close())
	f.run("import", "claude", dir)
	if kept := counts(); !kept[subID] {
		t.Fatalf("the parent's later messages made the subagent's count be made again: kept %v", kept)
	}
}

// jsonLines writes records to path, a JSON document a line, as Gemini CLI
// writes its chats, and returns path.
func jsonLines(t *testing.T, path string, records ...map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range records {
		j, err := json.Marshal(r)
		must(t, err)
		b.Write(j)
		b.WriteByte('\n')
	}
	must(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}
