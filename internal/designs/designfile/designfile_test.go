package designfile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/internal/servers/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// write writes files into a temporary directory and returns the path of the first.
func write(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i < len(files); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, files[0])
}

const acquire = `"acquire": {"lua": "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])", "keys": ["lock"], "args": ["token", "ttl_ms"]}`
const release = `"release": {"lua": "return redis.call('DEL', KEYS[1])", "keys": ["lock"]}`

// Bad design files: one error each, naming the file and where in it.
func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"syntax", "{\n  \"name\": \"x\",\n  \"lock\": {,}\n}", "line 3, column 12: invalid character ','"},
		{"type", `{"name": 3}`, "name: want string, got a JSON number"},
		{"unknown field", `{"name": "x", "locks": {}}`, `unknown field "locks"`},
		{"trailing", `{"name": "x", "lock": {` + acquire + `,` + release + `}} {}`, "more than one JSON value"},
		{"no name", `{"lock": {` + acquire + `,` + release + `}}`, "name: missing"},
		{"comma", `{"name": "a,b", "lock": {` + acquire + `,` + release + `}}`, `name: "a,b" has a comma`},
		{"neither", `{"name": "x"}`, `exactly one of "lock"`},
		{"both", `{"name": "x", "lock": {}, "queue": {}}`, `exactly one of "lock"`},
		{"no release", `{"name": "x", "lock": {` + acquire + `}}`, "lock.release: missing (a lock needs acquire, release)"},
		{"unknown script", `{"name": "x", "lock": {` + acquire + `,` + release + `, "unlock": {"lua": "return 1"}}}`, "lock.unlock: no such script (a lock has: acquire, release, renew, held)"},
		{"unknown arg", `{"name": "x", "lock": {` + acquire + `, "release": {"lua": "return 1", "args": ["ttl"]}}}`, `lock.release.args[0]: "ttl" is not one of "token", "now_ms"`},
		{"queue key in a lock", `{"name": "x", "lock": {` + acquire + `, "release": {"lua": "return 1", "keys": ["queue"]}}}`, `lock.release.keys[0]: "queue" is not one of "lock", "counter"`},
		{"no source", `{"name": "x", "lock": {` + acquire + `, "release": {"keys": ["lock"]}}}`, `lock.release: give the script either inline ("lua") or as a file ("file")`},
		{"missing file", `{"name": "x", "lock": {` + acquire + `, "release": {"file": "nope.lua"}}}`, "lock.release.file: open "},
		{"queue fields on a lock", `{"name": "x", "ordered": true, "lock": {` + acquire + `,` + release + `}}`, "a queue's, not a lock's"},
		{"documented: unknown class", `{"name": "x", "documented": {"none": ["FINE"]}, "lock": {` + acquire + `,` + release + `}}`, `documented.none: unknown class "FINE" (classes: `},
		{"documented: unknown fault", `{"name": "x", "documented": {"pause": ["SAFE"]}, "lock": {` + acquire + `,` + release + `}}`, `documented.pause: not a fault of locks sales (faults: none, slow-work`},
		{"documented: a queue fault on a lock", `{"name": "x", "documented": {"worker-crash": ["LOST"]}, "lock": {` + acquire + `,` + release + `}}`, `documented.worker-crash: not a fault of locks sales`},
		{"documented: no class", `{"name": "x", "documented": {"none": []}, "lock": {` + acquire + `,` + release + `}}`, `documented.none: no class`},
		{"documented: a lock's shape on a queue", `{"name": "q", "documented": {"none": ["SAFE"]}, "queue": {"enqueue": {"lua": "return 1"}, "dequeue": {"lua": "return 1"}, "len": {"lua": "return 1"}}}`, `documented: json: unknown field "none" (write {"naive"`},
		{"lease keys on a lock", `{"name": "x", "lease_keys": ["lock"], "lock": {` + acquire + `,` + release + `}}`, "lease_keys: a queue's, not a lock's"},
		{"unknown lease key", `{"name": "q", "lease_keys": ["leases"], "queue": {"enqueue": {"lua": "return 1"}, "dequeue": {"lua": "return 1"}, "len": {"lua": "return 1"}}}`, `lease_keys[0]: "leases" is not one of "queue", "processing", "taken", "lock"`},
		{"queue without len", `{"name": "q", "queue": {"enqueue": {"lua": "return 1"}, "dequeue": {"lua": "return 1"}}}`, "queue.len: missing (a queue needs enqueue, dequeue, len)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, "design.json", tc.json)
			_, err := Read(path)
			if err == nil {
				t.Fatalf("want an error")
			}
			if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want %q after the path, got %v", tc.want, err)
			}
		})
	}
}

// A script Redis will not compile is one error naming the file and the script, with
// Redis's own words and line.
func TestCheckNamesTheScript(t *testing.T) {
	path := write(t, "design.json", `{"name": "x", "lock": {`+acquire+`, "release": {"file": "release.lua", "keys": ["lock"]}}}`,
		"release.lua", "-- a release\nif redis.call('GET', KEYS[1] then\n  return 1\nend\n")
	d, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	c := redistest.Shared(t).Client(1)
	defer c.Close()
	err = d.Check(context.Background(), c)
	if err == nil {
		t.Fatal("want the release script refused")
	}
	want := path + ": release script (" + filepath.Join(filepath.Dir(path), "release.lua") + "): ERR "
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), ":2:") || strings.Contains(err.Error(), "\n") {
		t.Errorf("want one line starting %q naming line 2, got %q", want, err)
	}
}
