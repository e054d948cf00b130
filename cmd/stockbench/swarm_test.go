package main

import (
	"os/exec"
	"strings"
	"testing"
)

func swarmState(t *testing.T) string {
	t.Helper()
	b, err := exec.Command("docker", "info", "--format", "{{.Swarm.LocalNodeState}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
