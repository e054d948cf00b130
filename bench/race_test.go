//go:build race

package bench_test

// raced: the race detector is on (make test-race), which slows each sale by a factor
// that varies with the load beside it: speed is asserted in make test only.
const raced = true
