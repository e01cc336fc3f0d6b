//go:build unix

package tools

import "syscall"

// openNonblock keeps an open of a FIFO without a writer from waiting forever;
// reads of regular files ignore it.
const openNonblock = syscall.O_NONBLOCK
