package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// needPHP skips, saying why, without PHP and phpredis; CI requires them.
func needPHP(t *testing.T) {
	t.Helper()
	if err := exec.Command("php", "-r", "exit(class_exists('Redis') ? 0 : 1);").Run(); err != nil {
		if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" {
			t.Fatalf("PHP with phpredis is missing: %v", err)
		}
		t.Skipf("PHP with phpredis is missing (%v); scripts/ensure-adapters.sh installs it", err)
	}
}

// running lists the processes whose command line holds marker.
func running(marker string) []string {
	out, _ := exec.Command("pgrep", "-af", marker).Output()
	var procs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.Contains(l, "pgrep") {
			procs = append(procs, l)
		}
	}
	return procs
}
