package runfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench/catalog"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stockbench.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// setter records the flags a run file sets, in order.
type setter []string

func (s *setter) Set(name, value string) error { *s = append(*s, name+"="+value); return nil }

// TestRead: a run file is read strictly, its settings set as the flags they name, in a
// stable order, and its designs and defaults make the plan.
func TestRead(t *testing.T) {
	rf, err := Read(write(t, `{"locks": ["token"], "faults": ["none"], "settings": {"ttl": "2s", "buyers": 50},
		"runs": 3, "thresholds": {"*": ["oversold == 0"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got setter
	if err := rf.Apply(&got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "runs=3 buyers=50 ttl=2s" {
		t.Errorf("settings applied as %q", got)
	}
	var cat catalog.Catalog
	p, err := rf.Plan("stockbench.json", &cat)
	if err != nil || len(p.Locks) != 1 || len(p.Queues) != 0 || len(p.Scenarios) == 0 || p.Faults[0] != "none" {
		t.Errorf("plan %+v, %v", p, err)
	}
	if _, _, err := rf.Checks("stockbench.json", p.Locks); err != nil {
		t.Error(err)
	}
}

func TestReadRefuses(t *testing.T) {
	for body, want := range map[string]string{
		`{"lock": ["token"]}`:                         `unknown field "lock"`,
		`{"settings": {"redis-url": "redis://x"}}`:    "unknown setting",
		`{"thresholds": {"tokn": ["oversold == 0"]}}`: "no design of this run",
		`{"thresholds": {"*": ["oversold =< 0"]}}`:    "oversold =< 0",
		`{"locks": ["token"]}`:                        "nothing to check",
	} {
		rf, err := Read(write(t, body))
		if err == nil {
			err = rf.Apply(new(setter))
		}
		if err == nil {
			_, _, err = rf.Checks("f", []string{"token"})
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an error saying %q, got %v", body, want, err)
		}
	}
}
