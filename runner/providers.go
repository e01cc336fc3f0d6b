package runner

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	"golang.org/x/net/http/httpguts"

	"github.com/scrim-dev/scrim/internal/tomlconf"
	"github.com/scrim-dev/scrim/internal/userdirs"
)

// Where a provider or model comes from.
const (
	SourceConfigured = "configured" // providers.toml
	SourceCatalogue  = "catalogue"  // catwalk's embedded list of known providers
	SourceDemo       = "demo"       // the in-process demo server
)

// DemoProvider is the name of the built-in offline provider.
const DemoProvider = "demo"

// TypeOpenAICompat is the only wire protocol scrim speaks: OpenAI chat completions.
const TypeOpenAICompat = "openai-compat"

// maxProvidersSize keeps a mistaken --providers (a log, an image) from being read whole.
const maxProvidersSize = 1 << 20

// Provider is one place models can be sent to.
type Provider struct {
	Name      string
	Type      string // always TypeOpenAICompat for a provider scrim can call
	BaseURL   string
	APIKeyEnv string            // variable holding the key; "" when none is needed
	Headers   map[string]string // values may name variables: "$TEAM_TOKEN"
	Models    []string          // known model names, without the "provider/" prefix
	Names     map[string]string // model → display name (catalogue)
	Source    string
	File      string // providers.toml that configured it ("" otherwise)
	Line      int
	// Unsupported says why scrim cannot call this catalogue provider ("" = it can).
	Unsupported string
}

// ConfigError says what is wrong with a providers file and where: FILE:LINE:
// MSG, or FILE: MSG for the file as a whole (it cannot be read).
type ConfigError = tomlconf.Error

// providersKind words the messages about a providers file that is not one.
var providersKind = tomlconf.Kind{
	Name:       "providers file",
	Unreadable: "cannot read providers file",
	MaxSize:    maxProvidersSize,
	IfEmpty:    "add a [providers.NAME] table (see README) or remove the file",
	IfBinary:   "it must be UTF-8 TOML text",
}

// Providers is the set of providers scrim can send to: the configured ones,
// the catalogue's and the demo. Safe for concurrent use.
type Providers struct {
	File       string // the providers.toml loaded; "" when there is none
	configured map[string]*Provider
	// Getenv reads API keys and header variables; tests replace it.
	Getenv func(string) string
	// defaultFile is where the providers file would be, for messages.
	defaultFile string

	demoMu sync.Mutex
	demo   *DemoServer
}

type fileProvider struct {
	Type      *string           `toml:"type"`
	BaseURL   *string           `toml:"base_url"`
	APIKeyEnv *string           `toml:"api_key_env"`
	Headers   map[string]string `toml:"headers"`
	Models    []string          `toml:"models"`
}

type providersFile struct {
	Providers map[string]*fileProvider `toml:"providers"`
}

// DefaultProvidersFile is <user config dir>/scrim/providers.toml.
func DefaultProvidersFile() (string, error) { return defaultProvidersFile(os.LookupEnv) }

func defaultProvidersFile(env userdirs.Lookup) (string, error) {
	dir, err := userdirs.Config(env)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "scrim", "providers.toml"), nil
}

// LoadProviders reads path (--providers), or the default file when path is
// "". A named file must exist; a missing default file means "no configured
// providers" (the catalogue and the demo still work).
func LoadProviders(path string) (*Providers, error) { return LoadProvidersEnv(path, os.LookupEnv) }

// LoadProvidersEnv is LoadProviders with the config folder and API keys
// taken from env.
func LoadProvidersEnv(path string, env userdirs.Lookup) (*Providers, error) {
	getenv := func(k string) string { v, _ := env(k); return v }
	ps := &Providers{configured: map[string]*Provider{}, Getenv: getenv}
	def, defErr := defaultProvidersFile(env)
	if defErr == nil {
		ps.defaultFile = def
	}
	if path == "" {
		if defErr != nil {
			return ps, nil // no config folder: nothing configured
		}
		if _, err := os.Stat(def); errors.Is(err, os.ErrNotExist) {
			return ps, nil
		}
		path = def
	}
	path, err := userdirs.Expand(path, env)
	if err != nil {
		return nil, err
	}
	abs, data, err := providersKind.Read(path)
	if err != nil {
		return nil, err
	}
	// An empty file is a mistake (a failed write, the wrong file), not a
	// way to say "no providers": for that, leave the file out. A file held
	// in memory (ParseProviders) may be empty.
	if err := providersKind.CheckEmpty(data, path); err != nil {
		return nil, err
	}
	if err := ps.parse(data, abs); err != nil {
		return nil, err
	}
	ps.File = abs
	return ps, nil
}

// ParseProviders is LoadProviders for a file held in memory; file names it in errors.
func ParseProviders(data []byte, file string) (*Providers, error) {
	ps := &Providers{configured: map[string]*Provider{}, Getenv: os.Getenv, File: file}
	if err := ps.parse(data, file); err != nil {
		return nil, err
	}
	return ps, nil
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var tomlTypeErr = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

func (ps *Providers) parse(data []byte, file string) error {
	fail := func(line int, format string, a ...any) error {
		return &ConfigError{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	if err := providersKind.CheckText(data, file); err != nil {
		return err
	}
	var ff providersFile
	md, err := toml.Decode(string(data), &ff)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fail(pe.Position.Line, "%s", pe.Message)
		}
		// Type errors come as text: "toml: line 2 (last key "k"): incompatible types: …".
		if m := tomlTypeErr.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return fail(line, "%s: %s", m[2], m[3])
		}
		return fail(0, "%v", err)
	}
	loc := tomlconf.Locate(data)
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		switch {
		case len(k) < 3 || k[0] != "providers":
			return fail(loc.Line(k...), "unknown key %q (expected [providers.NAME] tables)", k.String())
		case len(k) == 3 && (k[2] == "api_key" || k[2] == "key"):
			return fail(loc.Line(k...), "unknown key %q: keys never go in this file; put the key in an environment variable and name it with api_key_env", k.String())
		}
		return fail(loc.Line(k...), "unknown key %q (a provider takes type, base_url, api_key_env, headers, models)", k.String())
	}
	// The decoder quietly turns a string into an empty map; say so instead.
	for _, k := range md.Keys() {
		if len(k) == 3 && k[0] == "providers" && k[2] == "headers" && md.Type(k...) != "Hash" {
			return fail(loc.Line(k...), "provider %q: headers must be a table like { \"X-Team\" = \"sec\" }, not a %s", k[1], strings.ToLower(md.Type(k...)))
		}
	}
	names := make([]string, 0, len(ff.Providers))
	for name := range ff.Providers {
		names = append(names, name)
	}
	// Report the first problem in file order.
	sort.Slice(names, func(i, j int) bool {
		return loc.Line("providers", names[i]) < loc.Line("providers", names[j])
	})
	for _, name := range names {
		p, err := configuredProvider(name, ff.Providers[name], file, loc)
		if err != nil {
			return err
		}
		ps.configured[name] = p
	}
	return nil
}

// configuredProvider validates one [providers.NAME] table. A catalogue
// provider of the same name supplies what the table leaves out.
func configuredProvider(name string, fp *fileProvider, file string, loc *tomlconf.Locator) (*Provider, error) {
	line := loc.Line("providers", name)
	fail := func(key string, format string, a ...any) (*Provider, error) {
		l := line
		if key != "" {
			l = loc.Line("providers", name, key)
		}
		return nil, &ConfigError{File: file, Line: l, Msg: fmt.Sprintf("provider %q: ", name) + fmt.Sprintf(format, a...)}
	}
	switch {
	case name == DemoProvider:
		return fail("", "the name is reserved for the built-in demo; pick another name")
	case name == "" || strings.ContainsAny(name, "/ \t"):
		return fail("", "a provider name may not be empty or contain '/' or spaces (model IDs are provider/model)")
	}
	if fp == nil {
		fp = &fileProvider{}
	}
	p, known := catalogueProvider(name)
	if !known {
		p = Provider{Name: name, Type: TypeOpenAICompat}
	}
	p.Source, p.File, p.Line, p.Unsupported = SourceConfigured, file, line, ""
	if fp.Type != nil && *fp.Type != TypeOpenAICompat && *fp.Type != "openai" {
		return fail("type", "type %q is not supported; use type = %q (the OpenAI chat-completions API)", *fp.Type, TypeOpenAICompat)
	}
	if fp.BaseURL != nil {
		u, err := url.Parse(*fp.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fail("base_url", "base_url %q is not an http(s) URL like \"http://127.0.0.1:11434/v1\"", *fp.BaseURL)
		}
		p.BaseURL = strings.TrimRight(*fp.BaseURL, "/")
	}
	if p.BaseURL == "" {
		return fail("", "no base_url; add base_url = \"https://host/v1\"")
	}
	if fp.APIKeyEnv != nil {
		v := *fp.APIKeyEnv
		switch {
		case strings.HasPrefix(v, "$") && envName.MatchString(v[1:]):
			return fail("api_key_env", "api_key_env is the variable's name; write %q without the $", v[1:])
		case v != "" && !envName.MatchString(v):
			return fail("api_key_env", "api_key_env must name an environment variable (like MY_API_KEY), never hold the key itself")
		}
		p.APIKeyEnv = v
	}
	if fp.Headers != nil {
		p.Headers = map[string]string{}
		for k, v := range fp.Headers {
			if !httpguts.ValidHeaderFieldName(k) {
				return fail("headers", "header name %q is not valid", k)
			}
			if !httpguts.ValidHeaderFieldValue(v) {
				return fail("headers", "header %q has a control character or line break in its value", k)
			}
			p.Headers[k] = v
		}
	}
	for _, m := range fp.Models {
		if strings.TrimSpace(m) == "" {
			return fail("models", "empty model name in models")
		}
	}
	if fp.Models != nil {
		p.Models = append([]string(nil), fp.Models...)
	}
	return &p, nil
}

// Configured returns the providers from providers.toml, sorted by name.
func (ps *Providers) Configured() []Provider {
	out := make([]Provider, 0, len(ps.configured))
	for _, p := range ps.configured {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SplitModel splits "provider/model" at the first slash.
func SplitModel(model string) (provider, name string, err error) {
	provider, name, ok := strings.Cut(model, "/")
	if !ok || provider == "" || name == "" {
		return "", "", fmt.Errorf("model %q is not of the form provider/model (list them with: scrim models)", model)
	}
	return provider, name, nil
}

// Lookup finds the provider for a provider name: configured first, then the
// demo, then the catalogue.
func (ps *Providers) Lookup(name string) (Provider, error) {
	if p, ok := ps.configured[name]; ok {
		return *p, nil
	}
	if name == DemoProvider {
		return Provider{Name: DemoProvider, Type: TypeOpenAICompat, Source: SourceDemo, Models: DemoModels}, nil
	}
	if p, ok := catalogueProvider(name); ok {
		return p, nil
	}
	where := "<user config dir>/scrim/providers.toml"
	if ps.File != "" {
		where = ps.File
	} else if ps.defaultFile != "" {
		where = ps.defaultFile
	} else if def, err := DefaultProvidersFile(); err == nil {
		where = def
	}
	return Provider{}, fmt.Errorf("unknown provider %q: add [providers.%s] with base_url to %s (see: scrim models)", name, name, where)
}

// configHint says where a provider's settings live, for error messages.
func (p Provider) configHint() string {
	if p.File != "" {
		return p.File
	}
	return "providers.toml"
}

// Close stops the demo server if it was started.
func (ps *Providers) Close() error {
	ps.demoMu.Lock()
	defer ps.demoMu.Unlock()
	if ps.demo == nil {
		return nil
	}
	err := ps.demo.Close()
	ps.demo = nil
	return err
}

// demoURL starts the demo server on first use and returns its base URL.
func (ps *Providers) demoURL() (string, error) {
	ps.demoMu.Lock()
	defer ps.demoMu.Unlock()
	if ps.demo == nil {
		d, err := StartDemo()
		if err != nil {
			return "", fmt.Errorf("start the demo provider: %w", err)
		}
		ps.demo = d
	}
	return ps.demo.URL(), nil
}
