package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// The model reads an allowed file, then a denied one, then answers. The real
// read tool runs under the sending model's tier.
func TestToolLoopReadsAllowedAndIsDeniedTheRest(t *testing.T) {
	var step atomic.Int32
	var e *env
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch step.Add(1) {
		case 1:
			sse(w, "Let me look.", [2]string{"read", fmt.Sprintf(`{"path":%q}`, "README.md")}) // relative: the session's WorkDir
		case 2:
			sse(w, "", [2]string{"read", fmt.Sprintf(`{"path":%q}`, e.secret)})
		default:
			sse(w, "The README says nothing secret; the keys file is off limits.")
		}
	}))
	id := e.newSession(t)
	var notices []string
	err := e.r.Send(context.Background(), id, "fake/limited", "look around", func(d Delta) {
		switch d.Kind {
		case DeltaToolStart:
			notices = append(notices, "start "+d.Tool+" "+d.Input)
		case DeltaToolFinish:
			notices = append(notices, fmt.Sprintf("finish %s error=%v denied=%v", d.Tool, d.IsError, d.Denied))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.messages(t, id)
	if got := roles(msgs); got != "user,assistant,tool,assistant,tool,assistant" {
		t.Fatalf("roles %s", got)
	}
	call1, res1, call2, res2, final := msgs[1], msgs[2], msgs[3], msgs[4], msgs[5]

	// The allowed read: tagged with the canonical path, paired with its call.
	if call1.Parts[0].Text != "Let me look." || call1.Parts[1].Kind != session.PartToolCall || call1.Parts[1].Name != "read" {
		t.Fatalf("first call %+v", call1.Parts)
	}
	if res1.ToolCallID != call1.Parts[1].CallID || res1.Tool != "read" || res1.Model != "fake/limited" || res1.IsError {
		t.Fatalf("first result %+v", res1)
	}
	if !reflect.DeepEqual(res1.Meta.SourcePaths, []string{e.public}) || res1.Parts[0].SourcePath != e.public || !strings.Contains(res1.Text(), "Nothing secret here.") {
		t.Fatalf("first result not tagged: %+v", res1)
	}
	// The denied read: an error result that names the tier, no content, no tag.
	want := fmt.Sprintf("read denied: trust tier %q does not have read access to %s", "limited", e.secret)
	if res2.ToolCallID != call2.Parts[0].CallID || !res2.IsError || res2.Text() != want || res2.Meta.SourcePaths != nil {
		t.Fatalf("second result %+v, want the denied error %q", res2, want)
	}
	if final.Role != session.RoleAssistant || final.Text() != "The README says nothing secret; the keys file is off limits." {
		t.Fatalf("final %+v", final)
	}
	wantNotices := []string{
		`start read {"path":"README.md"}`, "finish read error=false denied=false",
		fmt.Sprintf(`start read {"path":%q}`, e.secret), "finish read error=true denied=true",
	}
	if !reflect.DeepEqual(notices, wantNotices) {
		t.Fatalf("notices %q, want %q", notices, wantNotices)
	}
	// The wire: the second request carries the README, the third the denial,
	// and no request carries the secret.
	if !strings.Contains(e.wire.texts(t, 1), "Nothing secret here.") || !strings.Contains(e.wire.texts(t, 2), want) {
		t.Fatal("tool results were not sent back to the model")
	}
	for i := range e.wire.count() {
		for _, line := range e.secretLines {
			if strings.Contains(string(e.wire.body(i)), strings.SplitN(line, "=", 2)[1]) {
				t.Fatalf("request %d carries the secret", i)
			}
		}
	}
	// The limited tier has no tools key: it is offered exactly read, grep
	// and glob, by name with their schemas.
	if req := e.wire.request(t, 0); len(req.Tools) != 3 || !offers(req, "read") || !offers(req, "grep") || !offers(req, "glob") {
		t.Fatalf("tools offered: %+v", req.Tools)
	}

	// The session reloads intact from disk.
	dir := e.store.Dir()
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, bad, err := st.Messages(id)
	if err != nil || len(bad) > 0 {
		t.Fatalf("reload: %v %v", err, bad)
	}
	a, _ := json.Marshal(msgs)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Fatalf("reloaded session differs:\n%s\n%s", a, b)
	}
	if h, _ := st.Get(id); h.Count != 6 || h.LastModel != "fake/limited" {
		t.Fatalf("header %+v", h)
	}
	e.store = st // for the cleanup
}

// End to end with the demo provider and the real read tool: the trusted model
// reads the secret, the limited model then gets a placeholder on the wire,
// and switching back sends the content again.
func TestTrustedReadThenLimitedSwitchOverTheWire(t *testing.T) {
	e := newEnv(t, nil)
	id := e.newSession(t)
	if err := e.send(t, id, "fake/trusted", "please read "+e.secret); err != nil {
		t.Fatal(err)
	}
	msgs := e.messages(t, id)
	if got := roles(msgs); got != "user,assistant,tool,assistant" {
		t.Fatalf("roles %s", got)
	}
	if tr := msgs[2]; tr.IsError || !reflect.DeepEqual(tr.Meta.SourcePaths, []string{e.secret}) || !strings.Contains(tr.Text(), e.secretLines[1]) {
		t.Fatalf("trusted read %+v", tr)
	}
	if !strings.Contains(msgs[3].Text(), "The tool returned 3 lines") {
		t.Fatalf("demo answer %q", msgs[3].Text())
	}
	// The trusted model got the content back on its second request.
	if !strings.Contains(e.wire.texts(t, 1), e.secretLines[0]) {
		t.Fatal("trusted model did not receive the file")
	}

	if err := e.send(t, id, "fake/limited", "summarise"); err != nil {
		t.Fatal(err)
	}
	body := string(e.wire.body(2))
	if !strings.Contains(e.wire.texts(t, 2), redact.Placeholder(e.secret, "limited")) {
		t.Fatalf("limited request lacks the placeholder:\n%s", e.wire.texts(t, 2))
	}
	for _, line := range e.secretLines {
		for _, piece := range append([]string{line}, strings.SplitN(line, "=", 2)...) {
			if strings.Contains(body, piece) {
				t.Fatalf("limited request carries %q", piece)
			}
		}
	}
	if got := events(e.messages(t, id)); len(got) != 1 || got[0] != "model switched from fake/trusted (tier trusted) to fake/limited (tier limited)" {
		t.Fatalf("events %q", got)
	}

	if err := e.send(t, id, "fake/trusted", "and again"); err != nil {
		t.Fatal(err)
	}
	for _, line := range e.secretLines {
		if !strings.Contains(e.wire.texts(t, 3), line) {
			t.Fatalf("switch back: %q is not sent", line)
		}
	}
	if got := events(e.messages(t, id)); len(got) != 2 {
		t.Fatalf("events %q", got)
	}
}

// A limited model asking to read the secret itself is refused by the tool.
func TestDemoReadDeniedForLimited(t *testing.T) {
	e := newEnv(t, nil)
	id := e.newSession(t)
	if err := e.send(t, id, "fake/limited", "read "+e.secret); err != nil {
		t.Fatal(err)
	}
	msgs := e.messages(t, id)
	if got := roles(msgs); got != "user,assistant,tool,assistant" {
		t.Fatalf("roles %s", got)
	}
	if !msgs[2].IsError || !strings.HasPrefix(msgs[2].Text(), `read denied: trust tier "limited"`) {
		t.Fatalf("result %+v", msgs[2])
	}
	if !strings.Contains(msgs[3].Text(), "The tool returned an error: read denied") {
		t.Fatalf("answer %q", msgs[3].Text())
	}
}

// A symlink into the secret folder is tagged with the real path, so the
// limited tier's deny rule still covers it on the wire.
func TestSymlinkedReadIsRedactedByItsRealPath(t *testing.T) {
	e := newEnv(t, nil)
	link := filepath.Join(e.ws, "innocent.txt")
	if err := os.Symlink(e.secret, link); err != nil {
		t.Fatal(err)
	}
	id := e.newSession(t)
	if err := e.send(t, id, "fake/trusted", "read "+link); err != nil {
		t.Fatal(err)
	}
	if err := e.send(t, id, "fake/limited", "what did you see?"); err != nil {
		t.Fatal(err)
	}
	if body := string(e.wire.body(2)); strings.Contains(body, "correct-horse") || !strings.Contains(e.wire.texts(t, 2), redact.Placeholder(e.secret, "limited")) {
		t.Fatalf("symlinked content leaked or placeholder missing:\n%s", e.wire.texts(t, 2))
	}
}

// Cancelling while a tool runs stops it and stores no result; the next send
// pairs the unanswered call with a "no result" so the provider accepts it.
func TestCancelDuringToolRun(t *testing.T) {
	var step atomic.Int32
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if step.Add(1) == 1 {
			sse(w, "", [2]string{"bash", `{"command":"sleep 30"}`})
			return
		}
		sse(w, "fine")
	}))
	id := e.newSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := e.r.Send(ctx, id, "fake/trusted", "wait a bit", func(d Delta) {
		if d.Kind == DeltaToolStart {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "its result was not stored") {
		t.Fatalf("error %v", err)
	}
	if got := roles(e.messages(t, id)); got != "user,assistant" {
		t.Fatalf("roles %s", got)
	}
	if err := e.send(t, id, "fake/trusted", "never mind"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.wire.texts(t, 1), "no result was recorded for this tool call") {
		t.Fatalf("unanswered call not paired:\n%s", e.wire.texts(t, 1))
	}
}
