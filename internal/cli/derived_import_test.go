//go:build unix

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
)

// The three cases on imported sessions of both agents, through the
// real scrim process: after a correctly redacted read of .env, the
// assistant quotes its token, an edit's input repeats two of its lines, and
// `env` prints an AWS key and a GitHub token. An allowed file that shares a
// licence header and common lines with a denied one comes through whole.

const spanImportPolicy = `
default_tier = "limited"

[tiers.trusted]
label = "trusted"
read  = ["/**"]

[tiers.limited]
label   = "limited"
read    = ["%s/**"]
deny    = ["**/.env", "**/secrets/**"]
derived = "redact"
secrets = "redact"

[[models]]
match = "demo/trusted"
tier  = "trusted"
`

const (
	spanEnv     = "API_TOKEN=tok-SECRET-12345\nDATABASE_URL=postgres://app:hunter2pass@db.internal:5432/app\nDEBUG=true\n"
	spanLicence = "// Copyright 2026 The Example Authors. All rights reserved.\n// Use of this source code is governed by the LICENSE file.\n"
	spanVault   = spanLicence + "package vault\n\nimport (\n\t\"errors\"\n)\n\nfunc unsealWithMasterKey(k string) error {\n\treturn nil\n}\n"
	spanMain    = spanLicence + "package main\n\nimport (\n\t\"fmt\"\n)\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n\nfunc check() error {\n\treturn nil\n}\n"
	spanEnvOut  = "HOME=/home/dev\nAWS_ACCESS_KEY_ID=AKIAQYLPMN5HHHFPZAM2\nGITHUB_TOKEN=ghp_R9bX2kQm7LpZ4vT8nW1cY6dF3hJ5sA0eG2uI\nPATH=/usr/bin:/bin\n"
	spanQuote   = "The token is tok-SECRET-12345."
)

var spanSecretValues = []string{"tok-SECRET-12345", "hunter2pass", "AKIAQYLPMN5HHHFPZAM2", "ghp_R9bX2kQm7LpZ4vT8nW1cY6dF3hJ5sA0eG2uI", "unsealWithMasterKey"}

func numbered(text, arrow string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fmt.Fprintf(&b, "%6d%s%s\n", i+1, arrow, l)
	}
	return b.String()
}

func TestDerivedAndSecretsOnImportedSessions(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"claude", "codex"} {
		t.Run(agent, func(t *testing.T) {
			isolate(t)
			root, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			ws := filepath.Join(root, "ws")
			for name, text := range map[string]string{".env": spanEnv, "secrets/vault.go": spanVault, "cmd/main.go": spanMain} {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755))
				must(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
			}
			pol := filepath.Join(root, "policy.toml")
			must(t, os.WriteFile(pol, []byte(fmt.Sprintf(spanImportPolicy, ws)), 0o644))
			store := filepath.Join(root, "store")

			tr := &transcript{}
			oldLines := "API_TOKEN=tok-SECRET-12345\nDATABASE_URL=postgres://app:hunter2pass@db.internal:5432/app"
			if agent == "claude" {
				read := func(id, rel, text string) {
					tr.claudeCall(ws, id, "Read", map[string]any{"file_path": filepath.Join(ws, rel)})
					tr.claudeResult(ws, id, numbered(text, "→"), false, map[string]any{"type": "text", "file": map[string]any{"filePath": filepath.Join(ws, rel), "content": text}})
				}
				read("toolu_1", ".env", spanEnv)
				tr.claude(ws, map[string]any{"type": "assistant", "message": map[string]any{"id": "m2", "role": "assistant", "model": "claude-sonnet-4-5",
					"content": []any{map[string]any{"type": "text", "text": spanQuote}}}})
				tr.claudeCall(ws, "toolu_2", "Edit", map[string]any{"file_path": filepath.Join(ws, "config.py"), "old_string": oldLines, "new_string": "API_TOKEN = os.environ[\"API_TOKEN\"]"})
				tr.claudeResult(ws, "toolu_2", "The file "+filepath.Join(ws, "config.py")+" has been updated.", false, nil)
				tr.claudeBash(ws, "toolu_3", "env", spanEnvOut, false)
				read("toolu_4", "secrets/vault.go", spanVault)
				read("toolu_5", "cmd/main.go", spanMain)
			} else {
				tr.codexStart(ws)
				tr.codexExec("call_1", ws, "cat .env", spanEnv)
				tr.codex("response_item", map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": spanQuote}}})
				patch := "*** Begin Patch\n*** Update File: config.py\n@@\n-" + strings.ReplaceAll(oldLines, "\n", "\n-") + "\n+API_TOKEN = os.environ[\"API_TOKEN\"]\n*** End Patch"
				tr.codex("response_item", map[string]any{"type": "custom_tool_call", "status": "completed", "call_id": "call_2", "name": "apply_patch", "input": patch})
				tr.codex("response_item", map[string]any{"type": "custom_tool_call_output", "call_id": "call_2", "output": "Success. Updated the following files:\nM config.py\n"})
				tr.codexExec("call_3", ws, "env", spanEnvOut)
				tr.codexExec("call_4", ws, "nl -ba secrets/vault.go", numbered(spanVault, "\t"))
				tr.codexExec("call_5", ws, "cat cmd/main.go", spanMain)
			}
			file := tr.write(t, filepath.Join(root, "rollout-2026-12-01T10-00-00-0199.jsonl"))
			// A policy none of whose tiers asks for credentials costs no
			// scan: the import keeps nothing, nor does a preview.
			plainPol, plainStore := filepath.Join(root, "plain.toml"), filepath.Join(root, "plain-store")
			must(t, os.WriteFile(plainPol, []byte(strings.Replace(fmt.Sprintf(spanImportPolicy, ws), "secrets = \"redact\"", "", 1)), 0o644))
			if out, stderr, code := scrim(t, "", "--store", plainStore, "--policy", plainPol, "import", agent, file); code != exitOK {
				t.Fatalf("import: exit %d: %s %s", code, out, stderr)
			}
			plainID := importedSession(t, plainStore, file)
			if _, stderr, code := scrim(t, "", "--store", plainStore, "--policy", plainPol, "redact", plainID, "--model", "openai/limited"); code != exitOK {
				t.Fatalf("redact: exit %d: %s", code, stderr)
			}
			if n := scanRecords(t, plainStore, plainID); n != 0 {
				t.Fatalf("%d scan records with no tier of secrets = \"redact\"", n)
			}

			// With one, the import scans every message it writes as it
			// writes it, and the previews read what it kept.
			if out, stderr, code := scrim(t, "", "--store", store, "--policy", pol, "import", agent, file); code != exitOK {
				t.Fatalf("import: exit %d: %s %s", code, out, stderr)
			}
			id := importedSession(t, store, file)
			imported := scanRecords(t, store, id)
			if _, stats := lookupFindings(t, store, id); stats.Scanned != 0 || stats.Stored != imported || imported == 0 {
				t.Fatalf("the import kept %d scan records; a lookup then read %d and scanned %d", imported, stats.Stored, stats.Scanned)
			}
			if _, stderr, code := scrim(t, "", "--store", store, "--policy", pol, "redact", id, "--model", "demo/trusted"); code != exitOK {
				t.Fatalf("redact: exit %d: %s", code, stderr)
			}

			limited, stderr, code := scrim(t, "", "--store", store, "--policy", pol, "redact", id, "--model", "openai/limited", "--format", "json")
			if code != exitOK {
				t.Fatalf("redact: exit %d: %s", code, stderr)
			}
			var doc struct {
				Messages []json.RawMessage `json:"messages"`
				Report   struct {
					Derived     int `json:"derived"`
					Secrets     int `json:"secrets"`
					DerivedFrom []struct {
						Path string `json:"path"`
					} `json:"derivedFrom"`
					SecretRules []struct {
						Rule string `json:"rule"`
					} `json:"secretRules"`
				} `json:"report"`
			}
			if err := json.Unmarshal([]byte(limited), &doc); err != nil {
				t.Fatalf("redact --format json is not JSON: %v\n%s", err, limited)
			}
			for _, s := range spanSecretValues {
				if strings.Contains(limited, s) {
					t.Fatalf("the limited model is sent %q:\n%s", s, limited)
				}
			}
			envPh := `[Content from ` + filepath.Join(ws, ".env") + ` filtered — trust tier \"limited\" does not have read access]`
			if !strings.Contains(limited, "The token is "+envPh+".") {
				t.Fatalf("the quote is not replaced by the .env placeholder:\n%s", limited)
			}
			if !strings.Contains(limited, `(aws-access-token) — trust tier \"limited\" does not accept credentials]`) ||
				!strings.Contains(limited, `(github-pat) — trust tier \"limited\" does not accept credentials]`) {
				t.Fatalf("env's credentials are not replaced:\n%s", limited)
			}
			for _, raw := range doc.Messages {
				var m struct {
					Parts []struct {
						Kind  string          `json:"kind"`
						Input json.RawMessage `json:"input"`
					} `json:"parts"`
				}
				must(t, json.Unmarshal(raw, &m))
				for _, p := range m.Parts {
					if p.Kind == "tool_call" && !json.Valid(p.Input) {
						t.Fatalf("a tool call's input is no longer JSON: %s", p.Input)
					}
				}
			}
			if doc.Report.Derived < 2 || doc.Report.Secrets != 2 || len(doc.Report.DerivedFrom) != 1 || len(doc.Report.SecretRules) != 2 {
				t.Fatalf("report: %+v", doc.Report)
			}
			// The allowed file, licence header and common lines included,
			// is sent as it was read.
			for _, line := range strings.Split(strings.TrimSuffix(spanMain, "\n"), "\n") {
				if line = strings.TrimSpace(line); line != "" && !strings.Contains(limited, strings.ReplaceAll(line, `"`, `\"`)) {
					t.Fatalf("allowed line %q is not sent:\n%s", line, limited)
				}
			}

			text, _, _ := scrim(t, "", "--store", store, "--policy", pol, "redact", id, "--model", "openai/limited")
			for _, want := range []string{"derived from " + filepath.Join(ws, ".env"), "secret: aws-access-token", "secret: github-pat"} {
				if !strings.Contains(text, want) {
					t.Fatalf("text report lacks %q:\n%s", want, text)
				}
			}

			// Switching back restores everything; the store was never changed.
			trusted, _, _ := scrim(t, "", "--store", store, "--policy", pol, "redact", id, "--model", "demo/trusted")
			for _, s := range spanSecretValues {
				if !strings.Contains(trusted, s) {
					t.Fatalf("the trusted model is not sent %q:\n%s", s, trusted)
				}
			}
			shown, _, _ := scrim(t, "", "--store", store, "show", id, "--format", "json")
			sc := bufio.NewScanner(strings.NewReader(shown))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "filtered") {
					t.Fatalf("a placeholder reached the store: %s", sc.Text())
				}
			}
			if n := scanRecords(t, store, id); n != imported {
				t.Fatalf("%d scan records after the limited preview, %d after the import: it scanned again", n, imported)
			}
			// A second preview reads the stored findings and says the same.
			again, _, _ := scrim(t, "", "--store", store, "--policy", pol, "redact", id, "--model", "openai/limited", "--format", "json")
			if again != limited {
				t.Fatal("a second preview differs from the first")
			}
		})
	}
}

// lookupFindings is secrets.Lookup of the whole of session id: the credentials
// found, and how many of its messages' records it read and scanned anew.
func lookupFindings(t *testing.T, store, id string) (secrets.Found, secrets.Stats) {
	t.Helper()
	st, err := session.Open(store)
	must(t, err)
	defer st.Close()
	msgs, _, err := st.Messages(id)
	must(t, err)
	found, stats, err := secrets.Lookup(st, id, msgs)
	must(t, err)
	return found, stats
}

func scanRecords(t *testing.T, store, id string) int {
	t.Helper()
	st, err := session.Open(store)
	must(t, err)
	defer st.Close()
	n := 0
	must(t, st.ScanRecords(id, 1, 1<<40, func(uint64, []byte) error { n++; return nil }))
	return n
}

// TestWatchScansWhatItImports: the TUI's watcher imports a transcript that
// appears in a watched folder and scans it for credentials as it does, when
// a tier of the policy redacts them, though the model the TUI shows (a
// tier without) never asks for them: every message that can be sent has
// its findings kept, and the credential in the shell's output is found.
func TestWatchScansWhatItImports(t *testing.T) {
	t.Parallel()
	isolate(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	ws := filepath.Join(root, "ws")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, ".env"), []byte(spanEnv), 0o644))
	pol := filepath.Join(root, "policy.toml")
	must(t, os.WriteFile(pol, []byte(fmt.Sprintf(spanImportPolicy, ws)), 0o644))
	projects := filepath.Join(root, "projects")
	must(t, os.MkdirAll(filepath.Join(projects, "-ws"), 0o755))
	store := filepath.Join(root, "store")

	cmd, keys, frames := startTUI(t, "--store", store, "--policy", pol, "--model", "demo/trusted", "--watch", "claude:"+projects)
	waitFor(t, "the TUI to open the store", func() bool {
		_, err := os.Stat(filepath.Join(store, "MANIFEST"))
		return err == nil
	})

	tr := &transcript{}
	tr.claudeCall(ws, "toolu_1", "Read", map[string]any{"file_path": filepath.Join(ws, ".env")})
	tr.claudeResult(ws, "toolu_1", numbered(spanEnv, "→"), false, map[string]any{"type": "text", "file": map[string]any{"filePath": filepath.Join(ws, ".env"), "content": spanEnv}})
	tr.claudeBash(ws, "toolu_2", "env", spanEnvOut, false)
	file := tr.write(t, filepath.Join(root, "s1.jsonl"))
	watched := filepath.Join(projects, "-ws", "s1.jsonl")
	must(t, os.Rename(file, watched)) // appears whole, as a copied file does
	waitFor(t, "the watcher to import the transcript", func() bool { return strings.Contains(frames.String(), "imported ") })
	keys.Write([]byte("q"))
	must(t, cmd.Wait())

	id := importedSession(t, store, watched)
	found, stats := lookupFindings(t, store, id)
	if stats.Scanned != 0 || stats.Stored == 0 {
		t.Fatalf("after the watcher's import a lookup read %d records and scanned %d messages", stats.Stored, stats.Scanned)
	}
	if len(found) == 0 {
		t.Fatal("the records kept hold no finding of the shell's credentials")
	}
}
