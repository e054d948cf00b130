package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// claimsFile is a claims file for the built-in token lock with one claim, fields
// replaced or added by over (raw JSON by field name).
func claimsFile(t *testing.T, over map[string]string) string {
	t.Helper()
	fields := map[string]string{
		"library":  `"token"`,
		"title":    `"token"`,
		"language": `"Go"`,
		"release":  `"built in"`,
		"from":     `"stockbench itself"`,
		"design":   `["--lock", "token"]`,
		"claims":   `[{"id": "exclusion", "quote": "one holder at a time", "source": "lockimpl", "faults": ["none"], "never": ["LOCK-BROKEN"]}]`,
	}
	for k, v := range over {
		fields[k] = v
	}
	var parts []string
	for k, v := range fields {
		parts = append(parts, `"`+k+`": `+v)
	}
	file := filepath.Join(t.TempDir(), "claims.json")
	if err := os.WriteFile(file, []byte("{"+strings.Join(parts, ", ")+"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestAnalyseBadInput: a claims file analyse cannot use gets one line naming what is
// wrong and exit 2, before any server starts, and writes nothing: no run directory, no
// page.
func TestAnalyseBadInput(t *testing.T) {
	claim := func(field string) string {
		return `[{"id": "c", "quote": "q", "source": "s", "faults": ["none"], "never": ["LOCK-BROKEN"], ` + field + `}]`
	}
	tests := []struct {
		name string
		args func(t *testing.T) []string
		want string
	}{
		{"no claims file", func(*testing.T) []string { return nil }, "name one claims file"},
		{"no such file", func(*testing.T) []string { return []string{"/nonexistent/claims.json"} }, "no such file"},
		{"malformed", func(t *testing.T) []string {
			f := filepath.Join(t.TempDir(), "c.json")
			os.WriteFile(f, []byte(`{"library": "x",`), 0o644)
			return []string{f}
		}, "c.json"},
		{"unknown field", func(t *testing.T) []string { return []string{claimsFile(t, map[string]string{"stars": "5"})} }, `unknown field "stars"`},
		{"unknown fault in a claim", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"claims": claim(`"admits": [], "id": "d", "faults": ["meteor"]`)})}
		}, `unknown fault "meteor"`},
		{"unknown class", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"claims": claim(`"admits": ["SLOW"]`)})}
		}, `unknown class "SLOW"`},
		{"a queue's fault on a lock", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"faults": `["worker-crash"]`})}
		}, "worker-crash is not a fault of lock sales"},
		{"unquoted claim", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"claims": `[{"id": "c", "quote": " ", "source": "s", "faults": ["*"], "never": ["LOST"]}]`})}
		}, "a claim is quoted"},
		{"a lookup of no claim", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"lookups": `[{"claim": "nosuch", "class": "LOST", "searched": "2026-11-29", "query": "lost"}]`})}
		}, `no claim "nosuch"`},
		{"a library with no design", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"design": `["--lock", "redlock-ish"]`})}
		}, `unknown lock "redlock-ish"`},
		{"a Go module no adapter imports", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"design": `["--lock-go", "example.com/nolock@v1.0.0"]`})}
		}, "no adapter in adapters/go imports example.com/nolock"},
		{"a directory that is no Go module", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"design": `["--lock-go", "github.com/bsm/redislock=` + t.TempDir() + `"]`})}
		}, "is not a Go module: no go.mod there"},
		{"a design flag unknown", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"design": `["--lock", "token", "--lock-rust", "x"]`})}
		}, "flag provided but not defined: -lock-rust"},
		{"bad setting", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"settings": `{"buyers": "0"}`})}
		}, "settings"},
		{"too few draws", func(t *testing.T) []string { return []string{claimsFile(t, nil), "--runs", "2"} }, "--runs must be from 5 to 1000"},
		{"a short budget", func(t *testing.T) []string { return []string{claimsFile(t, nil), "--budget", "1s"} }, "--budget: want 0 or a duration of at least 10s"},
		{"a quote not in the file it names", func(t *testing.T) []string {
			f := filepath.Join(t.TempDir(), "lock.go")
			os.WriteFile(f, []byte("// Obtain may return ErrNotObtained.\n"), 0o644)
			return []string{claimsFile(t, map[string]string{"claims": claim(`"file": "` + f + `"`)})}
		}, "claim c: its quote is not in"},
		{"a file that is no path", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"claims": claim(`"file": "lock.go"`)})}
		}, "want an absolute path or go:MODULE@VERSION/PATH"},
		{"a deployment whose fault takes no such setting", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"deployments": `[{"name": "as-documented", "quote": "q", "source": "s", "faults": ["client-pause:persist=aof-always"]}]`})}
		}, `deployments[0].faults: "client-pause:persist=aof-always"`},
		{"a deployment no doc prescribes", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"deployments": `[{"name": "fast", "quote": "", "source": "", "faults": ["redis-restart:persist=aof-always"]}]`})}
		}, "quote and source are required"},
		{"a deployment over three servers of a built-in design", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"deployments": `[{"name": "redlock-3", "quote": "q", "source": "s", "nodes": 3, "faults": ["none"]}]`})}
		}, "deployments: nodes: token is no lock adapter; only an adapter that takes several lock servers runs over 3"},
		{"a deployment over three servers of an adapter that takes one", func(t *testing.T) []string {
			needPHP(t)
			seed, _ := filepath.Abs("../../adapters/php/seed-lock.php")
			return []string{claimsFile(t, map[string]string{"design": `["--lock-exec", "php ` + seed + `"]`,
				"deployments": `[{"name": "redlock-3", "quote": "q", "source": "s", "nodes": 3, "faults": ["none"]}]`})}
		}, "adapter seed-lock does not support nodes: --adapter-nodes 3"},
		{"a Sentinel deployment of an adapter whose client does not follow one", func(t *testing.T) []string {
			needPHP(t)
			seed, _ := filepath.Abs("../../adapters/php/seed-lock.php")
			return []string{claimsFile(t, map[string]string{"design": `["--lock-exec", "php ` + seed + `"]`,
				"deployments": `[{"name": "sentinel", "quote": "q", "source": "s", "faults": ["sentinel-kill"]}]`})}
		}, "adapter seed-lock does not support sentinel: its client does not follow a Sentinel group itself"},
		{"a Sentinel deployment without a Docker engine", func(t *testing.T) []string {
			return []string{claimsFile(t, map[string]string{"deployments": `[{"name": "sentinel", "quote": "q", "source": "s", "faults": ["sentinel-kill"]}]`})}
		}, "deployment sentinel: a Sentinel group or a Redis Cluster is containers on a network of their own: it needs a Docker engine"},
		{"render of nothing", func(t *testing.T) []string { return []string{"--render", t.TempDir()} }, "no record in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, pages := filepath.Join(dir, "runs"), filepath.Join(dir, "pages")
			args := append([]string{"analyse"}, tt.args(t)...)
			if !strings.Contains(strings.Join(args, " "), "--render") {
				args = append(args, "--pages", pages)
			}
			code, _, stderr := stockbench(t, append(args, "--out", out, "--redis", "process")...)
			if code != bench.ExitUsage {
				t.Errorf("exit code: want %d, got %d", bench.ExitUsage, code)
			}
			// What an adapter's hello says comes once Redis answers: the lines that say
			// where it runs may come first.
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			for _, l := range lines[:len(lines)-1] {
				if !strings.HasPrefix(l, "stockbench: redis: ") && !strings.HasPrefix(l, "stockbench: buyers run on ") {
					last = ""
				}
			}
			if !strings.HasPrefix(last, "stockbench: ") || !strings.Contains(last, tt.want) {
				t.Errorf("want one line with %q, got:\n%s", tt.want, stderr)
			}
			for _, d := range []string{out, pages} {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("bad input must not create %s", d)
				}
			}
		})
	}
}

// TestAnalyseReproWithoutCommand: a reproduction directory beside the claims (DIR/repro,
// for DIR/claims/LIBRARY.json) without its manifest is one line and exit 2, before any
// server starts, and nothing is written.
func TestAnalyseReproWithoutCommand(t *testing.T) {
	dir := t.TempDir()
	claims := filepath.Join(dir, "claims", "token.json")
	os.MkdirAll(filepath.Dir(claims), 0o755)
	b, err := os.ReadFile(claimsFile(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(claims, b, 0o644)
	repro := filepath.Join(dir, "repro", "token-1")
	os.MkdirAll(repro, 0o755)
	os.WriteFile(filepath.Join(repro, "repro.php"), []byte("<?php exit(1);\n"), 0o644)
	out := filepath.Join(t.TempDir(), "runs")
	code, _, stderr := stockbench(t, "analyse", claims, "--out", out, "--redis", "process")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != bench.ExitUsage || len(lines) != 1 || !strings.Contains(lines[0], "token-1: no repro.json naming its command") {
		t.Errorf("want exit 2 and one line naming the reproduction, got %d:\n%s", code, stderr)
	}
	for _, d := range []string{out, filepath.Join(dir, "records"), filepath.Join(dir, "token.md")} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("bad input must not create %s", d)
		}
	}
}
