package main

import (
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench/docs"
)

// lastLine is the last line of what a command printed.
func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// TestCommandsBound: every command the usage and the docs list runs, and every command
// that runs is listed.
func TestCommandsBound(t *testing.T) {
	for _, c := range docs.Commands {
		if commands[c.Name] == nil {
			t.Errorf("docs.Commands lists %q, which no code runs", c.Name)
		}
	}
	if len(commands) != len(docs.Commands) {
		t.Errorf("%d commands run, %d listed in docs.Commands", len(commands), len(docs.Commands))
	}
}
