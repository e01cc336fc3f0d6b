package cli

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"io"
	"strings"

	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/session"
)

// htmlExport writes one self-contained HTML page: no script, no external
// asset, its only style inline and allowed by hash in a Content Security
// Policy that forbids everything else, so the page works offline and
// cannot load anything even if content slipped past escaping (html/template
// escapes every value by context). Tool output folds away in <details>;
// placeholders are marked and stay visible.
type htmlExport struct{ w io.Writer }

const exportCSS = `body{font:15px/1.45 system-ui,sans-serif;max-width:70rem;margin:1rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
h1{font-size:1.4rem}h2{font-size:1rem;margin:1.6rem 0 .4rem;padding-top:.6rem;border-top:1px solid #ddd}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f4;padding:.5rem .7rem;border-radius:4px;margin:.3rem 0}
.banner{padding:.6rem 1rem;border-radius:6px;margin:1rem 0}.banner p{margin:.2rem 0}
.unredacted{background:#fde7e7;border:2px solid #b00020;color:#6d0012;font-size:1.05rem}
.redacted{background:#e8f1fb;border:2px solid #1f5fa8}
.meta,.note{color:#555;font-size:.9rem;margin:.1rem 0}.label{font-weight:600;margin:.5rem 0 .1rem}
.ph{background:#fff1c2;border:1px dashed #9a6b00;color:#5c3d00;font-family:ui-monospace,monospace;padding:0 .2rem}
p.ph{padding:.4rem .6rem;border-left:4px solid #9a6b00}
details{margin:.3rem 0}summary{cursor:pointer;font-weight:600}
.role-user h2{color:#1f5fa8}.role-assistant h2{color:#2c6e2f}.role-event h2{color:#777}
`

// exportPage is the page's template. Values are escaped by html/template;
// the style is the one constant above, allowed by its hash.
var exportPage = template.Must(template.New("page").Parse(`{{define "begin"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src '` + cspHash(exportCSS) + `'; img-src 'none'; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scrim export: {{.Title}}</title>
<style>` + exportCSS + `</style>
</head>
<body>
<header>
<h1>scrim export: {{.Title}}</h1>
{{if .Redacted}}<div class="banner redacted" id="redaction">{{range .Summary}}<p>{{.}}</p>{{end}}</div>
{{else}}<div class="banner unredacted" id="redaction"><p><strong>⚠ {{.Warning}}</strong></p></div>
{{end}}<p class="meta">{{.Session}}</p>
</header>
<main>
{{end}}{{define "message"}}<section class="msg role-{{.Role}}" id="m{{.Seq}}">
<h2>{{.Heading}}</h2>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{range .Parts}}{{if .Whole}}<p class="ph placeholder">✖ {{.Whole}}</p>
{{else}}{{if .Fold}}<details class="result"{{if .Marked}} open{{end}}><summary>{{.Label}} · {{.Lines}}{{if .Marked}} · placeholders inside{{end}}</summary>
{{else}}<p class="label">{{.Label}}</p>
{{end}}{{if .InputMarked}}<p class="ph placeholder">✖ redaction put placeholders in this input</p>
{{end}}{{if .Input}}<pre class="input">{{.Input}}</pre>
{{end}}{{if .Segs}}<pre>{{range .Segs}}{{if .Placeholder}}<mark class="ph placeholder">{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}</pre>
{{end}}{{if .Fold}}</details>
{{end}}{{end}}{{end}}</section>
{{end}}{{define "end"}}</main>
</body>
</html>
{{end}}`))

// cspHash is the Content Security Policy source that allows exactly the
// inline style css.
func cspHash(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

func (e *htmlExport) begin(d *exportDoc) error {
	return exportPage.ExecuteTemplate(e.w, "begin", struct {
		Title, Warning, Session string
		Redacted                bool
		Summary                 []string
	}{safeLine(d.Header.Title), notRedacted, sessionLine(d), d.Redacted, d.summary()})
}

// htmlPart is one part as the template shows it.
type htmlPart struct {
	Whole        string // a placeholder standing for the whole part
	Label, Lines string
	Fold, Marked bool
	Input        string
	InputMarked  bool
	Segs         []segment
}

func (e *htmlExport) message(m *session.Message) error {
	role := "other"
	switch m.Role {
	case session.RoleUser, session.RoleAssistant, session.RoleTool, session.RoleSystem, session.RoleEvent:
		role = string(m.Role)
	}
	parts := make([]htmlPart, 0, len(m.Parts))
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Redacted {
			parts = append(parts, htmlPart{Whole: safeLine(p.Text)})
			continue
		}
		hp := htmlPart{Label: partLabel(p), Fold: foldable(m, p), InputMarked: inputFiltered(p)}
		if len(p.Input) > 0 {
			hp.Input = termsafe.Inert(string(p.Input))
		}
		if p.Text != "" {
			hp.Segs = segments(p.Text, p.Filtered)
			for _, s := range hp.Segs {
				hp.Marked = hp.Marked || s.Placeholder
			}
		}
		hp.Lines = plural(strings.Count(strings.TrimSuffix(p.Text, "\n"), "\n")+1, "line", "lines")
		parts = append(parts, hp)
	}
	err := exportPage.ExecuteTemplate(e.w, "message", struct {
		Role    string
		Seq     uint64
		Heading string
		Notes   []string
		Parts   []htmlPart
	}{role, m.Seq, heading(m), notes(m), parts})
	if err != nil {
		return err
	}
	return sticky(e.w)
}

func (e *htmlExport) end() error {
	return exportPage.ExecuteTemplate(e.w, "end", nil)
}
