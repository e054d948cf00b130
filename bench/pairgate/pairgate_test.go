package pairgate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/results/gate"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"--lock-file v1/mine.json", []string{"--lock-file", "v1/mine.json"}, ""},
		{`--lock-exec "mine=python3 v1/a.py" --locks mine`, []string{"--lock-exec", "mine=python3 v1/a.py", "--locks", "mine"}, ""},
		{`--lock-go 'r=github.com/go-redsync/redsync/v4@v4.12.0 --extend'`, []string{"--lock-go", "r=github.com/go-redsync/redsync/v4@v4.12.0 --extend"}, ""},
		{`--queues ''`, []string{"--queues", ""}, ""},
		{`a\ b "c\"d" 'e\f'`, []string{"a b", `c"d`, `e\f`}, ""},
		{`--lock-exec "mine=a.py`, nil, "left open"},
		{`trailing\`, nil, "left open"},
	} {
		got, err := Words(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Words(%q): error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("Words(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestSameRows: a pair is timed only when both sides ran the same rows; a design under
// another name on one side is bad input, named.
func TestSameRows(t *testing.T) {
	row := func(keys ...string) gate.Trial {
		tr := gate.Trial{}
		for _, k := range keys {
			tr[k] = gate.Speed{P50Us: 1, SalesPerSec: 1}
		}
		return tr
	}
	if err := sameRows(gate.Pair{Base: row("flash-sale/mine/none"), Change: row("flash-sale/mine/none")}); err != nil {
		t.Errorf("same rows: %v", err)
	}
	err := sameRows(gate.Pair{Base: row("flash-sale/mine/none", "flash-sale/lua/none"), Change: row("flash-sale/mine2/none", "flash-sale/lua/none")})
	if !errors.Is(err, bench.ErrUsage) {
		t.Fatalf("a design renamed: %v, want a usage error", err)
	}
	for _, want := range []string{"(flash-sale/mine/none)", "(flash-sale/mine2/none)", "keeps one name"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestSetWith(t *testing.T) {
	var c Config
	if err := c.SetWith("--lock-file v1/a.json", `--lock-exec "a=python3 a.py"`); err != nil || !slices.Equal(c.BaseWith, []string{"--lock-file", "v1/a.json"}) || len(c.With) != 2 {
		t.Errorf("SetWith: %v, %q, %q", err, c.BaseWith, c.With)
	}
	if err := c.SetWith("'open", "x"); !errors.Is(err, bench.ErrUsage) || !strings.Contains(err.Error(), "--base-with") {
		t.Errorf("an open quote: %v, want a usage error naming --base-with", err)
	}
}

// TestNewerChange: a change not committed, written after the binary, is one the binary
// does not hold; one written before it, a change to the documentation, and a clean tree
// are not.
func TestNewerChange(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	write := func(name, text string, at time.Time) {
		t.Helper()
		path := filepath.Join(repo, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, at, at)
	}
	now := time.Now()
	git("init", "-q")
	write("lockimpl/token.go", "package lockimpl\n", now.Add(-time.Hour))
	write("README.md", "# r\n", now.Add(-time.Hour))
	git("add", ".")
	git("commit", "-q", "-m", "one")
	bin := filepath.Join(repo, "bin", "stockbench")
	write("bin/stockbench", "a binary", now)
	ctx := context.Background()
	if f := newerChange(ctx, repo, bin); f != "" {
		t.Errorf("a clean tree: %q, want none", f)
	}
	write("lockimpl/token.go", "package lockimpl // before the build\n", now.Add(-time.Minute))
	if f := newerChange(ctx, repo, bin); f != "" {
		t.Errorf("a change built into the binary: %q, want none", f)
	}
	write("README.md", "# r, edited since\n", now.Add(time.Minute))
	if f := newerChange(ctx, repo, bin); f != "" {
		t.Errorf("documentation edited since: %q, want none", f)
	}
	write("lockimpl/token.go", "package lockimpl // after the build\n", now.Add(time.Minute))
	if f := newerChange(ctx, repo, bin); f != "lockimpl/token.go" {
		t.Errorf("a change since the build: %q, want lockimpl/token.go", f)
	}
}
