//go:build unix

package owned

import (
	"errors"
	"syscall"
)

// Alive reports whether process pid exists.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
