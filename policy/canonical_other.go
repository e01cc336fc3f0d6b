//go:build !linux

package policy

// kernelResolve has no fast path outside Linux: resolve walks.
func kernelResolve(string) (string, bool) { return "", false }
