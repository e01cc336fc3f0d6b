// Package policytest helps tests that run under a trust policy: the
// three-tier policy the tools', redaction's and the CLI's tests share, and
// a parse of a policy text that fails the test on an error.
package policytest

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/policy"
)

// Tiers is the three-tier test policy. Models matching trusted/* are in
// tier "all", which reads everything and is offered every tool; models
// matching limited/* are in tier "limited", which reads everything but
// **/secrets/** and is offered the default tools; any other model is in
// tier "none", which reads nothing. Labels are the tier names (Labelled
// changes the limited tier's). Tests quote its lines: the deny pattern is on
// line 12.
const Tiers = `
default_tier = "none"

[tiers.all]
label = "all"
read  = ["/**"]
tools = ["read", "grep", "glob", "bash", "webfetch"]

[tiers.limited]
label = "limited"
read  = ["/**"]
deny  = ["**/secrets/**"]

[tiers.none]
label = "none"
read  = []

[[models]]
match = "trusted/*"
tier  = "all"

[[models]]
match = "limited/*"
tier  = "limited"
`

// Labelled is Tiers with the limited tier labelled label (printable text),
// for tests that tell a tier's label, what placeholders and reports show,
// from its name.
func Labelled(label string) string {
	return strings.Replace(Tiers, `label = "limited"`, "label = "+strconv.Quote(label), 1)
}

// Policy parses text as a policy file in a temporary folder of t, failing t
// if it does not load.
func Policy(t testing.TB, text string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(text), filepath.Join(t.TempDir(), "policy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
