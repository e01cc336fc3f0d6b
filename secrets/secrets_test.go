package secrets

import (
	"maps"
	"math/rand"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/scrim-dev/scrim/session"
)

// rnd draws n characters of alpha: credentials of the real shapes, with
// the spread of characters that real ones have (gitleaks checks entropy).
func rnd(r *rand.Rand, n int, alpha string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[r.Intn(len(alpha))]
	}
	return string(b)
}

const (
	alnum  = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	digits = "0123456789"
	hexa   = "0123456789abcdef"
)

type credential struct {
	name, before, secret, after, rule string
}

// credentials are the shapes a session prints: an .env, a config file,
// `env`, a curl command, a key file.
func credentials() []credential {
	r := rand.New(rand.NewSource(7))
	return []credential{
		{"AWS access key", "AWS_ACCESS_KEY_ID=", "AKIA" + rnd(r, 16, base32), "\n", "aws-access-token"},
		{"AWS secret key", "aws_secret_access_key = ", rnd(r, 40, alnum+"+/"), "\n", "generic-api-key"},
		{"GitHub classic PAT", "export GITHUB_TOKEN=", "ghp_" + rnd(r, 36, alnum), "\n", "github-pat"},
		{"GitHub fine-grained PAT", "token: ", "github_pat_" + rnd(r, 22, alnum) + "_" + rnd(r, 59, alnum), "\n", "github-fine-grained-pat"},
		{"GitHub OAuth token", "oauth_token: ", "gho_" + rnd(r, 36, alnum), "\n", "github-oauth"},
		{"GitLab PAT", "GITLAB_TOKEN=", "glpat-" + rnd(r, 20, alnum), "\n", "gitlab-pat"},
		{"Slack bot token", "SLACK_BOT_TOKEN=", "xoxb-" + rnd(r, 12, digits) + "-" + rnd(r, 13, digits) + "-" + rnd(r, 24, alnum), "\n", "slack-bot-token"},
		{"Slack webhook", "curl -X POST ", "https://hooks.slack.com/services/T" + rnd(r, 8, base32) + "/B" + rnd(r, 8, base32) + "/" + rnd(r, 24, alnum), " -d @msg.json", "slack-webhook-url"},
		{"Stripe live key", "STRIPE_SECRET_KEY=", "sk_live_" + rnd(r, 24, alnum), "\n", "stripe-access-token"},
		{"OpenAI project key", "OPENAI_API_KEY=", "sk-proj-" + rnd(r, 74, alnum) + "T3BlbkFJ" + rnd(r, 74, alnum), "\n", "openai-api-key"},
		{"Anthropic key", "ANTHROPIC_API_KEY=", "sk-ant-api03-" + rnd(r, 93, alnum+"_-") + "AA", "\n", "anthropic-api-key"},
		{"Google API key", "GOOGLE_API_KEY=", "AIza" + rnd(r, 35, alnum+"_-"), "\n", "gcp-api-key"},
		{"RSA private key", "key file:\n", "-----BEGIN RSA PRIVATE KEY-----\n" + rnd(r, 64, alnum) + "\n" + rnd(r, 64, alnum) + "\n-----END RSA PRIVATE KEY-----", "\n", "private-key"},
		{"OpenSSH private key", "", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + rnd(r, 70, alnum) + "\n" + rnd(r, 70, alnum) + "\n-----END OPENSSH PRIVATE KEY-----", "\n", "private-key"},
		{"JWT", "Authorization: Bearer ", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0." + rnd(r, 43, alnum+"_-"), "\n", "jwt"},
		{"generic password", "password=", rnd(r, 14, alnum), "\n", "generic-api-key"},
		{"quoted db password", "db_password = \"", rnd(r, 16, alnum), "\"\n", "generic-api-key"},
		{"npm token", "//registry.npmjs.org/:_authToken=", "npm_" + rnd(r, 36, alnum), "\n", "npm-access-token"},
		{"SendGrid key", "SENDGRID_API_KEY=", "SG." + rnd(r, 22, alnum) + "." + rnd(r, 43, alnum), "\n", "sendgrid-api-token"},
		{"Hugging Face token", "HF_TOKEN=", "hf_" + rnd(r, 34, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"), "\n", "huggingface-access-token"},
	}
}

// TestCredentialsAreFound: each shape is found, by its rule, and the span is
// the secret itself (a key's name and the text around it stay).
func TestCredentialsAreFound(t *testing.T) {
	for _, c := range credentials() {
		t.Run(c.name, func(t *testing.T) {
			// Not on the first line, and after a line of other text: the
			// span must come out right wherever gitleaks' columns count from.
			text := "# settings\nname = app\n" + c.before + c.secret + c.after + "trailing line\n"
			spans := ScanText(text)
			if len(spans) != 1 {
				t.Fatalf("%d findings in %q: %+v", len(spans), text, spans)
			}
			sp := spans[0]
			if sp.Rule != c.rule {
				t.Errorf("rule %s, want %s", sp.Rule, c.rule)
			}
			got := text[sp.Start:sp.End]
			if !strings.Contains(got, strings.TrimSpace(c.secret)) && !strings.Contains(c.secret, got) {
				t.Fatalf("span %q is not the secret %q", got, c.secret)
			}
			if strings.Contains(text[:sp.Start]+text[sp.End:], c.secret) {
				t.Fatalf("the secret is outside its span")
			}
			if !strings.HasPrefix(text[:sp.Start], "# settings\nname = app\n") || !strings.HasSuffix(text[sp.End:], "trailing line\n") {
				t.Fatalf("the span %d..%d reaches beyond the credential's line", sp.Start, sp.End)
			}
		})
	}
}

// TestNotCredentials: documentation examples, placeholders, identifiers and
// hashes are left alone, so a session about keys stays readable.
func TestNotCredentials(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, s := range []string{
		"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"request 550e8400-e29b-41d4-a716-446655440000 failed",
		"sha256:" + rnd(r, 64, hexa),
		"commit " + rnd(r, 40, hexa),
		"password=changeme",
		"password=${DB_PASSWORD}",
		`api_key = "your-api-key-here"`,
		"STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
		"integrity sha512-" + rnd(r, 86, alnum+"+/") + "==",
		"func TestCredentialsAreFound(t *testing.T) {",
	} {
		if spans := ScanText(s); len(spans) != 0 {
			t.Errorf("%q: found %+v", s, spans)
		}
	}
}

// TestScanUnits: a message's findings name the part and unit, inside a tool
// call's input too, with spans in the decoded string.
func TestScanUnits(t *testing.T) {
	c := credentials()[2]
	m := session.Message{Parts: []session.Part{
		{Kind: session.PartText, Text: "nothing here"},
		{Kind: session.PartToolCall, Name: "Bash", Input: []byte(`{"command":"curl -H \"Authorization: token ` + c.secret + `\" https://api.github.com","description":"x"}`)},
		{Kind: session.PartToolResult, Text: c.before + c.secret},
	}}
	fs := Scan(&m)
	if len(fs) != 2 {
		t.Fatalf("findings %+v", fs)
	}
	var command string
	m.Parts[1].EachUnit(func(u session.Unit) {
		if u.Key == 1 {
			command = u.Text
		}
	})
	if fs[0].Part != 1 || fs[0].Key != 1 || command[fs[0].Start:fs[0].End] != c.secret {
		t.Fatalf("tool call finding %+v in %q", fs[0], command)
	}
	if fs[1].Part != 2 || fs[1].Key != -1 || m.Parts[2].Text[fs[1].Start:fs[1].End] != c.secret {
		t.Fatalf("result finding %+v", fs[1])
	}
}

func TestPlaceholder(t *testing.T) {
	if got, want := Placeholder("github-pat", "cloud"), `[Secret filtered (github-pat) — trust tier "cloud" does not accept credentials]`; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got := Placeholder("bad]rule\n", "cloud"); strings.ContainsAny(got, "\n") || !strings.Contains(got, "(credential)") {
		t.Fatalf("an odd rule name is not kept out: %q", got)
	}
}

// mayHold reports whether ScanText would hand s to a detector: false is a
// text ruled out by its keywords.
func mayHold(s string) bool { return detectorFor(s) != nil }

// FuzzMayHold: a text mayHold rules out holds nothing gitleaks' detector
// finds, whatever its case and script (the Kelvin sign lower-cases to an
// ASCII k), so skipping the detector there changes no finding.
func FuzzMayHold(f *testing.F) {
	for _, c := range credentials() {
		f.Add(c.before + c.secret + c.after)
		f.Add(strings.ToUpper(c.before + c.secret + c.after))
	}
	f.Add("API_\u212AEY=" + "Zx8Qw3Lm0Pv7Rt2Yb5Nc9Kd4Hs6Jf1Gg")
	f.Add("func main() {\n\tfmt.Println(\"hello\")\n}\n")
	f.Fuzz(func(t *testing.T, s string) {
		if !mayHold(s) && len(load().DetectString(s)) > 0 {
			t.Fatalf("mayHold rules out %q, where gitleaks finds %v", s, load().DetectString(s))
		}
	})
}

// TestDefaultRulesAsGitleaksReadsThem: the rules parsed without gitleaks'
// own detector are gitleaks' default rules, and a detector of them finds
// what gitleaks' default detector finds.
func TestDefaultRulesAsGitleaksReadsThem(t *testing.T) {
	theirs, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	ours := defaultRules()
	if got, want := slices.Sorted(maps.Keys(ours.Rules)), slices.Sorted(maps.Keys(theirs.Config.Rules)); !slices.Equal(got, want) || len(got) < 200 {
		t.Fatalf("%d rules, gitleaks has %d", len(got), len(want))
	}
	for _, c := range credentials() {
		s := c.before + c.secret + c.after
		if got, want := spansOf(s, load().DetectString(s)), spansOf(s, theirs.DetectString(s)); !reflect.DeepEqual(got, want) || len(want) == 0 {
			t.Errorf("%s: %v, gitleaks finds %v", c.name, got, want)
		}
	}
}

// TestStopwordsAsGitleaksReadsThem: a generic secret that holds one of
// the generic rule's stopwords is left alone, as gitleaks' own default
// detector leaves it, though the stopwords are looked for one by one
// (unbuildStopwords); without one it is found.
func TestStopwordsAsGitleaksReadsThem(t *testing.T) {
	theirs, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	const plain = `auth_token = "Zx8Qw3Lm0Pv7Rt2Yb5Nc9Kd4"`
	if len(ScanText(plain)) == 0 {
		t.Fatalf("nothing found in %q", plain)
	}
	var words []string
	for _, a := range theirs.Config.Rules["generic-api-key"].Allowlists {
		words = append(words, a.StopWords...)
	}
	slices.Sort(words)
	// leftAlone scans a secret with w in it as gitleaks does; true:
	// gitleaks lets it be.
	leftAlone := func(w string) bool {
		s := `auth_token = "Zx8Qw3Lm0` + w + `Pv7Rt2Yb5Nc9Kd4"`
		got, want := ScanText(s), spansOf(s, theirs.DetectString(s))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, gitleaks finds %v", s, got, want)
		}
		return len(want) == 0
	}
	left := 0
	for i, w := range words {
		if i%25 == 0 && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz0123456789_") == "" && leftAlone(w) {
			left++
		}
	}
	if left < 20 {
		t.Fatalf("only %d secrets with a stopword left alone", left)
	}
	// The global allowlist's stopwords, taken out and given back too.
	global := 0
	for _, a := range theirs.Config.Allowlists {
		for _, w := range a.StopWords {
			if leftAlone(w) {
				global++
			}
		}
	}
	if global == 0 {
		t.Fatal("no secret with a global stopword left alone")
	}
}

// FuzzScanTextByKeywords: scanning a text with only the rules whose
// keywords it holds finds what scanning it with every rule finds, generic
// findings that a better rule beside them takes over included.
func FuzzScanTextByKeywords(f *testing.F) {
	var all strings.Builder
	for _, c := range credentials() {
		s := c.before + c.secret + c.after
		f.Add(s)
		f.Add(strings.ToUpper(s))
		all.WriteString(s + "\n")
	}
	f.Add(all.String())
	f.Add("the key they asked for: sk-live is not it, api_key = \"Zx8Qw3Lm0Pv7Rt2Yb5Nc9Kd4Hs6Jf1Gg\"")
	f.Add("func main() {\n\tfmt.Println(\"hello\")\n}\n")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) < minSecret {
			return
		}
		want := spansOf(s, load().DetectString(s))
		if got := ScanText(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("by keywords %v, with every rule %v, in %q", got, want, s)
		}
	})
}

// TestScanTextByKeywords: texts that hold a credential of each of the
// fixture's rules, alone and all together, find with the rules their
// keywords name what they find with all of them, and the detectors made
// for those sets are kept for the next text.
func TestScanTextByKeywords(t *testing.T) {
	var all strings.Builder
	for _, c := range credentials() {
		s := c.before + c.secret + c.after
		all.WriteString(s + "\n")
		if got, want := ScanText(s), spansOf(s, load().DetectString(s)); !reflect.DeepEqual(got, want) || len(want) == 0 {
			t.Errorf("%s: by keywords %v, with every rule %v", c.name, got, want)
		}
	}
	if got, want := ScanText(all.String()), spansOf(all.String(), load().DetectString(all.String())); !reflect.DeepEqual(got, want) || len(want) < len(credentials()) {
		t.Errorf("all together: by keywords %v, with every rule %v", got, want)
	}
	if loadKeywords() == nil {
		t.Fatal("the default rules have no keyword index")
	}
	s := credentials()[0].before + credentials()[0].secret
	if d := detectorFor(s); d == load() || d != detectorFor(strings.ToUpper(s)) {
		t.Error("a text with a keyword is scanned with every rule, or its set's detector is made again")
	}
}

// TestMayHoldRulesOutCode: the prefilter does rule out ordinary code and
// prose (it is there to make scanning them cheap), and not a credential.
func TestMayHoldRulesOutCode(t *testing.T) {
	for _, s := range []string{"func main() {\n\tfmt.Println(\"hello\")\n}\n", "Let me run the tests again.", "  12\treturn nil, err"} {
		if mayHold(s) {
			t.Errorf("mayHold(%q) = true: code without a keyword goes to the detector", s)
		}
	}
	for _, c := range credentials() {
		if s := c.before + c.secret + c.after; !mayHold(s) {
			t.Errorf("%s: mayHold(%q) = false", c.name, s)
		}
	}
}

// FuzzLower: the lower-casing the keywords are looked for in has the ASCII
// letters of gitleaks' own (strings.ToLower), where it has them, whatever
// else the text holds: any other run of bytes is non-ASCII in both.
func FuzzLower(f *testing.F) {
	f.Add("Hello, WORLD: the API_KEY is ü\u212A\u0130 AbCdEfGhIjKlMnOpQrStUvWxYz[@`{")
	f.Add("\xff\xc4\xb0\xe2\x84\xaa\xe2\x84\xc4\xb0ABCDEFGH\xc4")
	f.Fuzz(func(t *testing.T, s string) {
		collapse := func(b []byte) string {
			var out []byte
			for _, c := range b {
				if c >= utf8.RuneSelf {
					if len(out) > 0 && out[len(out)-1] == 0x80 {
						continue
					}
					c = 0x80
				}
				out = append(out, c)
			}
			return string(out)
		}
		if got, want := collapse(lower(s, nil)), collapse([]byte(strings.ToLower(s))); got != want {
			t.Fatalf("lower(%q):\n got %q\nwant %q", s, got, want)
		}
	})
}

// BenchmarkMayHold: ruling out a line of code with a non-ASCII letter.
func BenchmarkMayHold(b *testing.B) {
	s := strings.Repeat("\t\tif err := ctx.Err(); err != nil { return fmt.Errorf(\"ü: %w\", err) }\n", 8)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if mayHold(s) {
			b.Fatal("may hold a secret")
		}
	}
}

// BenchmarkScanText: a line of prose and code that holds short keywords
// ("key", "they", "task") and no credential, as most texts of a real
// session do: gitleaks runs on it.
// TestRuleTexts: a rule's table runs to the next table that is not one of
// its own ([[rules.allowlists]]), and a cut that does not match the rules
// read (a table missed, or in another order) is refused.
func TestRuleTexts(t *testing.T) {
	const text = `title = "x"
[[rules]]
id = "a"
regex = '''a[0-9]{8}'''
keywords = ["a"]
[[rules.allowlists]]
stopwords = ["[[rules]]"]
regexes = ['''^a0''']

[allowlist]
paths = ['''x''']

[[rules]]
id = "b"
regex = '''b[0-9]{8}'''
`
	read, err := readRules(text)
	if err != nil {
		t.Fatal(err)
	}
	got := ruleTexts(text, &read)
	if len(got) != 2 || !strings.HasSuffix(got[0], "regexes = ['''^a0''']\n\n") || !strings.HasPrefix(got[1], "[[rules]]\nid = \"b\"") {
		t.Fatalf("cut into %q", got)
	}
	for i, want := range []string{"a", "b"} {
		r, err := compileRule(got[i])
		if err != nil || r.RuleID != want {
			t.Fatalf("table %d compiles to %q, %v", i, r.RuleID, err)
		}
	}
	read.Rules[0], read.Rules[1] = read.Rules[1], read.Rules[0]
	if got := ruleTexts(text, &read); got != nil {
		t.Fatalf("cut against rules in another order: %q", got)
	}
	read.Rules = read.Rules[:1]
	if got := ruleTexts(text, &read); got != nil {
		t.Fatalf("cut against one rule of two: %q", got)
	}
}

// TestKeywordIndexHoldsLittle: the keyword index keeps its automaton, the
// global allowlists compiled and each rule's expression and place in the
// config (about 500 KiB, with or without the race detector), not the
// global stopwords' automaton (636 KiB with it) nor gitleaks' reading of
// the whole config (740 KiB with both, before).
func TestKeywordIndexHoldsLittle(t *testing.T) {
	newKeywordIndex() // what it sets up once (gitleaks' and viper's globals) is not the index's
	// Two collections: the first moves what pools hold aside, the second
	// frees it.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := newKeywordIndex()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 560<<10 {
		t.Errorf("the keyword index holds %d KiB", held>>10)
	} else {
		t.Logf("the keyword index holds %d KiB", held>>10)
	}
	runtime.KeepAlive(ix)
}

func BenchmarkScanText(b *testing.B) {
	s := strings.Repeat("They asked for the key of the task; if cfg.Key == \"\" { return errNoKey } // see the docs\n", 6)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if len(ScanText(s)) > 0 {
			b.Fatal("found a secret")
		}
	}
}

// TestLazyRules: each rule compiled alone, from its own table of gitleaks'
// config, is the rule gitleaks' reading of the whole config makes,
// stopwords included; a text with a credential is scanned having compiled
// only the rules its keywords name, for a fraction of what compiling them
// all allocates.
func TestLazyRules(t *testing.T) {
	whole := defaultRules()
	read, err := readDefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	texts := ruleTexts(config.DefaultConfig, &read)
	if len(texts) != len(read.Rules) || len(texts) != len(whole.Rules) {
		t.Fatalf("%d rule tables for %d rules read, %d compiled", len(texts), len(read.Rules), len(whole.Rules))
	}
	for i, r := range read.Rules {
		got, err := compileRule(texts[i])
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		if want := whole.Rules[r.ID]; !reflect.DeepEqual(got, want) {
			t.Fatalf("%s compiled alone differs from the whole config's", r.ID)
		}
	}

	allocated := func(fn func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	takeStopwords(&read) // as the lazy rules' reading takes them
	every := allocated(func() {
		cfg := read // a copy to translate: gitleaks writes into what it reads
		cfg.Rules = slices.Clone(read.Rules)
		for i := range cfg.Rules {
			cfg.Rules[i].Keywords = slices.Clone(cfg.Rules[i].Keywords)
		}
		cfg.Allowlists, cfg.AllowList = nil, nil
		if _, err := cfg.Translate(); err != nil {
			t.Fatal(err)
		}
	})
	c := credentials()[0]
	s := c.before + c.secret + c.after
	var found []report.Finding
	ix := newKeywordIndex()
	one := allocated(func() {
		var set ruleSet
		ix.dfa.walk(lower(s, nil), func(_ int, pattern int32) bool {
			for _, r := range ix.byKeyword[pattern] {
				set[r/64] |= 1 << (r % 64)
			}
			return true
		})
		found = ix.detector(set).DetectString(s)
	})
	compiled := 0
	for _, r := range ix.compiled {
		if r != nil {
			compiled++
		}
	}
	if want := spansOf(s, load().DetectString(s)); !reflect.DeepEqual(spansOf(s, found), want) || len(want) == 0 {
		t.Fatalf("%s: found %v, every rule finds %v", c.name, spansOf(s, found), want)
	}
	if compiled == 0 || compiled > 5 || one*4 > every {
		t.Fatalf("one text: %d of %d rules compiled, %d bytes allocated, against %d to compile them all", compiled, len(ix.ids), one, every)
	}
	t.Logf("one text: %d of %d rules compiled, %d KiB allocated, against %d KiB to compile them all", compiled, len(ix.ids), one>>10, every>>10)
}
