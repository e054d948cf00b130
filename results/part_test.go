package results

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/oracle"
)

// TestPartRoundTrip writes a shard's part and reads it back whole; a ledger cut short or
// a directory of no shard is refused, naming it.
func TestPartRoundTrip(t *testing.T) {
	base := t.TempDir()
	o := NewOutput(base, "shard-1-of-2")
	want := Part{
		ID:      "run-1",
		Run:     Run{Scenario: "flash-sale", Impl: "token", Complete: true, Shard: &ShardInfo{Index: 1, Count: 2}, Latency: map[string]Latency{}},
		Entries: []oracle.Entry{{Outcome: oracle.Bought, Held: true, Tries: 3, Enter: 5, Leave: 9, Start: 1, Done: 10, Left: 4}, {Outcome: oracle.GaveUp}},
		Final:   &oracle.Final{Stock: 4, Orders: 1, OrderIDs: []string{"1"}, Witness: &oracle.Witness{Max: 1}},
	}
	if err := o.Progress(&File{SchemaVersion: SchemaVersion, ID: want.ID, Runs: []Run{want.Run}}); err != nil {
		t.Fatal(err)
	}
	if err := WritePart(o, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPart(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != want.ID || !reflect.DeepEqual(got.Entries, want.Entries) || !reflect.DeepEqual(got.Final, want.Final) || got.Run.Shard.Index != 1 {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}

	ledger := filepath.Join(o.Dir, "ledger.bin")
	b, _ := os.ReadFile(ledger)
	os.WriteFile(ledger, b[:len(b)-7], 0o644)
	if _, err := ReadPart(o.Dir); err == nil || !strings.Contains(err.Error(), "ledger") {
		t.Errorf("a ledger cut short: got %v", err)
	}
	if _, err := ReadPart(base); err == nil || !strings.Contains(err.Error(), "holds no shard's record") {
		t.Errorf("a directory of no shard: got %v", err)
	}
}
