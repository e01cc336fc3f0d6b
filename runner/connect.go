package runner

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/openaicompat"
)

// Connect resolves model ("provider/model") to a ready language model. It
// fails, before anything is sent, with one line naming the provider and what
// to set when the provider is unknown or unsupported or its key is missing.
func (ps *Providers) Connect(ctx context.Context, model string, hc *http.Client) (fantasy.LanguageModel, Provider, error) {
	return ps.connect(ctx, model, hc, false)
}

// connect is Connect; preview builds a model that is never called over the
// network (RequestBody, RequestWriter), so a missing API key or header variable does not
// stop it: neither is part of the request's body.
func (ps *Providers) connect(ctx context.Context, model string, hc *http.Client, preview bool) (fantasy.LanguageModel, Provider, error) {
	provName, name, err := SplitModel(model)
	if err != nil {
		return nil, Provider{}, err
	}
	p, err := ps.Lookup(provName)
	if err != nil {
		return nil, p, err
	}
	if p.Unsupported != "" {
		return nil, p, fmt.Errorf("%s", p.Unsupported)
	}
	key := ""
	if p.APIKeyEnv != "" {
		key = ps.getenv(p.APIKeyEnv)
		if key == "" && preview {
			key = "preview"
		}
		if key == "" {
			if p.Source == SourceConfigured {
				return nil, p, fmt.Errorf("provider %q needs an API key: set %s (api_key_env in %s)", p.Name, p.APIKeyEnv, p.configHint())
			}
			return nil, p, fmt.Errorf("provider %q needs an API key: set %s", p.Name, p.APIKeyEnv)
		}
	}
	headers := map[string]string{}
	for k, v := range p.Headers {
		var missing string
		headers[k] = os.Expand(v, func(name string) string {
			val := ps.getenv(name)
			if val == "" && preview {
				val = "preview"
			}
			if val == "" && missing == "" {
				missing = name
			}
			return val
		})
		if missing != "" {
			return nil, p, fmt.Errorf("provider %q: header %s uses $%s, which is not set: set it (headers in %s)", p.Name, k, missing, p.configHint())
		}
	}
	base := p.BaseURL
	if p.Source == SourceDemo {
		if base, err = ps.demoURL(); err != nil {
			return nil, p, err
		}
		p.BaseURL = base
	}
	if hc == nil {
		hc = DefaultHTTPClient()
	}
	prov, err := openaicompat.New(
		openaicompat.WithBaseURL(base),
		openaicompat.WithHTTPClient(&wireGuard{client: hc, key: key, headers: headers}),
		openaicompat.WithUserAgent("scrim"),
	)
	if err != nil {
		return nil, p, fmt.Errorf("provider %q: %v", p.Name, err)
	}
	lm, err := prov.LanguageModel(ctx, name)
	if err != nil {
		return nil, p, fmt.Errorf("provider %q: %v", p.Name, err)
	}
	return lm, p, nil
}

func (ps *Providers) getenv(name string) string {
	if ps != nil && ps.Getenv != nil {
		return ps.Getenv(name)
	}
	return os.Getenv(name)
}

// DefaultHTTPClient is the client used when none is injected: no overall
// timeout (answers stream for minutes), but a bounded wait for the first byte.
func DefaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 3 * time.Minute
	return &http.Client{Transport: t}
}
