package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The preview is the request: redact --format request prints, byte for
// byte, the body a provider receives from scrim send --continue for the
// same session and model, placeholders, system prompt and tools included.
func TestRedactRequestIsWhatSendSends(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	provs := filepath.Join(t.TempDir(), "providers.toml")
	must(t, os.WriteFile(provs, []byte(fmt.Sprintf("[providers.gw]\nbase_url = %q\n", srv.URL+"/v1")), 0o644))
	store := filepath.Join(t.TempDir(), "store")
	if _, stderr, code := scrim(t, "", "--store", store, "import", "claude", claudeFixture); code != exitOK {
		t.Fatalf("import: %s", stderr)
	}
	id := importedSession(t, store, "session.jsonl")
	preview, stderr, code := scrim(t, "", "--store", store, "--providers", provs, "redact", id, "--model", "gw/m", "--format", "request")
	if code != exitOK || !json.Valid([]byte(preview)) {
		t.Fatalf("redact --format request: exit %d %s\n%.500s", code, stderr, preview)
	}
	mu.Lock()
	if len(got) != 0 {
		t.Fatal("the preview reached the provider")
	}
	mu.Unlock()
	if _, stderr, code := scrim(t, "", "--store", store, "--providers", provs, "send", id, "--model", "gw/m", "--continue"); code != exitOK {
		t.Fatalf("send --continue: exit %d %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("send sent nothing")
	}
	if !bytes.Equal(bytes.TrimSpace(got[0]), []byte(strings.TrimSpace(preview))) {
		t.Fatalf("the preview is not the request:\npreview %.800s\nsent    %.800s", preview, got[0])
	}
	for _, want := range []string{`"role":"system"`, `"tools":[`, `filtered — trust tier`} {
		if !strings.Contains(preview, want) {
			t.Errorf("the request lacks %s", want)
		}
	}
}
