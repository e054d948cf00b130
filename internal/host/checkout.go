package host

import (
	"errors"
	"os"
	"path/filepath"
)

// Checkout is the root of the stockbench checkout the command runs in: the nearest
// directory up from the working one that holds the shipped adapters. perf, repro and
// the Go lock builds run programs that live there.
func Checkout() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "adapters", "PROTOCOL.md")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("the shipped adapters are not here or above: run in stockbench's checkout")
		}
		dir = up
	}
}
