package tools

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
)

const secret = "sk-live-0123456789"

func TestDeniedReadReturnsNoContent(t *testing.T) {
	root := tempTree(t, map[string]string{
		"secrets/k":      secret + "\n",
		"public/ok.txt":  "fine\n",
		"public/alias":   "->../secrets/k",
		"secrets/public": "->../public/ok.txt",
	})
	link := func(from, to string) string {
		return "\n" + filepath.Join(root, from) + " leads to " + filepath.Join(root, to) + " (symlinks resolved), and the tier's policy is checked on both"
	}
	for _, tc := range []struct {
		name, model, path, label, shown string
	}{
		{"denied folder", "limited/m", "secrets/k", "limited", filepath.Join(root, "secrets", "k")},
		// A link's denial names where it leads: its own name says nothing.
		{"symlink into the denied folder", "limited/m", "public/alias", "limited", filepath.Join(root, "public", "alias") + link("public/alias", "secrets/k")},
		{"denied name, allowed target", "limited/m", "secrets/public", "limited", filepath.Join(root, "secrets", "public") + link("secrets/public", "public/ok.txt")},
		{"unknown model gets the default tier", "someone/else", "public/ok.txt", "none", filepath.Join(root, "public", "ok.txt")},
		{"no policy fails closed", "", "public/ok.txt", "none", filepath.Join(root, "public", "ok.txt")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := envFor(t, tc.model, root)
			if tc.model == "" {
				env.Policy = nil
			}
			r := runTool(t, "read", env, map[string]any{"path": tc.path})
			if !r.Denied || !r.Message.IsError {
				t.Fatalf("not denied: %q", r.Message.Text())
			}
			want := `read denied: trust tier "` + tc.label + `" does not have read access to ` + tc.shown
			if got := r.Message.Text(); got != want {
				t.Fatalf("text %q,\nwant %q", got, want)
			}
			if r.Message.Meta.SourcePaths != nil {
				t.Fatalf("denied read carries sourcePaths %q", r.Message.Meta.SourcePaths)
			}
		})
	}
	t.Run("allowed for the trusted tier", func(t *testing.T) {
		r := runTool(t, "read", envFor(t, "trusted/m", root), map[string]any{"path": "secrets/k"})
		if r.Denied || !strings.Contains(r.Message.Text(), secret) {
			t.Fatalf("trusted read: %q", r.Message.Text())
		}
	})
}

func TestGrepAndGlobSkipDeniedFilesAndSaySo(t *testing.T) {
	root := tempTree(t, map[string]string{
		"secrets/k":       "token " + secret + "\n",
		"secrets/deep/k2": "token two\n",
		"app/main.go":     "token := load()\n",
		"app/alias":       "->../secrets/k",
	})
	env := envFor(t, "limited/m", root)
	g := runTool(t, "grep", env, map[string]any{"pattern": "token"}).Message
	if want := []string{filepath.Join(root, "app", "main.go")}; !slices.Equal(g.Meta.SourcePaths, want) {
		t.Fatalf("grep sourcePaths %q, want %q", g.Meta.SourcePaths, want)
	}
	if strings.Contains(g.Text(), secret) || strings.Contains(g.Text(), "token two") || strings.Contains(g.Text(), "secrets/") {
		t.Fatalf("grep leaked denied content: %q", g.Text())
	}
	if !strings.Contains(g.Text(), `[skipped 3 files that trust tier "limited" may not read]`) {
		t.Fatalf("grep does not say what it skipped: %q", g.Text())
	}
	if last := g.Parts[len(g.Parts)-1]; last.SourcePath != "" {
		t.Fatalf("the note is attributed to %s", last.SourcePath)
	}

	for _, content := range []bool{false, true} {
		m := runTool(t, "glob", env, map[string]any{"pattern": "**", "content": content}).Message
		if strings.Contains(m.Text(), secret) || strings.Contains(m.Text(), "secrets/") {
			t.Fatalf("glob (content %v) leaked: %q", content, m.Text())
		}
		if !strings.Contains(m.Text(), `[skipped 3 files that trust tier "limited" may not read]`) {
			t.Fatalf("glob (content %v) does not say what it skipped: %q", content, m.Text())
		}
	}
}

func TestBashAndWebfetchCarryNoSourcePaths(t *testing.T) {
	root := tempTree(t, map[string]string{"notes.txt": "file content via cat\n"})
	env := envFor(t, "trusted/m", root)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<html><head><title>Docs</title><script>var x=1</script></head><body><h1>Hello</h1><p>Read <a href="/more">more</a>.</p></body></html>`))
	}))
	defer srv.Close()
	env.HTTP = srv.Client()
	for _, tc := range []struct {
		tool string
		in   map[string]any
		want string
	}{
		// A command that reads no file; one that does is tagged (TestBashTagsWhatItReads).
		{"bash", map[string]any{"command": "echo printed, not read; ls"}, "printed, not read\nnotes.txt\n[exit code 0]"},
		{"webfetch", map[string]any{"url": srv.URL}, "Title: Docs\n\n# Hello\n\nRead more (" + srv.URL + "/more)."},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			m := runTool(t, tc.tool, env, tc.in).Message
			if m.IsError || !strings.Contains(m.Text(), tc.want) {
				t.Fatalf("text %q does not contain %q", m.Text(), tc.want)
			}
			if m.Meta.SourcePaths != nil || m.Attributed() {
				t.Fatalf("%s carries sourcePaths %q", tc.tool, m.Meta.SourcePaths)
			}
			raw, _ := json.Marshal(m)
			if strings.Contains(string(raw), "sourcePath") {
				t.Fatalf("JSON mentions sourcePaths: %s", raw)
			}
		})
	}
}

// TestSourcePathsSurviveReopen stores the real tools' results, closes the
// store, opens it again and compares what comes back.
func TestSourcePathsSurviveReopen(t *testing.T) {
	root := tempTree(t, map[string]string{
		"a.txt":     "needle a\n",
		"b.txt":     "needle b\n",
		"c.txt":     "none\n",
		"link.txt":  "->a.txt",
		"dir/x.txt": "x\n",
	})
	env := envFor(t, "trusted/m", root)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("plain body")) }))
	defer srv.Close()
	env.HTTP = srv.Client()
	results := []session.Message{
		runTool(t, "read", env, map[string]any{"path": "link.txt"}).Message,
		runTool(t, "read", env, map[string]any{"path": "dir/../b.txt"}).Message,
		runTool(t, "grep", env, map[string]any{"pattern": "needle"}).Message,
		runTool(t, "glob", env, map[string]any{"pattern": "*.txt"}).Message,
		runTool(t, "glob", env, map[string]any{"pattern": "*.txt", "content": true}).Message,
		runTool(t, "bash", env, map[string]any{"command": "cat a.txt"}).Message,
		runTool(t, "webfetch", env, map[string]any{"url": srv.URL}).Message,
	}
	dir := t.TempDir()
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.Create(session.Header{Title: "reopen", WorkDir: root})
	if err != nil {
		t.Fatal(err)
	}
	ptrs := make([]*session.Message, len(results))
	for i := range results {
		ptrs[i] = &results[i]
	}
	if err := st.Append(h.ID, ptrs...); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, bad, err := st.Messages(h.ID)
	if err != nil || len(bad) > 0 || len(got) != len(results) {
		t.Fatalf("reload: %d messages, %v, %v", len(got), bad, err)
	}
	a, b := filepath.Join(root, "a.txt"), filepath.Join(root, "b.txt")
	wantPaths := [][]string{{a}, {b}, {a, b}, nil, {a, b, filepath.Join(root, "c.txt")}, {a}, nil}
	for i, m := range got {
		if !slices.Equal(m.Meta.SourcePaths, wantPaths[i]) || (m.Meta.SourcePaths == nil) != (wantPaths[i] == nil) {
			t.Errorf("%s #%d: sourcePaths %q after reopen, want %q", m.Tool, i, m.Meta.SourcePaths, wantPaths[i])
		}
		for j, p := range m.Parts {
			if p.SourcePath != results[i].Parts[j].SourcePath || p.Text != results[i].Parts[j].Text {
				t.Errorf("%s #%d part %d changed across reopen", m.Tool, i, j)
			}
		}
	}
}

func TestBashLimits(t *testing.T) {
	root := tempTree(t, map[string]string{})
	env := envFor(t, "trusted/m", root)
	t.Run("timeout kills the command and its children", func(t *testing.T) {
		start := time.Now()
		m := runTool(t, "bash", env, map[string]any{"command": "sleep 30 & sleep 30; echo never", "timeout": 1}).Message
		if !m.IsError || !strings.Contains(m.Text(), "[timed out after 1s: the command was killed]") || strings.Contains(m.Text(), "never") {
			t.Fatalf("got %q", m.Text())
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the timeout did not end the command")
		}
	})
	t.Run("long output keeps head and tail", func(t *testing.T) {
		m := runTool(t, "bash", env, map[string]any{"command": "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST >&2; exit 3"}).Message
		txt := m.Text()
		if !strings.HasPrefix(txt, "FIRST\n") || !strings.HasSuffix(txt, "LAST\n[exit code 3]") || !strings.Contains(txt, "bytes of output omitted") {
			t.Fatalf("head/tail not kept: %q ... %q", txt[:20], txt[len(txt)-40:])
		}
		if len(txt) > 2*bashKeep+200 {
			t.Fatalf("output %d bytes, want at most about %d", len(txt), 2*bashKeep)
		}
	})
	t.Run("runs in the working folder", func(t *testing.T) {
		if got := text(t, "bash", env, map[string]any{"command": "pwd", "timeout": "5s"}); got != root+"\n[exit code 0]" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("bad timeout", func(t *testing.T) {
		if got := text(t, "bash", env, map[string]any{"command": "true", "timeout": "soon"}); !strings.Contains(got, "not a duration") {
			t.Fatalf("got %q", got)
		}
	})
}

func TestWebfetchBodies(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(strings.Repeat("z", 5000))) })
	mux.HandleFunc("/png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG"))
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<body><style>p{}</style><ul><li>one</li><li>two</li></ul><pre>a  b
c</pre><table><tr><td>x</td><td>y</td></tr></table></body>`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	env := envFor(t, "trusted/m", os.TempDir())
	env.HTTP = srv.Client()
	for _, tc := range []struct {
		name    string
		in      map[string]any
		want    string
		isError bool
	}{
		{"cut at max_bytes", map[string]any{"url": srv.URL + "/big", "max_bytes": 100}, "\n\n" + strings.Repeat("z", 100) + "\n[body cut at 100 bytes: fetch again with a larger max_bytes", false},
		{"not text", map[string]any{"url": srv.URL + "/png"}, "the body is image/png, not text", true},
		{"charset decoded", map[string]any{"url": srv.URL + "/latin1"}, "café", false},
		{"http error", map[string]any{"url": srv.URL + "/missing"}, "Status: 404 Not Found", true},
		{"html structure", map[string]any{"url": srv.URL + "/page"}, "- one\n- two\n\na  b\nc\n\nx | y", false},
		{"not http", map[string]any{"url": "file:///etc/passwd"}, `"file:///etc/passwd" is not an http:// or https:// URL`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := runTool(t, "webfetch", env, tc.in).Message
			if m.IsError != tc.isError || !strings.Contains(m.Text(), tc.want) {
				t.Fatalf("error %v, text %q; want error %v and %q", m.IsError, m.Text(), tc.isError, tc.want)
			}
		})
	}
}

func TestSchemasAreProviderReady(t *testing.T) {
	names := []string{}
	for _, tool := range All() {
		names = append(names, tool.Name())
		s := tool.Schema()
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name(), err)
		}
		var back struct {
			Type       string                    `json:"type"`
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(raw, &back); err != nil || back.Type != "object" || tool.Description() == "" {
			t.Fatalf("%s: schema %s", tool.Name(), raw)
		}
		for _, r := range back.Required {
			if _, ok := back.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", tool.Name(), r)
			}
		}
		for k, p := range back.Properties {
			if p["type"] == nil || p["description"] == nil {
				t.Errorf("%s.%s lacks a type or description", tool.Name(), k)
			}
		}
	}
	if want := []string{"bash", "glob", "grep", "read", "webfetch"}; !slices.Equal(names, want) {
		t.Fatalf("tools %q, want %q", names, want)
	}
}
