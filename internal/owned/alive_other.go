//go:build !unix

package owned

// Alive cannot tell here: every owner counts as alive, and nothing is
// removed.
func Alive(int) bool { return true }
