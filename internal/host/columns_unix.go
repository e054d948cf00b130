//go:build unix

package host

import (
	"os"

	"golang.org/x/sys/unix"
)

// Columns is the width of the terminal f writes to, or 0 when f is no terminal (a pipe,
// a file, a CI log): tables wider than a terminal are laid out to fit it.
func Columns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
