package servers

import "syscall"

// childAttrs puts the server in its own process group, so the terminal's Ctrl-C reaches
// only the harness (which still needs the server to read the final stock), and has the
// kernel kill it if the harness itself dies without cleaning up.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
