//go:build unix

package cli

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium is the path of a Chromium or Chrome, "" when there is none
// (.ci/run installs Debian's chromium).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// The HTML export in a real headless Chromium: the page renders with the
// redaction banner and placeholders visible, a tool result opens and closes
// with a click, the hostile file's <script>, </pre> and <img> are text and
// no element of them exists, the page asks for nothing beyond itself, and
// no element points outside it.
func TestExportHTMLInBrowser(t *testing.T) {
	t.Parallel()
	isolate(t)
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium found (chromium, chromium-browser or google-chrome on PATH): the HTML export is not checked in a browser; .ci/run installs Debian's chromium package")
	}
	f := newExportFixture(t)
	page := filepath.Join(f.root, "export.html")
	if _, stderr, code := scrim(t, "", f.args("export", f.id, "--model", "anthropic/claude-x", "--format", "html", "-o", page)...); code != exitOK {
		t.Fatal(stderr)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(filepath.Join(f.root, "chromium")),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-gpu", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()

	var mu sync.Mutex
	var requests, problems []string
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		case *runtime.EventConsoleAPICalled:
			problems = append(problems, "console: "+string(ev.Type))
		case *cdplog.EventEntryAdded:
			// A Content Security Policy violation (the style's hash
			// not matching, say) is logged here.
			problems = append(problems, "log: "+ev.Entry.Text)
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		}
	})
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("chromium: %s: %v", what, err)
		}
	}
	_, err = chromedp.Call(ctx, network.Enable, network.EnableParams{})
	check("network", err)
	_, err = chromedp.Call(ctx, runtime.Enable, cdp.Empty{})
	check("runtime", err)
	_, err = chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
	check("log", err)
	check("load", chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("main"))))
	title, err := chromedp.Run(ctx, chromedp.Title())
	check("title", err)
	banner, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#redaction")))
	check("banner", err)
	placeholder, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#m3 .placeholder")))
	check("placeholder", err)
	eval := func(js string) any {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		check(js, err)
		return v
	}
	// The style applies (the policy allows it by hash): the banner has its colour.
	bannerColour := eval(`getComputedStyle(document.querySelector("#redaction")).backgroundColor`)
	scripts := eval(`document.querySelectorAll("script").length`)
	embedded := eval(`document.querySelectorAll("img, iframe, object, embed, link, video, audio, source, form").length`)
	addressed := eval(`document.querySelectorAll("[src], [href], [srcset], [action], [data], [style]").length`)
	openBefore := eval(`document.querySelector("#m5 details").open`)
	hiddenBefore := eval(`!document.querySelector("#m5 details pre").checkVisibility()`)
	check("click", chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#m5 details summary"))))
	openAfter := eval(`document.querySelector("#m5 details").open`)
	visibleAfter := eval(`document.querySelector("#m5 details pre").checkVisibility()`)
	hostileText, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#m5 details pre")))
	check("result text", err)

	if bannerColour != "rgb(232, 241, 251)" {
		t.Errorf("banner background %v: the page's style did not apply", bannerColour)
	}
	if scripts != 0.0 || embedded != 0.0 || addressed != 0.0 {
		t.Errorf("%v scripts, %v embedded elements, %v elements with an address or style: content became markup", scripts, embedded, addressed)
	}
	if openBefore != false || hiddenBefore != true || openAfter != true || visibleAfter != true {
		t.Errorf("tool result: open before the click %v (hidden %v), after %v (visible %v)", openBefore, hiddenBefore, openAfter, visibleAfter)
	}
	if !strings.Contains(title, "scrim export") || !strings.Contains(banner, "Redacted for model anthropic/claude-x") {
		t.Errorf("title %q, banner %q", title, banner)
	}
	if !strings.Contains(placeholder, `filtered — trust tier "limited" does not have read access`) {
		t.Errorf("placeholder shown as %q", placeholder)
	}
	if !strings.Contains(hostileText, "<script>alert('x')</script>") || !strings.Contains(hostileText, `</pre><img src="http://evil.example/p.png">`) {
		t.Errorf("the file's text is not shown as text: %q", hostileText)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if u != "file://"+page {
			t.Errorf("the page requested %s", u)
		}
	}
	if len(problems) > 0 {
		t.Errorf("the page logged, threw or ran code: %v", problems)
	}
}
