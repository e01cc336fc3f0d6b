package runner

import (
	"strings"
	"testing"
)

// The lines inside a multi-line string or array are part of a value, even
// when they look like a table header or a key: the provider and the key after
// them get their own lines.
func TestProviderLinesAfterMultiLineValues(t *testing.T) {
	src := strings.Join([]string{
		`[providers.a]`,            // 1
		`base_url = "http://h/v1"`, // 2
		`models = [`,               // 3
		`  "m1",`,                  // 4
		`  """`,                    // 5
		`[providers.b]`,            // 6
		`timeout = 1""",`,          // 7
		`]`,                        // 8
		``,                         // 9
		`[providers.b]`,            // 10
		`base_url = "http://h/v1"`, // 11
	}, "\n") + "\n"
	ps := mustProviders(t, src)
	if p, err := ps.Lookup("b"); err != nil || p.Line != 10 {
		t.Errorf("provider b: line %d, %v; want line 10", p.Line, err)
	}
	_, err := ParseProviders([]byte(src+"timeout = 3\n"), "p.toml")
	if err == nil || !strings.HasPrefix(err.Error(), `p.toml:12: unknown key "providers.b.timeout"`) {
		t.Fatalf("error %v, want it on line 12", err)
	}
}
