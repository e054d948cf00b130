package main

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/servers"
)

// TestPasswordNeverShown feeds a password through every path a --redis-url takes, bad
// and good, and looks for it in everything the command printed and wrote.
func TestPasswordNeverShown(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	const pw, wrong = "Hunter2-s3cret", "Wr0ng-s3cret"
	const encoded, decoded = "p%40ss-w0rd9", "p@ss-w0rd9" // a password with an @, percent-encoded
	srv := passwordServer(t, pw)
	addr := srv.Addr()
	tests := []struct {
		name   string
		args   []string
		env    string // STOCKBENCH_REDIS_URL
		exit   int
		secret []string
	}{
		{"port not a number", []string{"--redis-url", "redis://:" + pw + "@host:notaport"}, "", bench.ExitUsage, nil},
		{"option not a duration", []string{"--redis-url", "redis://:" + pw + "@127.0.0.1:1?dial_timeout=" + pw}, "", bench.ExitUsage, nil},
		{"database not a number", []string{"--redis-url", "redis://:" + pw + "@127.0.0.1:1/" + pw}, "", bench.ExitUsage, nil},
		{"scheme unknown", []string{"--redis-url", "http://:" + pw + "@127.0.0.1:1"}, "", bench.ExitUsage, nil},
		{"unreachable", []string{"--redis-url", "redis://user:" + pw + "@127.0.0.1:1"}, "", bench.ExitUsage, nil},
		{"cluster seed malformed", []string{"--redis-cluster", "--redis-url", "redis://:" + pw + "@127.0.0.1:1?addr=" + pw}, "", bench.ExitUsage, nil},
		{"from the environment", nil, "redis://:" + pw + "@127.0.0.1:1", bench.ExitUsage, nil},
		{"given without its flag", []string{"redis://:" + pw + "@127.0.0.1:1"}, "", bench.ExitUsage, nil},
		{"a flag error beside it", []string{"--redis-url", "redis://:" + pw + "@127.0.0.1:1", "--stonks"}, "", bench.ExitUsage, nil},
		{"wrong password", []string{"--redis-url", "redis://:" + wrong + "@" + addr}, "", bench.ExitUsage, []string{wrong}},
		{"percent-encoded", []string{"--redis-url", "redis://:" + encoded + "@127.0.0.1:1"}, "", bench.ExitUsage, []string{encoded, decoded}},
		{"a whole run", []string{"--redis-url=redis://default:" + pw + "@" + addr, "--buyers", "20", "--stock", "5"}, "", bench.ExitOK, nil},
	}
	// A group, so that its runs, side by side, are over before the server goes.
	t.Run("paths", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				out := filepath.Join(t.TempDir(), "runs")
				cmd := exec.Command(binary, append([]string{"run", "--lock", "lua", "--out", out}, tt.args...)...)
				cmd.Env = append(os.Environ(), "STOCKBENCH_REDIS_URL="+tt.env)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				cmd.Run()
				if exp, got := tt.exit, cmd.ProcessState.ExitCode(); exp != got {
					t.Errorf("exit code: want %d, got %d\n%s", exp, got, stderr.String())
				}
				noSecret(t, append(tt.secret, pw), stdout.String()+stderr.String(), out)
			})
		}
	})
	// Redis dies under a run: its errors reach the terminal and results.json.
	t.Run("server gone", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "runs")
		cmd := exec.Command(binary, "run", "--lock", "lua", "--buyers", "100000", "--rate", "500", "--out", out,
			"--redis-url", "redis://:"+pw+"@"+addr)
		var stdout, stderr strings.Builder
		cmd.Stdout = &stdout
		pipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Killed once the sale is under way (its [1/1] line) and a few sales in, not at a
		// set time from the start, which a loaded machine may not have reached.
		lines := bufio.NewScanner(pipe)
		for lines.Scan() {
			stderr.WriteString(lines.Text() + "\n")
			if strings.Contains(lines.Text(), "[1/1]") {
				time.Sleep(500 * time.Millisecond)
				syscall.Kill(srv.Info.PID, syscall.SIGKILL)
			}
		}
		cmd.Wait()
		if exp, got := bench.ExitUnfinished, cmd.ProcessState.ExitCode(); exp != got {
			t.Errorf("exit code: want %d, got %d\n%s", exp, got, stderr.String())
		}
		if !strings.Contains(stderr.String(), "stopped answering") {
			t.Errorf("want the reason on stderr:\n%s", stderr.String())
		}
		noSecret(t, []string{pw}, stdout.String()+stderr.String(), out)
	})
}

// passwordServer is a redis-server process that asks for pw.
func passwordServer(t *testing.T, pw string) *servers.Target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := servers.Process{}.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	if err := c.ConfigSet(ctx, "requirepass", pw).Err(); err != nil {
		t.Fatal(err)
	}
	return srv
}

// noSecret fails if any of secrets is in printed or in a file under dir.
func noSecret(t *testing.T, secrets []string, printed, dir string) {
	t.Helper()
	look := func(where, text string) {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("the password %q is in %s", s, where)
			}
		}
	}
	look("the output", printed)
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			look(path, string(b))
		}
		return nil
	})
}
