package policy

import (
	"runtime"
	"strings"
)

// foldDeny makes deny patterns match whatever the case of a path. The disks
// of macOS and Windows are case-insensitive by default: there SECRETS/key
// opens secrets/key, and a path is resolved as written, so a deny pattern
// that only matched the case it was written in could be walked around.
// Folding deny (never read) patterns can only deny more: fail closed. On
// Linux, where SECRETS and secrets are different folders, it stays off.
var foldDeny = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// lowerForms are the pattern's forms for case-folded matching.
func lowerForms(forms []form) []form {
	out := make([]form, len(forms))
	for i, f := range forms {
		out[i] = newForm(strings.ToLower(f.glob), strings.ToLower(f.prefix))
	}
	return out
}

// matchDeny matches a deny pattern, case-folded where foldDeny says so.
func (p Pattern) matchDeny(path string) bool {
	if !foldDeny {
		return p.match(path)
	}
	return matchForms(p.lower, strings.ToLower(path))
}
