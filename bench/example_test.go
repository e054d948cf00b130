package bench_test

import (
	"context"
	"fmt"
	"os"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// A program of your own runs sales as the stockbench command does: the token lock under
// a paused holder, on a Redis the harness starts and stops, recorded under results/runs
// with its report. The exit code is the command's.
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
	code := bench.Execute(context.Background(), bench.Options{Out: "results/runs"}, jobs, os.Stdout, os.Stderr)
	fmt.Println("exit code", code)
}
