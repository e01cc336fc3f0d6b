//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shellTree is a workspace with denied files (.env, .env.devnet.local,
// secrets/) whose every line says "denied-", and allowed ones whose lines
// say "allowed-", so a redaction can be checked byte for byte.
type shellTree struct {
	root, ws, store, policy string
}

const shellPolicy = `
default_tier = "limited"

[tiers.trusted]
label = "trusted"
read  = ["/**", "?:/**"]

[tiers.limited]
label = "limited"
read  = ["%s/**", "C:/Users/me/proj/**"]
deny  = ["**/.env", "**/.env.*", "**/secrets/**"]

[[models]]
match = "demo/trusted"
tier  = "trusted"
`

func newShellTree(t *testing.T) *shellTree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	f := &shellTree{root: root, ws: filepath.Join(root, "ws"), store: filepath.Join(root, "store"), policy: filepath.Join(root, "policy.toml")}
	files := map[string]string{
		"README.md":             "allowed-readme-1 TOKEN is set in .env\nallowed-readme-2\nallowed-readme-3\n",
		"src/app.go":            "package app // allowed-app-1\n// allowed-app-2 reads TOKEN\nfunc f() {} // allowed-app-3\n",
		"docs/notes.md":         "allowed-notes-1 TOKEN rotation\n",
		".env":                  "TOKEN=denied-env-1\nDB=denied-env-2\n",
		".env.devnet.local":     "RPC_URL=https://rpc.example/denied-rpc-1\nRPC_KEY=denied-rpc-2\nOTHER=denied-rpc-3\n",
		"secrets/api.key":       "denied-key-1 TOKEN\ndenied-key-2\n",
		"secrets/config.json":   `{"token": "denied-json-1", "user": "denied-json-2"}` + "\n",
		"secrets/x.txt":         "denied-x-1\n",
		"secrets/store/app.db":  "denied-db-1|row\n",
		"secrets/notes-a-1-b.t": "denied-dash-1 TOKEN\n",
	}
	for name, text := range files {
		p := filepath.Join(f.ws, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(text), 0o644))
	}
	// secrets/sub/../x.txt: by name secrets/x.txt, physically src/../x.txt.
	must(t, os.Symlink("../src", filepath.Join(f.ws, "secrets", "sub")))
	must(t, os.WriteFile(f.policy, []byte(fmt.Sprintf(shellPolicy, f.ws)), 0o644))
	return f
}

// sh runs a command in the workspace for its real output.
func (f *shellTree) sh(t *testing.T, cmd string) string {
	t.Helper()
	c := exec.Command("bash", "-c", cmd)
	c.Dir = f.ws
	out, _ := c.CombinedOutput()
	return string(out)
}

// transcript collects JSON lines.
type transcript struct {
	b strings.Builder
	n int
}

func (tr *transcript) add(v map[string]any) {
	tr.n++
	b, _ := json.Marshal(v)
	tr.b.Write(b)
	tr.b.WriteByte('\n')
}

func (tr *transcript) write(t *testing.T, path string) string {
	t.Helper()
	must(t, os.WriteFile(path, []byte(tr.b.String()), 0o644))
	return path
}

// claude lines, in the shapes Claude Code writes.
func (tr *transcript) claude(cwd string, v map[string]any) {
	v["cwd"], v["sessionId"], v["uuid"] = cwd, "s1", fmt.Sprintf("u%d", tr.n)
	v["timestamp"] = time.Date(2025, 6, 1, 10, 0, tr.n%60, 0, time.UTC).Format(time.RFC3339Nano)
	tr.add(v)
}

func (tr *transcript) claudeCall(cwd, id, tool string, input map[string]any) {
	tr.claude(cwd, map[string]any{"type": "assistant", "message": map[string]any{"id": "m" + id, "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": tool, "input": input}}}})
}

// claudeResult writes a tool_result: content as a string, or (newer Claude
// Code) as an array of text blocks.
func (tr *transcript) claudeResult(cwd, id string, content any, isError bool, tur any) {
	v := map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": isError}}}}
	if tur != nil {
		v["toolUseResult"] = tur
	}
	tr.claude(cwd, v)
}

func (tr *transcript) claudeBash(cwd, id, cmd, out string, array bool) {
	tr.claudeCall(cwd, id, "Bash", map[string]any{"command": cmd, "description": "run it"})
	var content any = out
	if array {
		content = []any{map[string]any{"type": "text", "text": out}}
	}
	tr.claudeResult(cwd, id, content, false, map[string]any{"stdout": out, "stderr": "", "interrupted": false, "isImage": false})
}

// codex lines, in the shapes Codex CLI writes.
func (tr *transcript) codex(typ string, payload map[string]any) {
	tr.add(map[string]any{"timestamp": time.Date(2025, 9, 1, 10, 0, tr.n%60, 0, time.UTC).Format(time.RFC3339Nano), "type": typ, "payload": payload})
}

func (tr *transcript) codexStart(cwd string) {
	tr.codex("session_meta", map[string]any{"id": "0199", "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.150.0", "model_provider": "openai"})
	tr.codex("turn_context", map[string]any{"cwd": cwd, "model": "gpt-5-codex"})
	tr.codex("response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Look around."}}})
}

func (tr *transcript) codexCall(id, name string, args any) {
	b, _ := json.Marshal(args)
	tr.codex("response_item", map[string]any{"type": "function_call", "name": name, "arguments": string(b), "call_id": id})
}

func (tr *transcript) codexOutput(id string, out any) {
	tr.codex("response_item", map[string]any{"type": "function_call_output", "call_id": id, "output": out})
}

// codexExec is an exec_command call and its output as unified exec prints it.
func (tr *transcript) codexExec(id, cwd, cmd, out string) {
	tr.codexCall(id, "exec_command", map[string]any{"cmd": cmd, "workdir": cwd, "yield_time_ms": 10000})
	tr.codexOutput(id, "Chunk ID: 3f9a1c\nWall time: 0.0102 seconds\nProcess exited with code 0\nOriginal token count: 40\nOutput:\n"+out)
}

// road is one way a denied file's content reaches a transcript.
type road struct {
	name, agent string
	build       func(t *testing.T, f *shellTree, tr *transcript)
	visible     []string // allowed lines that must still be sent to limited
}

func shellRoads() []road {
	claude := func(name string, visible []string, build func(t *testing.T, f *shellTree, tr *transcript)) road {
		return road{name: name, agent: "claude", build: build, visible: visible}
	}
	codex := func(name string, visible []string, build func(t *testing.T, f *shellTree, tr *transcript)) road {
		return road{name: name, agent: "codex", build: build, visible: visible}
	}
	// A Claude Bash call and its real output.
	cbash := func(cmd string, array bool) func(t *testing.T, f *shellTree, tr *transcript) {
		return func(t *testing.T, f *shellTree, tr *transcript) {
			tr.claudeBash(f.ws, "toolu_1", cmd, f.sh(t, cmd), array)
		}
	}
	// A Codex exec_command call and its real output.
	cexec := func(cmd string) func(t *testing.T, f *shellTree, tr *transcript) {
		return func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			tr.codexExec("call_1", f.ws, cmd, f.sh(t, cmd))
		}
	}
	readme := []string{"allowed-readme-1"}
	return []road{
		claude("Bash sed -n", nil, cbash("sed -n '1,20p' .env", false)),
		claude("Bash nl | sed, array content", nil, cbash("nl -ba secrets/api.key | sed -n '1,5p'", true)),
		claude("Bash cat | grep | head", nil, cbash(`cat .env.devnet.local | grep -iE "rpc|url" | head`, false)),
		claude("Bash grep -rn, split per file", []string{"allowed-app-2", "allowed-readme-1", "allowed-notes-1"}, cbash("grep -rn TOKEN . | head -20", false)),
		claude("Bash head of two files", readme, cbash("head -n 50 README.md .env", false)),
		claude("Bash cat two files", nil, cbash("cat README.md .env", false)),
		claude("Bash cd then cat", nil, cbash("cd secrets && cat api.key", false)),
		claude("Bash find -exec cat", nil, cbash("find . -name '*.key' -exec cat {} +", false)),
		claude("Bash awk, cut, base64, jq", nil, cbash("awk -F= '{print $2}' .env; cut -c1-8 secrets/api.key; base64 secrets/x.txt; jq -r .token secrets/config.json", false)),
		claude("Bash .. after a symlink", nil, cbash("cat secrets/sub/../x.txt 2>/dev/null; cat secrets/x.txt", false)),
		claude("Bash error result still holds content", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			out := "Exit code 1\n" + f.sh(t, "cat .env; false")
			tr.claudeCall(f.ws, "toolu_1", "Bash", map[string]any{"command": "cat .env; false"})
			tr.claudeResult(f.ws, "toolu_1", out, true, "Error: "+out)
		}),
		claude("Bash in the background, then BashOutput", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.claudeCall(f.ws, "toolu_1", "Bash", map[string]any{"command": "cat .env", "run_in_background": true})
			tr.claudeResult(f.ws, "toolu_1", "Command running in background with ID: bash_1", false, map[string]any{"stdout": "", "backgroundTaskId": "bash_1"})
			tr.claudeCall(f.ws, "toolu_2", "BashOutput", map[string]any{"bash_id": "bash_1"})
			tr.claudeResult(f.ws, "toolu_2", "<status>completed</status>\n<stdout>\n"+f.sh(t, "cat .env")+"</stdout>", false, nil)
		}),
		claude("Grep content, context cut off by head_limit", []string{"allowed-app-2"}, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.claudeCall(f.ws, "toolu_1", "Grep", map[string]any{"pattern": "TOKEN", "output_mode": "content", "-n": true, "-A": 1, "head_limit": 3})
			out := "src/app.go:2:// allowed-app-2 reads TOKEN\nsrc/app.go-3-func f() {} // allowed-app-3\n" + f.ws + "/.env-2-DB=denied-env-2"
			tr.claudeResult(f.ws, "toolu_1", out, false, map[string]any{"mode": "content", "numFiles": 0, "filenames": []any{}, "content": out})
		}),
		claude("Grep content without -n, bare names", []string{"allowed-notes-1"}, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.claudeCall(f.ws, "toolu_1", "Grep", map[string]any{"pattern": "TOKEN", "output_mode": "content", "-n": false})
			out := ".env:TOKEN=denied-env-1\ndocs/notes.md:allowed-notes-1 TOKEN rotation"
			tr.claudeResult(f.ws, "toolu_1", out, false, map[string]any{"mode": "content"})
		}),
		claude("isMeta replay, older two-text form", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.claude(f.ws, map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text",
				"text": "<system-reminder>\nCalled the Read tool with the following input: {\"file_path\":\"" + f.ws + "/.env\"}\n</system-reminder>"}}}})
			tr.claude(f.ws, map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text",
				"text": "<system-reminder>\nResult of calling the Read tool: \"     1→TOKEN=denied-env-1\\n     2→DB=denied-env-2\"\n</system-reminder>"}}}})
		}),
		claude("isMeta replay, newer one-text form", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.claude(f.ws, map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text",
				"text": "Called the Read tool with the following input: {\"file_path\":\"secrets/api.key\"}\nResult of calling the Read tool:\n1\tdenied-key-1 TOKEN\n2\tdenied-key-2\n"}}}})
		}),
		claude("tool_result written before its tool_use", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.claudeResult(f.ws, "toolu_9", "     1→denied-key-1 TOKEN", false, map[string]any{"type": "text", "file": map[string]any{"filePath": f.ws + "/secrets/api.key"}})
			tr.claudeCall(f.ws, "toolu_9", "Read", map[string]any{"file_path": f.ws + "/secrets/api.key"})
		}),
		claude("Read through .. after a symlink", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.claudeCall(f.ws, "toolu_1", "Read", map[string]any{"file_path": f.ws + "/secrets/sub/../x.txt"})
			tr.claudeResult(f.ws, "toolu_1", "     1→denied-x-1", false, nil)
		}),
		claude("a Windows transcript", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			cwd := `C:\Users\me\proj`
			tr.claudeCall(cwd, "toolu_1", "Read", map[string]any{"file_path": `C:\Users\me\proj\.env`})
			tr.claudeResult(cwd, "toolu_1", "     1→TOKEN=denied-env-1", false, nil)
			tr.claudeBash(cwd, "toolu_2", `cat "C:\Users\me\proj\secrets\api.key"`, "denied-key-1 TOKEN\n", false)
			tr.claudeCall(cwd, "toolu_3", "Grep", map[string]any{"pattern": "TOKEN", "output_mode": "content"})
			tr.claudeResult(cwd, "toolu_3", `C:\Users\me\proj\secrets\api.key:1:denied-key-1 TOKEN`+"\n"+`C:\Users\me\proj\README.md:1:allowed-readme-1 TOKEN is set in .env`, false, map[string]any{"mode": "content"})
		}),

		codex("exec_command sed -n, no events", nil, cexec("sed -n '1,20p' .env")),
		codex("exec_command nl | sed", nil, cexec("nl -ba secrets/api.key | sed -n '1,5p'")),
		codex("exec_command rg-style search, split", []string{"allowed-app-2", "allowed-readme-1"}, cexec("grep -rn TOKEN src README.md .env secrets")),
		codex("shell with the JSON output form", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			tr.codexCall("call_1", "shell", map[string]any{"command": []string{"bash", "-lc", "cat .env"}, "workdir": f.ws})
			out, _ := json.Marshal(map[string]any{"output": f.sh(t, "cat .env"), "metadata": map[string]any{"exit_code": 0, "duration_seconds": 0.1}})
			tr.codexOutput("call_1", string(out))
		}),
		codex("shell_command", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			tr.codexCall("call_1", "shell_command", map[string]any{"command": "tail -n 2 .env.devnet.local", "workdir": f.ws})
			tr.codexOutput("call_1", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n"+f.sh(t, "tail -n 2 .env.devnet.local"))
		}),
		codex("parsed_cmd under-reports head of two files", readme, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			tr.codexExec("call_1", f.ws, "head -n 50 README.md .env", f.sh(t, "head -n 50 README.md .env"))
			tr.codex("event_msg", map[string]any{"type": "exec_command_end", "call_id": "call_1", "cwd": f.ws, "exit_code": 0,
				"parsed_cmd": []any{map[string]any{"type": "read", "cmd": "head -n 50 README.md .env", "name": "README.md", "path": "README.md"}}})
		}),
		codex("local_shell_call", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			tr.codex("response_item", map[string]any{"type": "local_shell_call", "call_id": "call_1", "status": "completed",
				"action": map[string]any{"type": "exec", "command": []string{"bash", "-lc", "cat secrets/api.key"}, "working_directory": f.ws}})
			tr.codexOutput("call_1", `{"output":"denied-key-1 TOKEN\ndenied-key-2\n","metadata":{"exit_code":0,"duration_seconds":0.0}}`)
		}),
		codex("container.exec", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			tr.codexCall("call_1", "container.exec", map[string]any{"command": []string{"cat", ".env"}, "workdir": f.ws})
			tr.codexOutput("call_1", f.sh(t, "cat .env"))
		}),
		codex("write_stdin continues a running command", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			tr.codexCall("call_1", "exec_command", map[string]any{"cmd": "sleep 1; cat .env", "workdir": f.ws})
			tr.codexOutput("call_1", "Chunk ID: a1\nWall time: 1.0 seconds\nProcess running with session ID 42\nOutput:\n")
			tr.codexCall("call_2", "write_stdin", map[string]any{"session_id": 42, "chars": ""})
			tr.codexOutput("call_2", "Chunk ID: a2\nWall time: 0.5 seconds\nProcess exited with code 0\nOutput:\n"+f.sh(t, "cat .env"))
		}),
		codex("code mode exec and wait", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			js := `const r = await tools.exec_command({cmd: "cat secrets/api.key", workdir: "` + f.ws + `"});` + "\ntext(r.output);"
			tr.codex("response_item", map[string]any{"type": "custom_tool_call", "status": "completed", "call_id": "call_1", "name": "exec", "input": js})
			tr.codex("response_item", map[string]any{"type": "custom_tool_call_output", "call_id": "call_1", "output": []any{
				map[string]any{"type": "input_text", "text": "Script running with cell ID 7\nWall time 10.0 seconds\nOutput:\n"},
				map[string]any{"type": "input_text", "text": "denied-key-1 TOKEN"}}})
			tr.codexCall("call_2", "wait", map[string]any{"cell_id": "7"})
			tr.codexOutput("call_2", "Script completed\nWall time 11.0 seconds\nOutput:\ndenied-key-2\n")
		}),
		codex("git show and git diff", []string{"allowed-app-2"}, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			tr.codexExec("call_1", f.ws, "git show HEAD:.env", "TOKEN=denied-env-1\n")
			tr.codexExec("call_2", f.ws, "git diff", "diff --git a/src/app.go b/src/app.go\n--- a/src/app.go\n+++ b/src/app.go\n@@ -2 +2 @@\n-// old\n+// allowed-app-2 reads TOKEN\ndiff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-TOKEN=old\n+TOKEN=denied-env-1\n")
		}),
		codex("sqlite3", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(f.ws)
			tr.codexExec("call_1", f.ws, `sqlite3 secrets/store/app.db "select * from users"`, "denied-db-1|row\n")
		}),
		codex("PowerShell on Windows", nil, func(t *testing.T, f *shellTree, tr *transcript) {
			tr.codexStart(`C:\Users\me\proj`)
			tr.codexCall("call_1", "shell_command", map[string]any{"command": `Get-Content -Path .env -TotalCount 5`, "workdir": `C:\Users\me\proj`})
			tr.codexOutput("call_1", "Exit code: 0\nWall time: 0.2 seconds\nOutput:\nTOKEN=denied-env-1\r\n")
			tr.codexCall("call_2", "shell", map[string]any{"command": []string{"powershell.exe", "-Command", `gc secrets\api.key | Select-Object -First 2`}, "workdir": `C:\Users\me\proj`})
			tr.codexOutput("call_2", `{"output":"denied-key-1 TOKEN\r\n","metadata":{"exit_code":0,"duration_seconds":0.1}}`)
		}),
	}
}

// TestShellReadsImportRedacted: for every road by which a denied file's
// content reaches a Claude Code or Codex transcript through a shell command
// (or the other roads the importers now follow), the limited model is sent
// no byte of it, the trusted one all of it, and allowed lines read by the
// same command stay visible where the output names its files.
func TestShellReadsImportRedacted(t *testing.T) {
	t.Parallel()
	for i, r := range shellRoads() {
		t.Run(r.agent+" "+r.name, func(t *testing.T) {
			isolate(t)
			f := newShellTree(t)
			tr := &transcript{}
			r.build(t, f, tr)
			file := tr.write(t, filepath.Join(f.root, fmt.Sprintf("rollout-%02d.jsonl", i)))
			out, stderr, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "import", r.agent, file)
			if code != exitOK {
				t.Fatalf("import: exit %d: %s %s", code, out, stderr)
			}
			if strings.Contains(out, " 0 messages") || strings.Contains(out, "skipped line") && !strings.Contains(out, " 0 skipped lines") {
				t.Fatalf("import: %s", out)
			}
			id := importedSession(t, f.store, file)
			limited, stderr, code := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", id, "--model", "openai/limited")
			if code != exitOK {
				t.Fatalf("redact: exit %d: %s", code, stderr)
			}
			if strings.Contains(limited, "denied-") {
				t.Fatalf("BYPASS: the limited model is sent denied content:\n%s", limited)
			}
			for _, want := range r.visible {
				if !strings.Contains(limited, want) {
					t.Fatalf("allowed line %q is not sent to the limited model:\n%s", want, limited)
				}
			}
			trusted, _, _ := scrim(t, "", "--store", f.store, "--policy", f.policy, "redact", id, "--model", "demo/trusted")
			if !strings.Contains(trusted, "denied-") {
				t.Fatalf("the trusted model is not sent the content, so the test proves nothing:\n%s", trusted)
			}
		})
	}
}
