package policy

import (
	"fmt"
	"testing"
)

// TestDenyFoldsCaseWhereDisksDo: on macOS and Windows "SECRETS/key" opens
// "secrets/key", so a deny pattern must match any case there; read
// patterns keep their case (a miss only denies). On Linux, folding is off:
// "Secrets" is another folder.
func TestDenyFoldsCaseWhereDisksDo(t *testing.T) {
	root := tempRoot(t)
	p, err := Parse([]byte(fmt.Sprintf(`default_tier = "limited"
[tiers.limited]
label = "limited"
read  = [%q]
deny  = [%q, "**/.env", "**/*.PEM"]
`, root+"/ws/**", root+"/ws/secrets/**")), root+"/policy.toml")
	if err != nil {
		t.Fatal(err)
	}
	tier := p.Tiers["limited"]
	cases := []struct {
		path               string
		folded, caseStrict bool // allowed with folding on, and off
	}{
		{"ws/secrets/key", false, false},
		{"ws/SECRETS/key", false, true},
		{"ws/Secrets/sub/key", false, true},
		{"ws/app/.ENV", false, true},
		{"ws/certs/server.pem", false, true},
		{"ws/certs/server.PEM", false, false},
		{"ws/public/readme", true, true},
		{"WS/public/readme", false, false}, // no read pattern in this case: denied either way
	}
	for _, fold := range []bool{true, false} {
		saved := foldDeny
		foldDeny = fold
		for _, c := range cases {
			want := c.caseStrict
			if fold {
				want = c.folded
			}
			if got := p.Decide(tier, root+"/"+c.path).Allowed; got != want {
				t.Errorf("fold %v: %s allowed %v, want %v", fold, c.path, got, want)
			}
		}
		foldDeny = saved
	}
}
