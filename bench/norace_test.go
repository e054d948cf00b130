//go:build !race

package bench_test

// raced: see race_test.go.
const raced = false
