//go:build unix

package host

import "syscall"

// OpenFiles is how many files this process may have open at once (its soft limit, which
// Go raises to the hard one at start-up); ok is false when it cannot be read.
func OpenFiles() (n uint64, ok bool) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, false
	}
	return lim.Cur, true
}
