package bench_test

import (
	"context"
	"os"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// A program of your own runs sales as the stockbench command does: the token lock under
// a paused holder, on a Redis the harness starts and stops, recorded under results/runs
// with its report. How it ends is the command's: its exit code and why, told on the
// last line.
func ExampleExecute() {
	impl, err := lockimpl.Lookup("token")
	if err != nil {
		panic(err)
	}
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		panic(err)
	}
	sale.Faults = faults.Plan{{Kind: faults.ClientPause}}
	jobs := []bench.Job{bench.LockJob{Sale: sale, Impl: impl}}
	end := bench.Execute(context.Background(), bench.Options{Out: "results/runs"}, jobs, os.Stdout, os.Stderr)
	os.Exit(end.Tell(os.Stdout))
}
