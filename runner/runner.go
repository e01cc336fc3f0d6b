package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"charm.land/fantasy"

	"github.com/scrim-dev/scrim/internal/spool"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tools"
)

// DefaultMaxSteps is how many model calls one Send may make.
const DefaultMaxSteps = 20

// ErrStepLimit: the model still asked for tools after MaxSteps calls.
var ErrStepLimit = errors.New("step limit reached")

// ErrBusy: another Send on the same session has not finished.
var ErrBusy = errors.New("session is busy")

// Runner sends a session's history to models and runs the tools they ask for.
// It is safe for concurrent use; Sends on one session are refused while one
// is running.
type Runner struct {
	store *session.Store
	pol   *policy.Policy
	provs *Providers

	// Now is the clock for stored messages; HTTP is the client for providers
	// (nil: DefaultHTTPClient). Tests replace both.
	Now  func() time.Time
	HTTP *http.Client
	// MaxSteps bounds the model calls of one Send (DefaultMaxSteps when 0).
	MaxSteps int
	// WorkDir is where tools run when the session header has no WorkDir.
	WorkDir string
	// History, when set, is where Send takes the redacted history of each
	// request from, a piece at a time (see HistoryStream): a send then
	// holds pieces, never the session. Nil: Send loads the session and
	// redacts it whole (Build).
	History HistoryStream

	mu   sync.Mutex
	busy map[string]bool
}

// HistoryStream hands fn the history of session h, its messages 1 to
// h.Count, as model is sent it (Request's History: redacted exactly as
// Build redacts the whole), a piece at a time, in order; an error of fn
// ends it. The CLI streams it from the store, as scrim redact does.
type HistoryStream func(ctx context.Context, h session.Header, model string, fn func(sent []session.Message) error) error

// New returns a runner on store, deciding tiers with pol and sending through provs.
func New(store *session.Store, pol *policy.Policy, provs *Providers) *Runner {
	wd, _ := os.Getwd()
	return &Runner{store: store, pol: pol, provs: provs, Now: time.Now, WorkDir: wd, busy: map[string]bool{}}
}

// Request is what model would be sent for the session now: the one request
// builder (Build) on the stored history.
func (r *Runner) Request(sessionID, model string) (Request, error) {
	msgs, _, err := r.store.Messages(sessionID)
	if err != nil {
		return Request{}, err
	}
	ctx, err := Context(r.store, sessionID, msgs, model, r.pol)
	if err != nil {
		return Request{}, err
	}
	return BuildWith(msgs, sessionID, model, r.pol, ctx), nil
}

// DeltaKind says what a Delta reports.
type DeltaKind string

const (
	DeltaText       DeltaKind = "text"        // Text: the next piece of the answer
	DeltaSwitch     DeltaKind = "switch"      // Text: the model-switch event just recorded
	DeltaToolStart  DeltaKind = "tool_start"  // Tool, CallID, Input: a tool is about to run
	DeltaToolFinish DeltaKind = "tool_finish" // Tool, CallID, IsError, Denied, Text: one-line outcome
	DeltaStored     DeltaKind = "stored"      // Message: a message was stored
)

// Delta is one streamed notice from Send. It carries the session and model so
// a UI can drop notices that arrive for a pane showing something else.
type Delta struct {
	SessionID string
	Model     string
	Step      int // 1-based model call within this Send
	Kind      DeltaKind
	Text      string
	Tool      string
	CallID    string
	Input     string
	IsError   bool
	Denied    bool
	Message   *session.Message
}

// Send runs one turn: it stores prompt as a user message (none when prompt is
// "", to continue after an error), records a model switch, calls the model,
// stores its complete answer, runs the tools it asks for under model's tier,
// and repeats until the model stops or MaxSteps. onDelta (may be nil) is
// called on the caller's goroutine. Cancelling ctx stops at once; only
// complete messages are ever stored.
func (r *Runner) Send(ctx context.Context, sessionID, model, prompt string, onDelta func(Delta)) error {
	if !r.acquire(sessionID) {
		return fmt.Errorf("session %s: %w with another send; wait for it to finish", sessionID, ErrBusy)
	}
	defer r.release(sessionID)
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	hc := r.HTTP
	var splice *spliceTransport
	if r.History != nil {
		splice, hc = newSplice(hc)
	}
	// Resolve the provider first: a missing key or unknown provider writes nothing.
	lm, prov, err := r.provs.Connect(ctx, model, hc)
	if err != nil {
		return err
	}
	h, err := r.store.Get(sessionID)
	if err != nil {
		return err
	}
	var msgs []session.Message
	if splice == nil {
		if msgs, _, err = r.store.Messages(sessionID); err != nil {
			return err
		}
	}
	t := turn{r: r, ctx: ctx, id: sessionID, model: model, lm: lm, prov: prov, msgs: msgs, splice: splice, onDelta: onDelta}
	t.workDir = h.WorkDir
	if t.workDir == "" {
		t.workDir = r.WorkDir
	}
	if err := t.begin(h, prompt); err != nil {
		return err
	}
	return t.loop()
}

func (r *Runner) acquire(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy[id] {
		return false
	}
	r.busy[id] = true
	return true
}

func (r *Runner) release(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.busy, id)
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// turn is the state of one Send.
type turn struct {
	r       *Runner
	ctx     context.Context
	id      string
	model   string
	lm      fantasy.LanguageModel
	prov    Provider
	msgs    []session.Message // the session as stored, kept in step with every append; nil when streamed
	splice  *spliceTransport  // a streamed send's: each request's body comes from Runner.History
	workDir string
	step    int
	onDelta func(Delta)
}

func (t *turn) emit(d Delta) {
	d.SessionID, d.Model, d.Step = t.id, t.model, t.step
	t.onDelta(d)
}

// begin stores the switch event and the user message, and the new last
// model, in one transaction.
func (t *turn) begin(h session.Header, prompt string) error {
	now := t.r.now()
	var add []*session.Message
	prev, err := t.previousModel(h)
	if err != nil {
		return err
	}
	if prev != "" && prev != t.model {
		add = append(add, &session.Message{Role: session.RoleEvent, Model: t.model, CreatedAt: now,
			Parts: []session.Part{{Kind: session.PartText, Text: SwitchText(t.r.pol, prev, t.model)}}})
	}
	if prompt != "" {
		add = append(add, &session.Message{Role: session.RoleUser, Model: t.model, CreatedAt: now,
			Parts: []session.Part{{Kind: session.PartText, Text: prompt}}})
	} else if len(t.msgs) == 0 && (t.splice == nil || h.Count == 0) {
		return errors.New("nothing to send: the session is empty; give a prompt")
	}
	if err := t.ctx.Err(); err != nil {
		return fmt.Errorf("send cancelled before anything was stored: %w", err)
	}
	if len(add) == 0 && h.LastModel == t.model {
		return nil
	}
	if err := t.r.store.AppendWithHeader(t.id, func(h *session.Header) { h.LastModel = t.model }, add...); err != nil {
		return fmt.Errorf("store the prompt in session %s: %w", t.id, err)
	}
	for _, m := range add {
		t.keep(m)
		if m.Role == session.RoleEvent {
			t.emit(Delta{Kind: DeltaSwitch, Text: m.Parts[0].Text})
		}
		t.emit(Delta{Kind: DeltaStored, Message: m})
	}
	return nil
}

// previousModel is the model the session last used: the header's, else the
// newest message that names one (sessions filled by `scrim tool` or
// import), read from the store when the send is streamed.
func (t *turn) previousModel(h session.Header) (string, error) {
	if t.splice == nil || h.LastModel != "" {
		return previousModel(h, t.msgs), nil
	}
	last := ""
	_, err := t.r.store.Scan(t.id, 1, h.Count, func(m *session.Message) error {
		if m.Model != "" && m.Role != session.RoleEvent {
			last = m.Model
		}
		return nil
	})
	return last, err
}

// keep adds m, just stored, to the turn's copy of the session, if it keeps
// one.
func (t *turn) keep(m *session.Message) {
	if t.splice == nil {
		t.msgs = append(t.msgs, *m)
	}
}

func previousModel(h session.Header, msgs []session.Message) string {
	if h.LastModel != "" {
		return h.LastModel
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Model != "" && msgs[i].Role != session.RoleEvent {
			return msgs[i].Model
		}
	}
	return ""
}

// SwitchText is the text of a model-switch event.
func SwitchText(p *policy.Policy, from, to string) string {
	tf, _ := p.TierFor(from)
	tt, _ := p.TierFor(to)
	return fmt.Sprintf("model switched from %s (tier %s) to %s (tier %s)", from, tf.Label, to, tt.Label)
}

func (r *Runner) maxSteps() int {
	if r.MaxSteps > 0 {
		return r.MaxSteps
	}
	return DefaultMaxSteps
}

func (t *turn) loop() error {
	for t.step = 1; t.step <= t.r.maxSteps(); t.step++ {
		ans, err := t.request()
		if err != nil {
			return err
		}
		asst := ans.message(t.model, t.r.now())
		if err := t.append(asst); err != nil {
			return err
		}
		if len(ans.calls) == 0 {
			return nil
		}
		for _, c := range ans.calls {
			res := t.runTool(c)
			if err := t.ctx.Err(); err != nil {
				return fmt.Errorf("send cancelled while %s ran; its result was not stored: %w", c.name, err)
			}
			if err := t.append(res); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("stopped after %d model calls (%w); send again to let %s continue", t.r.maxSteps(), ErrStepLimit, t.model)
}

// request sends the step's request and returns the model's answer. The
// request is built from the session as it is now: whole (Build), or, when
// the send is streamed, written by a RequestWriter a piece of the history
// at a time into a spool, which its transport sends in place of the body
// the provider's client wrote for the system prompt and tools alone.
func (t *turn) request() (*answer, error) {
	if t.splice == nil {
		ctx, err := Context(t.r.store, t.id, t.msgs, t.model, t.r.pol)
		if err != nil {
			return nil, err
		}
		ans, err := t.call(BuildWith(t.msgs, t.id, t.model, t.r.pol, ctx))
		if err != nil {
			return nil, describe(t.prov, t.model, err)
		}
		return ans, nil
	}
	h, err := t.r.store.Get(t.id)
	if err != nil {
		return nil, err
	}
	body := &spool.Spool{}
	defer body.Close()
	rw, err := t.r.NewRequestWriter(t.ctx, body, t.id, t.model)
	if err != nil {
		return nil, err
	}
	if err := t.r.History(t.ctx, h, t.model, rw.Add); err != nil {
		return nil, fmt.Errorf("build the request from session %s: %w", t.id, err)
	}
	if err := rw.Close(); err != nil {
		return nil, err
	}
	t.splice.fill(rw.frame, body)
	defer t.splice.fill(nil, nil)
	ans, err := t.call(rw.frameRequest())
	if err != nil {
		if errors.Is(err, errSplice) {
			return nil, fmt.Errorf("provider %q: %w", t.prov.Name, errSplice)
		}
		return nil, describe(t.prov, t.model, err)
	}
	return ans, nil
}

func (t *turn) append(m *session.Message) error {
	if err := t.r.store.Append(t.id, m); err != nil {
		return fmt.Errorf("store %s message in session %s: %w", m.Role, t.id, err)
	}
	t.keep(m)
	t.emit(Delta{Kind: DeltaStored, Message: m})
	return nil
}

// runTool runs one requested tool under the turn's model and returns its
// result message. Every failure is a result the model can read.
func (t *turn) runTool(c toolCall) *session.Message {
	t.emit(Delta{Kind: DeltaToolStart, Tool: c.name, CallID: c.id, Input: c.input})
	res := t.execTool(c)
	m := res.Message
	m.Role, m.Tool, m.ToolCallID, m.Model = session.RoleTool, c.name, c.id, t.model
	m.ID, m.Seq, m.SessionID = "", 0, ""
	if m.CreatedAt.IsZero() {
		m.CreatedAt = t.r.now()
	}
	t.emit(Delta{Kind: DeltaToolFinish, Tool: c.name, CallID: c.id, IsError: m.IsError, Denied: res.Denied, Text: outcome(&m)})
	return &m
}

// outcome is a one-line account of a tool result for the UI: the error, or
// how much came back and from where (not the content itself).
func outcome(m *session.Message) string {
	text := m.Text()
	if m.IsError {
		first, _, _ := strings.Cut(text, "\n")
		return clip(first, 200)
	}
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	s := fmt.Sprintf("%d %s", n, plural(n, "line", "lines"))
	if paths := m.Meta.SourcePaths; len(paths) > 0 {
		s += " from " + strings.Join(paths[:min(len(paths), 3)], ", ")
		if len(paths) > 3 {
			s += fmt.Sprintf(" and %d more files", len(paths)-3)
		}
	}
	return s
}

// execTool runs the tool; a panicking tool becomes an error result rather
// than taking the session down with it.
func (t *turn) execTool(c toolCall) (res tools.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = tools.Result{Message: errorResult(fmt.Sprintf("tool %s failed: internal error: %v", c.name, p))}
		}
	}()
	if !json.Valid([]byte(c.input)) {
		return tools.Result{Message: errorResult(fmt.Sprintf("tool %s: input is not valid JSON: %s", c.name, clip(c.input, 200)))}
	}
	// tools.Run refuses a tool the model's tier is not offered: a model may
	// ask for one all the same.
	return tools.Run(t.ctx, tools.Env{Policy: t.r.pol, Model: t.model, WorkDir: t.workDir, Now: t.r.Now}, c.name, json.RawMessage(c.input))
}

func errorResult(text string) session.Message {
	return session.Message{Role: session.RoleTool, IsError: true, Parts: []session.Part{{Kind: session.PartText, Text: text}}, Meta: session.Meta{NoFiles: true}}
}
