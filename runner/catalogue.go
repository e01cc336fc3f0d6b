package runner

import (
	"fmt"
	"strings"
	"sync"

	"charm.land/catwalk/pkg/catwalk"
	"charm.land/catwalk/pkg/embedded"
)

// compatEndpoints are the OpenAI-compatible endpoints of catalogue providers
// whose catalogue entry names a native API or only an endpoint variable.
// Anthropic and Google both serve the chat-completions API at these URLs.
var compatEndpoints = map[string]string{
	"openai":    "https://api.openai.com/v1",
	"anthropic": "https://api.anthropic.com/v1",
	"gemini":    "https://generativelanguage.googleapis.com/v1beta/openai",
}

// catalogue is catwalk's embedded provider list turned into Providers once:
// parsing it costs milliseconds and the picker asks often.
var catalogue = sync.OnceValue(func() catalogueIndex {
	idx := catalogueIndex{byName: map[string]Provider{}}
	for _, cp := range embedded.GetAll() {
		p := fromCatwalk(cp)
		if _, dup := idx.byName[p.Name]; dup {
			continue
		}
		idx.byName[p.Name] = p
		idx.order = append(idx.order, p.Name)
	}
	return idx
})

type catalogueIndex struct {
	byName map[string]Provider
	order  []string // catwalk's order: main providers first
}

func catalogueProvider(name string) (Provider, bool) {
	p, ok := catalogue().byName[name]
	if ok {
		p.Headers = nil
		p.Models = append([]string(nil), p.Models...)
	}
	return p, ok
}

// catalogueProviders returns the catalogue in its own order.
func catalogueProviders() []Provider {
	idx := catalogue()
	out := make([]Provider, 0, len(idx.order))
	for _, name := range idx.order {
		out = append(out, idx.byName[name])
	}
	return out
}

func fromCatwalk(cp catwalk.Provider) Provider {
	name := string(cp.ID)
	p := Provider{Name: name, Type: TypeOpenAICompat, Source: SourceCatalogue, Names: map[string]string{}}
	for _, m := range cp.Models {
		p.Models = append(p.Models, m.ID)
		if m.Name != "" {
			p.Names[m.ID] = m.Name
		}
	}
	if v, ok := strings.CutPrefix(cp.APIKey, "$"); ok && envName.MatchString(v) {
		p.APIKeyEnv = v
	}
	// Catalogue default headers attribute traffic to another app; scrim does
	// not send them. A user who needs headers sets them in providers.toml.
	endpoint := cp.APIEndpoint
	if strings.HasPrefix(endpoint, "$") {
		endpoint = ""
	}
	switch {
	case compatEndpoints[name] != "":
		p.BaseURL = compatEndpoints[name]
	case cp.Type == catwalk.TypeOpenAI || cp.Type == catwalk.TypeOpenAICompat ||
		cp.Type == catwalk.TypeOpenRouter || cp.Type == catwalk.TypeVercel:
		p.BaseURL = strings.TrimRight(endpoint, "/")
	}
	switch {
	case p.BaseURL == "":
		p.Unsupported = fmt.Sprintf("provider %q speaks the %s API, which scrim cannot call; put an OpenAI-compatible gateway in front of it and add it to providers.toml", name, cp.Type)
	case p.APIKeyEnv == "":
		p.Unsupported = fmt.Sprintf("provider %q signs in without an API key, which scrim cannot do; add an OpenAI-compatible gateway for it to providers.toml", name)
	}
	return p
}
