package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/internal/designs/adapter"
)

func TestNamed(t *testing.T) {
	for _, tt := range []struct{ spec, name, rest string }{
		{"mylock=php seed.php", "mylock", "php seed.php"},
		{"php seed.php --opt=1", "", "php seed.php --opt=1"}, // an = after a space is an argument's
		{"github.com/a/b@v1.2.3", "", "github.com/a/b@v1.2.3"},
	} {
		if name, rest := Named(tt.spec, " /@"); name != tt.name || rest != tt.rest {
			t.Errorf("Named(%q) = %q, %q; want %q, %q", tt.spec, name, rest, tt.name, tt.rest)
		}
	}
}

// TestAddExec: an adapter is named after its script, or as given; a name taken by a
// built-in design or by another adapter is refused, saying so.
func TestAddExec(t *testing.T) {
	var c Catalog
	if err := c.AddExec(adapter.SupportsLock, "/usr/bin/python3 adapters/python/redis_py_lock.py"); err != nil {
		t.Fatal(err)
	}
	if got := c.LockNames(); got[len(got)-1] != "redis_py_lock" {
		t.Errorf("want the adapter named after its script, got %v", got)
	}
	for spec, want := range map[string]string{
		"token=php x.php":           "a built-in design's name",
		"redis_py_lock=node x.js":   "the name of the adapter",
		"":                          "needs a command",
		"other=node adapters/x.js ": "",
	} {
		err := c.AddExec(adapter.SupportsLock, spec)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("AddExec(%q): %v, want %q", spec, err, want)
		}
	}
	if _, err := c.Lock("nothing"); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("an unknown name: want the known ones listed, adapters too, got %v", err)
	}
	if s := c.Source("other"); s == nil || s.Exec != "node adapters/x.js " || s.Part != adapter.SupportsLock {
		t.Errorf("the adapter's source: %+v", s)
	}
}

func TestSplit(t *testing.T) {
	if got := Split(" a, ,b,"); strings.Join(got, "|") != "a|b" {
		t.Errorf("Split: %q", got)
	}
}

// TestMs: designs that keep milliseconds are told from those that keep whole seconds
// (EX, an adapter that has not said ms), for the explorer's shorter sales.
func TestMs(t *testing.T) {
	var c Catalog
	if err := c.AddExec(adapter.SupportsLock, "/usr/bin/python3 adapters/python/redis_py_lock.py"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		names []string
		want  bool
	}{
		{[]string{"token", "redlock", "lua"}, true},
		{[]string{"token", "set-nx-ex"}, false},
		{[]string{"seed-setnx"}, false},
		{[]string{"redis_py_lock"}, false}, // not probed: nothing said of its leases
		{[]string{"nosuch"}, false},
		{nil, false},
	} {
		if got := c.Ms(tt.names); got != tt.want {
			t.Errorf("Ms(%v) = %v, want %v", tt.names, got, tt.want)
		}
	}
	c.execs[0].cfg.Ms = true // as Check sets it from the hello
	if !c.Ms([]string{"redis_py_lock", "token"}) {
		t.Errorf("an adapter whose hello said ms: want milliseconds")
	}
}

// TestChangedSince: an adapter built before its source changed is built again.
func TestChangedSince(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "prog"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "prog", "main.go")
	if err := os.WriteFile(f, []byte("package main"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if changedSince(dir, now.Add(time.Minute)) {
		t.Errorf("a source older than the build: want it reused")
	}
	if !changedSince(dir, now.Add(-time.Minute)) {
		t.Errorf("a source newer than the build: want it built again")
	}
}
