package catalog

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

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

// TestParseGoSpec: --lock-go's spec, a version or a working tree; what is wrong with it
// said before anything is built.
func TestParseGoSpec(t *testing.T) {
	tree := t.TempDir()
	os.WriteFile(filepath.Join(tree, "go.mod"), []byte("module github.com/go-redsync/redsync/v4\n\ngo 1.22\n"), 0o644)
	for _, c := range []struct {
		spec string
		want GoSpec
		err  string
	}{
		{"github.com/go-redsync/redsync/v4@v4.12.1 --extend", GoSpec{Module: "github.com/go-redsync/redsync/v4", Version: "v4.12.1", Args: []string{"--extend"}}, ""},
		{"github.com/bsm/redislock@6e2fb4a", GoSpec{Module: "github.com/bsm/redislock", Version: "6e2fb4a", Args: []string{}}, ""},
		{"github.com/go-redsync/redsync/v4=" + tree + " --extend", GoSpec{Module: "github.com/go-redsync/redsync/v4", Dir: tree, Args: []string{"--extend"}}, ""},
		{"", GoSpec{}, "want MODULE@VERSION or MODULE=DIR"},
		{"github.com/go-redsync/redsync/v4", GoSpec{}, "want MODULE@VERSION"},
		{"github.com/go-redsync/redsync/v4@", GoSpec{}, "want MODULE@VERSION"},
		{"github.com/bsm/redislock=" + tree, GoSpec{}, "is module github.com/go-redsync/redsync/v4, not github.com/bsm/redislock"},
		{"github.com/bsm/redislock=" + t.TempDir(), GoSpec{}, "is not a Go module: no go.mod there"},
	} {
		got, err := ParseGoSpec(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: want an error with %q, got %v", c.spec, c.err, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %+v, %v; want %+v", c.spec, got, err, c.want)
		}
	}
}

// TestAdapterOf: each Go library --lock-go and --queue-go know has its adapter among the shipped ones,
// found by what it imports; another module is named with the adapters there are.
func TestAdapterOf(t *testing.T) {
	src, err := unpack(shipped)
	if err != nil {
		t.Fatal(err)
	}
	for module, prog := range map[string]string{
		"github.com/go-redsync/redsync/v4": "redsync-lock",
		"github.com/bsm/redislock":         "redislock-lock",
		"github.com/redis/rueidis":         "rueidislock-lock",
		"github.com/hibiken/asynq":         "asynq-queue",
	} {
		if got, err := adapterOf(src, module); got != prog || err != nil {
			t.Errorf("%s: got %q, %v; want %s", module, got, err, prog)
		}
	}
	if _, err := adapterOf(src, "example.com/nolock"); err == nil || !strings.Contains(err.Error(), "asynq-queue, redislock-lock, redsync-lock, rueidislock-lock") {
		t.Errorf("an unknown module: want the adapters named, got %v", err)
	}
	if tags := buildTags(src, "redsync-lock"); !slices.Equal(tags, []string{"setnx"}) {
		t.Errorf("redsync-lock's features: got %q, want setnx", tags)
	}
}

// TestReleaseNamesOneCommit: a tagged release (or a pseudo-version) builds once; a branch
// or a short commit is resolved each time, since a branch moves.
func TestReleaseNamesOneCommit(t *testing.T) {
	for v, want := range map[string]bool{
		"v4.12.1": true, "v0.9.4": true, "v2.0.0+incompatible": true, "v1.0.0-rc.1": true,
		"v0.0.0-20240102150405-abcdef123456": true,
		"main":                               false, "6e2fb4a": false, "v4": false, "v4.12": false, "feature/x": false,
	} {
		if release.MatchString(v) != want {
			t.Errorf("%s: want %v", v, want)
		}
	}
}
