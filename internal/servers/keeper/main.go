// Keeper is the first process of the harness's own Redis image: it runs the server it is
// given and, once that server has died, starts it again when it receives SIGHUP.
//
// A container ends with its first process, and starting a stopped container again costs
// the engine 0.5 to 2.5 seconds on a loaded 2-CPU machine, which a restart fault would
// then measure as downtime it never asked for (past a lock's 1 s lease, say). With the
// keeper first, the harness kills the server inside the container and asks for it back,
// as it does a redis-server process, and the container and its address stay.
//
// Usage: stockbench-keeper SERVER [ARGS...]. SIGTERM and SIGINT go to the server, and the
// keeper exits with it; a server that dies otherwise is started again, with the same
// arguments (so with what its persistence kept), at the next SIGHUP (or at once, if one
// came while the keeper was still seeing it die).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: stockbench-keeper SERVER [ARGS...]")
		os.Exit(2)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	for {
		cmd := exec.Command(os.Args[1], os.Args[2:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "stockbench-keeper:", err)
			os.Exit(1)
		}
		stopping, asked := keep(cmd, sigs)
		if stopping {
			os.Exit(exitCode(cmd))
		}
		// Down until asked: the harness decides how long a restart's downtime lasts.
		for !asked {
			if s := <-sigs; s != syscall.SIGHUP {
				os.Exit(0) // SIGTERM or SIGINT with no server running
			}
			asked = true
		}
	}
}

// keep waits for the server to exit, passing on a stop signal. It reports whether the
// server was told to stop (so the keeper should too), and whether a SIGHUP came
// meanwhile: the harness asks only once it has seen the server gone, which can be before
// the keeper has, so such a SIGHUP asks for the next start.
func keep(cmd *exec.Cmd, sigs <-chan os.Signal) (stopping, asked bool) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	for {
		select {
		case <-done:
			return stopping, asked
		case s := <-sigs:
			if s == syscall.SIGHUP {
				asked = true
				continue
			}
			stopping = true
			cmd.Process.Signal(s)
		}
	}
}

func exitCode(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return 1
	}
	return max(cmd.ProcessState.ExitCode(), 0)
}
