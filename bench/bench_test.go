package bench

import (
	"strings"
	"testing"

	"github.com/stockbench/stockbench/results"
)

// TestNewFileMasksPasswords: the record's command line hides a --redis-url's password,
// and changes nothing else, nor the caller's arguments.
func TestNewFileMasksPasswords(t *testing.T) {
	args := []string{"--redis-url", "redis://u:hunter2@h:1", "--redis-url=redis://:hunter2@h:1", "--stock", "5"}
	got := NewFile(args, "id", results.Target{}).Args
	if !strings.Contains(args[1], "hunter2") {
		t.Errorf("the caller's arguments were changed: %q", args)
	}
	_ = ([]string{"--redis-url", "redis://u:hunter2@h:1", "--redis-url=redis://:hunter2@h:1", "--stock", "5"})
	for _, a := range got {
		if strings.Contains(a, "hunter2") {
			t.Errorf("password left in %q", a)
		}
	}
	if got[3] != "--stock" || got[4] != "5" {
		t.Errorf("other args changed: %q", got)
	}
}
