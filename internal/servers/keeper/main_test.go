package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs the keeper itself when the test binary is started as one.
func TestMain(m *testing.M) {
	if os.Getenv("KEEPER_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestRestartsWhenAsked: the harness's restart, many times over: the server is killed, and
// SIGHUP is sent as soon as the server is gone from the host's view, which can be before
// the keeper has seen it go (every other time, the SIGHUP comes first). Every time a new server must come back, and SIGTERM then
// ends the keeper with its server.
func TestRestartsWhenAsked(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the host's view of a process's children is Linux's /proc")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep on the PATH")
	}
	keeper := exec.Command(os.Args[0], sleep, "1000")
	keeper.Env = append(os.Environ(), "KEEPER_TEST_MAIN=1")
	if err := keeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keeper.Process.Kill(); keeper.Wait() })
	pid := keeper.Process.Pid
	server := await(t, "the first server", func() int { return child(pid) })
	for i := range 200 {
		if i%2 == 1 {
			// The keeper's side of the race, made certain: the ask is read before the
			// exit, as it is when a loaded machine runs the keeper late.
			syscall.Kill(pid, syscall.SIGHUP)
			time.Sleep(time.Millisecond)
		}
		syscall.Kill(server, syscall.SIGKILL)
		await(t, "the killed server reaped", func() int { return boolInt(gone(server)) })
		if i%2 == 0 {
			syscall.Kill(pid, syscall.SIGHUP)
		}
		next := await(t, fmt.Sprintf("restart %d", i+1), func() int {
			if c := child(pid); c != server {
				return c
			}
			return 0
		})
		server = next
	}
	keeper.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- keeper.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the keeper outlived SIGTERM")
	}
	if !gone(server) {
		t.Error("the server outlived its keeper's SIGTERM")
	}
}

func await(t *testing.T, what string, got func() int) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if v := got(); v > 0 {
			return v
		}
	}
	t.Fatalf("waited 5s for %s", what)
	return 0
}

func child(pid int) int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if f := strings.Fields(string(b)); len(f) > 0 {
			c, _ := strconv.Atoi(f[0])
			return c
		}
	}
	return 0
}

func gone(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return os.IsNotExist(err)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
