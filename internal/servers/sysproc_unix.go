//go:build unix && !linux

package servers

import "syscall"

// childAttrs puts the server in its own process group, so the terminal's Ctrl-C reaches
// only the harness, which still needs the server to read the final stock.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
