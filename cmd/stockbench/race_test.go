//go:build race

package main

// raced: this test binary runs with the race detector, which compiled every dependency
// with it too; TestMain builds the command the same way, from that cache.
const raced = true
