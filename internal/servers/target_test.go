package servers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
)

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

// TestMain silences go-redis's dial-failure log: several tests refuse connections on purpose.
func TestMain(m *testing.M) {
	redis.SetLogger(silent{})
	os.Exit(m.Run())
}

// image is the Redis image for container tests: the one make test resolved.
func image() string {
	if img := os.Getenv("STOCKBENCH_REDIS_IMAGE"); img != "" {
		return img
	}
	return DefaultImage
}

// needDocker skips the test, with the reason, when no Docker engine answers.
func needDocker(t *testing.T) {
	t.Helper()
	quiet()
	if err := dockerAnswers(context.Background()); err != nil {
		t.Skipf("no Docker engine answers: %v", err)
	}
}

func ping(t *testing.T, tg *Target) {
	t.Helper()
	c := tg.Client(1)
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("ping %s: %v", tg.Info.Addr, err)
	}
}

func TestProcess(t *testing.T) {
	tg, err := Process{}.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ping(t, tg)
	if tg.Info.Kind != KindProcess || !tg.Info.Owned || tg.Info.PID == 0 || !strings.HasPrefix(tg.Info.Addr, "127.0.0.1:") {
		t.Errorf("info: %+v", tg.Info)
	}
	if err := tg.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if processAlive(tg.Info.PID) {
		t.Errorf("redis-server pid %d still runs after Close", tg.Info.PID)
	}
	if err := tg.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestProcessMissingBinary(t *testing.T) {
	_, err := Process{Binary: "no-such-redis-server"}.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no-such-redis-server not found") {
		t.Errorf("want a not-found error, got %v", err)
	}
}

func TestContainer(t *testing.T) {
	needDocker(t)
	ctx := context.Background()
	tg, err := Container{Image: image()}.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ping(t, tg)
	if tg.Info.Kind != KindContainer || tg.Info.ContainerID == "" || tg.Info.Version == "" {
		t.Errorf("info: %+v", tg.Info)
	}
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if containerExists(t, tg.Info.ContainerID) {
		t.Errorf("container %s still exists after Close", tg.Info.ContainerID)
	}
}

func containerExists(t *testing.T, id string) bool {
	t.Helper()
	cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	return err == nil
}

// TestReapOrphans: a container whose harness died is removed by the next start, even
// when its pid now names another process; a live harness's container is kept.
func TestReapOrphans(t *testing.T) {
	needDocker(t)
	ctx := context.Background()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	tests := []struct {
		name      string
		pid       int
		start     string
		wantReap  bool
		linuxOnly bool
	}{
		{"exited harness", dead.Process.Pid, "1", true, false},
		{"pid reused by another process", self, "1", true, true},
		{"live harness", self, processStart(self), false, false},
	}
	host, _ := os.Hostname()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.linuxOnly && processStart(self) == "" {
				t.Skip("process start times are read from /proc, which this system lacks")
			}
			ctr, err := testcontainers.Run(ctx, image(), testcontainers.WithLabels(map[string]string{
				labelOwner: "true", labelPID: strconv.Itoa(tt.pid), labelHost: host, labelStart: tt.start}))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ctr.Terminate(context.Background(), testcontainers.StopTimeout(0)) })
			reapOrphans(ctx)
			// Another harness (a test package running beside this one) may be reaping the
			// same orphan: its removal may still be under way when ours is refused.
			gone := !containerExists(t, ctr.GetContainerID())
			for i := 0; tt.wantReap && !gone && i < 50; i++ {
				time.Sleep(100 * time.Millisecond)
				gone = !containerExists(t, ctr.GetContainerID())
			}
			if gone != tt.wantReap {
				t.Errorf("reaped = %v, want %v", gone, tt.wantReap)
			}
		})
	}
}

func TestAutoFallsBackToProcess(t *testing.T) {
	tg, err := Auto{Container{Image: "stockbench/no-such-image:0"}, Process{}}.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	if tg.Info.Kind != KindProcess {
		t.Errorf("want the process target, got %s", tg.Info.Kind)
	}
	// The reason names what failed: the missing image, or the missing engine.
	if !strings.Contains(tg.Info.Why, "no-such-image") && !strings.Contains(tg.Info.Why, "no Docker engine") {
		t.Errorf("Why does not say why: %q", tg.Info.Why)
	}
}

func TestExternal(t *testing.T) {
	own, err := Process{}.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(context.Background())
	tg, err := External{URL: "redis://" + own.Info.Addr + "/2"}.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tg.Info.Owned || tg.Info.Kind != KindExternal {
		t.Errorf("info: %+v", tg.Info)
	}
	if err := tg.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ping(t, own) // closing an external target leaves the server alone
}

func TestExternalUnreachable(t *testing.T) {
	start := time.Now()
	_, err := External{URL: "redis://127.0.0.1:1"}.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("want a does-not-answer error, got %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s to give up", took)
	}
}

func TestExternalRedactsPassword(t *testing.T) {
	if got := RedactURL("redis://user:secret@host:6379/0"); strings.Contains(got, "secret") {
		t.Errorf("password leaked: %s", got)
	}
}

func TestConfigProvider(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // the provider's type, or "error"
	}{
		{"default is auto", Config{}, "servers.Auto"},
		{"url alone means external", Config{URL: "redis://x:1"}, "servers.External"},
		{"auto with url means external", Config{Mode: "auto", URL: "redis://x:1"}, "servers.External"},
		{"process", Config{Mode: "process"}, "servers.Process"},
		{"container", Config{Mode: "container"}, "servers.Container"},
		{"external needs a url", Config{Mode: "external"}, "error"},
		{"url with process is a contradiction", Config{Mode: "process", URL: "redis://x:1"}, "error"},
		{"unknown mode", Config{Mode: "cloud"}, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.cfg.Provider()
			got := "error"
			if err == nil {
				got = fmt.Sprintf("%T", p)
			}
			if got != tt.want {
				t.Errorf("want %s, got %s (%v)", tt.want, got, err)
			}
		})
	}
}
