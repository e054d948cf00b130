package designfile

import (
	"testing"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// lockDocumented is what the built-in lock design named name documents: a design file of
// the same algorithm is held to it.
func lockDocumented(t *testing.T, name string) faults.Verdicts {
	t.Helper()
	impl, err := lockimpl.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return impl.Documented
}

// queueDocumented is what the built-in queue design named name documents with fulfil f.
func queueDocumented(t *testing.T, name string, f scenarios.Fulfil) faults.Verdicts {
	t.Helper()
	impl, err := queueimpl.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return impl.Documented.For(f == scenarios.Idempotent)
}
