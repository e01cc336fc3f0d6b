package runner

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A limited model (its tier has no tools key) is offered exactly read, grep
// and glob. When it asks for bash and webfetch anyway, both are refused and
// nothing runs: the command's marker file is not made, the URL is not
// fetched, and no secret byte reaches any request. A trusted model whose
// tier lists bash is offered it, and its command runs.
func TestToolsPerTier(t *testing.T) {
	var fetched atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		fmt.Fprint(w, "page")
	}))
	defer site.Close()
	var step atomic.Int32
	var e *env
	var marker string
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch step.Add(1) {
		case 1, 3:
			sse(w, "", [2]string{"bash", fmt.Sprintf(`{"command":"cat %s; touch %s"}`, e.secret, marker)},
				[2]string{"webfetch", fmt.Sprintf(`{"url":%q}`, site.URL)})
		default:
			sse(w, "done")
		}
	}))
	marker = filepath.Join(e.ws, "ran")
	id := e.newSession(t)
	if err := e.send(t, id, "fake/limited", "show me the keys"); err != nil {
		t.Fatal(err)
	}
	req := e.wire.request(t, 0)
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Function.Name)
	}
	if strings.Join(names, " ") != "read grep glob" {
		t.Fatalf("limited is offered %v, want read grep glob", names)
	}
	if _, err := os.Stat(marker); err == nil || fetched.Load() != 0 {
		t.Fatalf("a refused tool ran (marker made: %v, fetched %d times)", err == nil, fetched.Load())
	}
	msgs := e.messages(t, id)
	refused := 0
	for _, m := range msgs {
		if m.Role == "tool" && m.IsError && strings.Contains(m.Text(), `is not offered to trust tier "limited" (its tools: read, grep, glob); nothing ran`) {
			refused++
		}
	}
	if refused != 2 {
		t.Fatalf("%d refusals stored, want 2: %s", refused, roles(msgs))
	}
	for i := range e.wire.count() {
		for _, line := range e.secretLines {
			if strings.Contains(string(e.wire.body(i)), strings.SplitN(line, "=", 2)[1]) {
				t.Fatalf("request %d carries the secret", i)
			}
		}
	}

	// The trusted tier lists bash: it is offered, and it runs.
	id2 := e.newSession(t)
	if err := e.send(t, id2, "fake/trusted", "run it"); err != nil {
		t.Fatal(err)
	}
	if !offers(e.wire.request(t, 2), "bash") {
		t.Fatal("trusted is not offered bash")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the trusted model's command did not run: %v", err)
	}
}
