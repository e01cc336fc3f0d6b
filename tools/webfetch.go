package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html/charset"
)

// Limits of one fetch.
const (
	fetchTimeout         = 30 * time.Second
	fetchDefaultMaxBytes = 512 << 10
	fetchMaxBytes        = 5 << 20
)

func init() { register(webfetchTool{}) }

type webfetchTool struct{}

type webfetchInput struct {
	URL      string `json:"url"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

func (webfetchTool) Name() string { return "webfetch" }

func (webfetchTool) Description() string {
	return "Fetch a web page or text resource over http(s) with GET. HTML is reduced to readable text (headings, lists and links kept); other text types are returned as they are. The body is cut at max_bytes."
}

func (webfetchTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"url":       map[string]any{"type": "string", "format": "uri", "description": "The http:// or https:// URL to fetch."},
			"max_bytes": map[string]any{"type": "integer", "minimum": 1, "maximum": fetchMaxBytes, "description": "Most bytes of the body to read (default 512 KiB, at most 5 MiB)."},
		},
		"required":             []string{"url"},
		"additionalProperties": false,
	}
}

// Run never attributes its result to files: web content has no source path.
func (webfetchTool) Run(ctx context.Context, env Env, input json.RawMessage) Result {
	var in webfetchInput
	if err := decode(input, &in); err != nil {
		return errorResult(env, "webfetch", "webfetch failed: %v", err)
	}
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errorResult(env, "webfetch", "webfetch failed: %q is not an http:// or https:// URL", in.URL)
	}
	limit := in.MaxBytes
	if limit <= 0 {
		limit = fetchDefaultMaxBytes
	}
	limit = min(limit, fetchMaxBytes)
	ctx, cancel := withTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errorResult(env, "webfetch", "webfetch failed: %v", err)
	}
	req.Header.Set("User-Agent", "scrim-webfetch/1")
	req.Header.Set("Accept", "text/html, text/plain, text/markdown, application/json, */*;q=0.5")
	client := env.HTTP
	if client == nil {
		client = &http.Client{Timeout: fetchTimeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		return errorResult(env, "webfetch", "webfetch failed: GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return errorResult(env, "webfetch", "webfetch failed: reading %s: %v", u, err)
	}
	cut := len(body) > limit
	if cut {
		body = body[:limit]
	}
	ctype := resp.Header.Get("Content-Type")
	text, err := bodyText(body, ctype, resp.Request.URL)
	if err != nil {
		return errorResult(env, "webfetch", "webfetch failed: %s: %v", u, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\nStatus: %s\n", resp.Request.URL, resp.Status)
	if ctype != "" {
		fmt.Fprintf(&b, "Content-Type: %s\n", ctype)
	}
	b.WriteByte('\n')
	b.WriteString(text)
	if cut {
		fmt.Fprintf(&b, "\n[body cut at %d bytes: fetch again with a larger max_bytes (at most %d) to see more]", limit, fetchMaxBytes)
	}
	msg := newResult(env, "webfetch")
	msg.IsError = resp.StatusCode >= 400
	msg.Parts = append(msg.Parts, textPart(strings.ToValidUTF8(b.String(), "\uFFFD"), ""))
	msg.Meta.UnknownSource = "content fetched from the web (" + oneLine(u.String()) + ")"
	return Result{Message: msg}
}

// bodyText decodes a body to UTF-8 text by its declared charset, reducing HTML
// to readable text. Types that are not text are refused.
func bodyText(body []byte, ctype string, base *url.URL) (string, error) {
	media := "text/plain"
	if ctype != "" {
		if m, _, err := mime.ParseMediaType(ctype); err == nil {
			media = m
		}
	} else {
		media, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	if !isTextual(media) {
		return "", fmt.Errorf("the body is %s, not text", media)
	}
	r, err := charset.NewReader(strings.NewReader(string(body)), ctype)
	if err != nil {
		r = strings.NewReader(string(body))
	}
	if media == "text/html" || media == "application/xhtml+xml" {
		return htmlText(r, base)
	}
	decoded, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	return string(decoded), nil
}

func isTextual(media string) bool {
	switch {
	case strings.HasPrefix(media, "text/"),
		media == "application/json", strings.HasSuffix(media, "+json"),
		media == "application/xml", strings.HasSuffix(media, "+xml"),
		media == "application/javascript", media == "application/x-yaml", media == "application/yaml",
		media == "application/toml", media == "application/x-sh":
		return true
	}
	return false
}
