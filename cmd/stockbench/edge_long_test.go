//go:build long

package main

import (
	"slices"
	"testing"
)

// TestEveryTinySale runs the tiny sales TestTinySales leaves out: every design at every
// size of tinySizes.
func TestEveryTinySale(t *testing.T) {
	t.Parallel() // whole commands of their own: see TestMain
	var rest []tinySize
	for _, s := range tinySizes() {
		if !slices.Contains(quickTiny, s) {
			rest = append(rest, s)
		}
	}
	tinySales(t, rest)
}
