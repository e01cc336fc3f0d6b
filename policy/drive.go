package policy

import (
	"path"
	"strings"
)

// DrivePath reports whether p names a file on a Windows drive ("C:\Users\me",
// "c:/Users/me"), as a transcript written on Windows does, and returns it in
// the one form scrim records and matches: forward slashes, an upper-case
// drive letter, cleaned ("C:/Users/me"). Recorded that way, a Windows path is
// decided by the same patterns as any other: "**/.env" denies
// "C:/Users/me/app/.env". Such a path is never looked up on this machine's
// disk: it names a file on another one.
func DrivePath(p string) (string, bool) {
	if len(p) < 3 || p[1] != ':' || (p[2] != '\\' && p[2] != '/') {
		return "", false
	}
	d := p[0]
	switch {
	case d >= 'a' && d <= 'z':
		d -= 'a' - 'A'
	case d >= 'A' && d <= 'Z':
	default:
		return "", false
	}
	rest := path.Clean("/" + strings.ReplaceAll(p[3:], `\`, "/"))
	if rest == "/" {
		return string(d) + ":/", true
	}
	return string(d) + ":" + rest, true
}

// IsAbs reports whether p is absolute here or on a Windows drive.
func IsAbs(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	_, ok := DrivePath(p)
	return ok
}
