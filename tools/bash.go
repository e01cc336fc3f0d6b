package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/shellread"
)

// Limits of one command.
const (
	bashDefaultTimeout = 2 * time.Minute
	bashMaxTimeout     = 10 * time.Minute
	// The first and last 16 KiB of output are kept: the start says what the
	// command did, the end how it finished.
	bashKeep = 16 << 10
)

func init() { register(bashTool{}) }

type bashTool struct{}

type bashInput struct {
	Command string          `json:"command"`
	Timeout json.RawMessage `json:"timeout,omitempty"`
}

func (bashTool) Name() string { return "bash" }

func (bashTool) Description() string {
	return "Run a shell command with bash -c in the session's working folder. Returns combined stdout and stderr (the first and last 16 KiB when longer) and the exit code. No input is given on stdin."
}

func (bashTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"command": map[string]any{"type": "string", "description": "The command line, run by bash -c."},
			"timeout": map[string]any{"type": "integer", "minimum": 1, "maximum": int(bashMaxTimeout / time.Second), "description": "Seconds before the command is killed (default 120, at most 600)."},
		},
		"required":             []string{"command"},
		"additionalProperties": false,
	}
}

// Run refuses a command that names a path the active tier may not read, as
// read refuses the path, and tags the output with the files the command
// read (shellread): per file where the output names its files line by
// line, as a whole otherwise, of unknown source with the reason when the
// command runs something scrim cannot follow. A command that reads no file
// (echo, ls) carries no sourcePaths.
func (bashTool) Run(ctx context.Context, env Env, input json.RawMessage) Result {
	var in bashInput
	if err := decode(input, &in); err != nil {
		return errorResult(env, "bash", "bash failed: %v", err)
	}
	if strings.TrimSpace(in.Command) == "" {
		return errorResult(env, "bash", "bash failed: command is required")
	}
	timeout, err := parseTimeout(in.Timeout)
	if err != nil {
		return errorResult(env, "bash", "bash failed: %v", err)
	}
	dir := env.workDir()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return errorResult(env, "bash", "bash failed: working folder %s does not exist", dir)
	}
	g := newGate(env, full)
	sh := shellread.Command{Line: in.Command, Dir: dir}
	sh.Home, _ = os.UserHomeDir()
	for _, name := range shellread.Read(sh, "", nil).Names {
		if _, ok, _ := g.check(name); !ok {
			r := errorResult(env, "bash", "%s", deniedText(g.label(), name))
			r.Denied = true
			return r
		}
	}
	ctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", in.Command)
	cmd.Dir = dir
	out := &headTail{keep: bashKeep}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 2 * time.Second // a background child holding the pipes open
	err = runInGroup(cmd)
	body := out.String()
	if body == "" {
		body = "(no output)"
	}
	msg := newResult(env, "bash")
	var exit *exec.ExitError
	var tail string
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg.IsError = true
		tail = fmt.Sprintf("\n[timed out after %s: the command was killed]", timeout)
	case err != nil && ctx.Err() != nil:
		msg.IsError = true
		tail = "\n[cancelled: the command was killed]"
	case errors.As(err, &exit):
		tail = fmt.Sprintf("\n[exit code %d]", exit.ExitCode())
	case err != nil:
		return errorResult(env, "bash", "bash failed: %v", err)
	default:
		tail = "\n[exit code 0]"
	}
	msg.Attribute(shellread.Read(sh, body, nil), "", body, tail)
	for i := range msg.Parts {
		msg.Parts[i].Kind = session.PartText
	}
	return Result{Message: msg}
}

// parseTimeout reads seconds (a JSON number) or a Go duration ("90s").
func parseTimeout(raw json.RawMessage) (time.Duration, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return bashDefaultTimeout, nil
	}
	var d time.Duration
	if unq, err := strconv.Unquote(s); err == nil {
		if d, err = time.ParseDuration(unq); err != nil {
			return 0, fmt.Errorf("timeout %q is not a duration like \"90s\"", unq)
		}
	} else {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("timeout %s is not a number of seconds", s)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 || d > bashMaxTimeout {
		return 0, fmt.Errorf("timeout must be between 1s and %s, not %s", bashMaxTimeout, d)
	}
	return d, nil
}

// headTail keeps the first and last keep bytes written to it and counts the
// rest. os/exec serialises writes when Stdout and Stderr are the same writer.
type headTail struct {
	keep    int
	head    []byte
	tail    []byte
	dropped int
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := h.keep - len(h.head); room > 0 {
		take := min(room, len(p))
		h.head = append(h.head, p[:take]...)
		p = p[take:]
	}
	h.tail = append(h.tail, p...)
	if over := len(h.tail) - h.keep; over > h.keep {
		// Trim in bulk so that a chatty command costs amortised O(1) a byte.
		h.dropped += over
		h.tail = append(h.tail[:0], h.tail[over:]...)
	}
	return n, nil
}

func (h *headTail) String() string {
	tail := h.tail
	dropped := h.dropped
	if over := len(tail) - h.keep; over > 0 {
		dropped += over
		tail = tail[over:]
	}
	var b bytes.Buffer
	b.Write(h.head)
	if dropped > 0 {
		fmt.Fprintf(&b, "\n… [%d bytes of output omitted] …\n", dropped)
	}
	b.Write(tail)
	return strings.ToValidUTF8(strings.TrimRight(b.String(), "\n"), "\uFFFD")
}
