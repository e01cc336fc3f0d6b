package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// mdExport writes Markdown to paste into an issue or a review. Everything
// from the session is either escaped text or inside a fenced block whose
// fence is longer than any run of backticks in it, so no content becomes
// markup (a link, an image that loads, raw HTML). Placeholders are
// quotes outside the blocks: file content cannot pass for one.
type mdExport struct{ w io.Writer }

func (e *mdExport) begin(d *exportDoc) error {
	fmt.Fprintf(e.w, "# scrim export: %s\n\n", mdEscape(safeLine(d.Header.Title)))
	if d.Redacted {
		for _, line := range d.summary() {
			fmt.Fprintf(e.w, "> %s\n", mdEscape(safeLine(line)))
			io.WriteString(e.w, ">\n")
		}
	} else {
		fmt.Fprintf(e.w, "> **⚠ %s**\n", mdEscape(notRedacted))
	}
	fmt.Fprintf(e.w, "\n%s\n", mdEscape(sessionLine(d)))
	return sticky(e.w)
}

func (e *mdExport) message(m *session.Message) error {
	fmt.Fprintf(e.w, "\n## %s\n", mdEscape(heading(m)))
	for i, n := range notes(m) {
		if i == 0 {
			io.WriteString(e.w, "\n")
		}
		fmt.Fprintf(e.w, "- %s\n", mdEscape(n))
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Redacted {
			fmt.Fprintf(e.w, "\n> ✖ %s\n", mdCode(safeLine(p.Text)))
			continue
		}
		fmt.Fprintf(e.w, "\n**%s**\n", mdEscape(partLabel(p)))
		if len(p.Input) > 0 {
			if inputFiltered(p) {
				io.WriteString(e.w, "\n> ✖ redaction put placeholders in this input\n")
			}
			mdBlock(e.w, "json", termsafe.Inert(string(p.Input)))
		}
		if p.Text == "" {
			continue
		}
		for _, s := range segments(p.Text, p.Filtered) {
			if s.Placeholder {
				fmt.Fprintf(e.w, "\n> ✖ %s\n", mdCode(oneLine(s.Text)))
			} else {
				mdBlock(e.w, "text", s.Text)
			}
		}
	}
	return sticky(e.w)
}

func (e *mdExport) end() error {
	_, err := io.WriteString(e.w, "\n")
	return err
}

// sessionLine says which session an export is of.
func sessionLine(d *exportDoc) string {
	h := d.Header
	s := fmt.Sprintf("Session %s · %d messages · created %s · updated %s", h.ID, h.Count,
		h.CreatedAt.UTC().Format(time.RFC3339), h.UpdatedAt.UTC().Format(time.RFC3339))
	if h.Origin != "" {
		s += " · origin " + h.Origin
	}
	return safeLine(s)
}

// mdBlock writes text as a fenced block.
func mdBlock(w io.Writer, info, text string) {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	text = strings.TrimSuffix(text, "\n")
	fmt.Fprintf(w, "\n%s%s\n%s\n%s\n", fence, info, text, fence)
}

// mdCode is s as a code span, so a placeholder reads exactly as redact
// wrote it.
func mdCode(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// mdEscape makes one line literal text in Markdown: every character that
// can open markup (emphasis, code, links, images, raw HTML, entities,
// tables) is backslash-escaped, and so is what would make the line a
// heading or a list. A "(" opens a link only after "]", escaped here.
func mdEscape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte("\\`*_[]<>!|~&", c) >= 0:
			b.WriteByte('\\')
		case i == 0 && strings.IndexByte("#+-=", c) >= 0:
			b.WriteByte('\\')
		case (c == '.' || c == ')') && i > 0 && allDigits(s[:i]):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// jsonlExport writes one JSON object a line: first {"export": what it is
// and, with --model, the tier and the report}, then each message in the
// stored shape (as sent, with --model), as show --format json writes them.
type jsonlExport struct {
	w   io.Writer
	buf []byte
}

func (e *jsonlExport) begin(d *exportDoc) error {
	type report struct {
		redact.Report
		Messages json.RawMessage `json:"messages"` // [] here: the spool goes in its place
	}
	var head struct {
		Export struct {
			Session  session.Header `json:"session"`
			Redacted bool           `json:"redacted"`
			Warning  string         `json:"warning,omitempty"`
			Model    string         `json:"model,omitempty"`
			Tier     *redact.Tier   `json:"tier,omitempty"`
			Stored   int            `json:"stored,omitempty"`
			Report   *report        `json:"report,omitempty"`
		} `json:"export"`
	}
	x := &head.Export
	x.Session, x.Redacted = d.Header, d.Redacted
	if d.Redacted {
		x.Model, x.Tier, x.Stored = d.Model, &d.Report.Tier, d.Stored
		x.Report = &report{d.Report, json.RawMessage("[]")}
	} else {
		x.Warning = notRedacted
	}
	b, err := json.Marshal(&head)
	if err != nil {
		return err
	}
	if !d.Redacted {
		_, err = e.w.Write(append(b, '\n'))
		return err
	}
	// The report's "messages" is the last member written: "messages":[]
	// with its quotes unescaped can only be that key (inside a string they
	// would be \").
	at := bytes.LastIndex(b, []byte(`"messages":[]`)) + len(`"messages":[`)
	if _, err := e.w.Write(b[:at]); err != nil {
		return err
	}
	if _, err := d.PerMessage.WriteTo(e.w); err != nil {
		return err
	}
	_, err = e.w.Write(append(b[at:], '\n'))
	return err
}

func (e *jsonlExport) message(m *session.Message) error {
	if cap(e.buf) > 1<<20 {
		e.buf = nil // an outsized message: do not hold its room for the rest
	}
	var err error
	e.buf, err = session.AppendMessageJSON(e.buf[:0], m)
	if err != nil {
		return err
	}
	_, err = e.w.Write(append(e.buf, '\n'))
	return err
}

func (e *jsonlExport) end() error { return nil }
