package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
)

// tinySize is a tiny sale: so many buyers for so much stock.
type tinySize struct{ buyers, stock int }

// tinySizes are every size of the tiny sales: 1, 2 or 5 buyers for 0 to 3 units.
func tinySizes() (all []tinySize) {
	for _, buyers := range []int{1, 2, 5} {
		for stock := range 4 {
			all = append(all, tinySize{buyers, stock})
		}
	}
	return all
}

// quickTiny are the sizes TestTinySales runs: no stock, one unit for one buyer, and more
// buyers than units; TestEveryTinySale runs the others.
var quickTiny = []tinySize{{1, 0}, {1, 1}, {5, 3}}

// TestTinySales: every lock and queue design, at the tiny sizes quickTiny names, ends
// with a verdict and a whole report, and leaves no server behind.
func TestTinySales(t *testing.T) {
	t.Parallel() // whole commands of their own: see TestMain
	tinySales(t, quickTiny)
}

// tinySales runs every lock and queue design at each size in one matrix, and asserts
// that each sale ends with a verdict and the run with a whole report, leaving no server
// behind. A lone buyer of a lock design has nobody to overlap with, whatever the design.
// (A queue's lone order still meets four workers: seed-zset may hand it to two.)
func tinySales(t *testing.T, sizes []tinySize) {
	designs := len(lockimpl.Names()) + 2*len(queueimpl.Names())
	for _, size := range sizes {
		buyers, stock := size.buyers, size.stock
		t.Run(fmt.Sprintf("buyers %d stock %d", buyers, stock), func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			cmd := exec.Command(binary, "matrix", "--faults", "none", "--queue-faults", "none",
				"--buyers", fmt.Sprint(buyers), "--stock", fmt.Sprint(stock), "--out", out)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v:\n%s", err, stderr.String())
			}
			f := readRun(t, out, "summary.md")
			if !f.Complete || len(f.Runs) != designs {
				t.Fatalf("want %d complete runs, got %d (complete %v: %s)", designs, len(f.Runs), f.Complete, f.Incomplete)
			}
			dir := filepath.Dir(firstResults(t, out))
			if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
				t.Errorf("no report: %v", err)
			}
			for _, r := range f.Runs {
				switch {
				case r.Verdict.String() == "" || r.Verdict.Class == "":
					t.Errorf("%s: no verdict", r.Impl)
				case int64(r.Oracle.Bought) > int64(stock) && r.Impl != "none" && r.Impl != "seed-setnx":
					t.Errorf("%s: sold %d of %d", r.Impl, r.Oracle.Bought, stock)
				case buyers == 1 && r.Kind == "lock" && r.Verdict.Class != oracle.ClassSafe:
					t.Errorf("%s with one buyer: %s", r.Impl, r.Verdict)
				}
			}
			nothingLeft(t, cmd.Process.Pid, f)
		})
	}
}

// firstResults is the path of the one results.json under out.
func firstResults(t *testing.T, out string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, "*", "results.json"))
	if len(m) != 1 {
		t.Fatalf("want one run under %s, got %v", out, m)
	}
	return m[0]
}
