package exploreproc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// fakeStockbench is a stockbench that writes explore.json under --out (the last
// argument) and exits with code, saying line.
func fakeStockbench(t *testing.T, code, line, js string) string {
	bin := filepath.Join(t.TempDir(), "stockbench")
	script := `#!/bin/sh
out=; for a; do out=$a; done
mkdir -p "$out/run1" && printf '%s' '` + js + `' > "$out/run1/explore.json"
echo "` + line + `" >&2
exit ` + code + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

const report = `{"draws": 12, "faults": ["redis-pause", "slow-work"], "struck": {"redis-pause": 3, "slow-work": 1},
 "findings": [{"smallest": {"design": "token"}, "comparisons": [{"kind": "LOCK-BROKEN", "significant": true}]}, {"smallest": {}}]}`

func TestExplore(t *testing.T) {
	for _, tt := range []struct {
		code, line string
		usage, ok  bool
		apart      bool
	}{
		{code: "1", line: "exit 1: set-nx-ex is worse", ok: true, apart: true}, // a difference: a finding, not a failure
		{code: "0", line: "exit 0", ok: true, apart: true},
		{code: "2", line: "stockbench: exit 2: explore: unknown lock", usage: true},
		{code: "3", line: "stockbench: exit 3: redis died"},
	} {
		r, err := Explore(context.Background(), "test", fakeStockbench(t, tt.code, tt.line, report), []string{"--lock", "a"}, t.TempDir())
		switch {
		case tt.ok && err != nil:
			t.Errorf("exit %s: %v", tt.code, err)
		case !tt.ok && (err == nil || errors.Is(err, bench.ErrUsage) != tt.usage || !strings.Contains(err.Error(), tt.line)):
			t.Errorf("exit %s: error %v, want one naming %q (usage %v)", tt.code, err, tt.line, tt.usage)
		case tt.ok && (r.Report.Draws != 12 || r.Measured() != 1 || r.Struck() != 1 || r.ToldApart() != tt.apart):
			t.Errorf("exit %s: draws %d, measured %d, struck %d, apart %v", tt.code, r.Report.Draws, r.Measured(), r.Struck(), r.ToldApart())
		}
	}
	if _, err := Explore(context.Background(), "test", fakeStockbench(t, "0", "", "not json"), nil, t.TempDir()); err == nil {
		t.Error("a malformed explore.json read without an error")
	}
}
