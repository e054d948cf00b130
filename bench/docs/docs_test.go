package docs

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated parts of the checkout (make docs)")

// TestGenerated: every generated part of the README, docs/ and the command's doc comment
// is what its source renders; a hand edit, or a source changed without make docs,
// fails here.
func TestGenerated(t *testing.T) {
	root := filepath.Join("..", "..")
	stale, err := Sync(root, *update)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 && !*update {
		t.Errorf("generated docs differ from their sources: %s; edit the source (its marker names it) and run make docs", strings.Join(stale, ", "))
	}
}

// TestSyncFindsAHandEdit: an edit inside a generated block is found, and make docs puts
// the block back.
func TestSyncFindsAHandEdit(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"docs", "cmd/stockbench", "baseline"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"README.md", "docs/designs.md", "docs/faults.md", "docs/running.md", "cmd/stockbench/doc.go", "baseline/results.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Sync(root, true); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(root, "docs", "designs.md")
	b, _ := os.ReadFile(page)
	edited := strings.Replace(string(b), "| `token` | SET key token NX PX ttl", "| `token` | SET key token NX EX ttl", 1)
	if edited == string(b) {
		t.Fatal("the locks table has no token row to edit")
	}
	os.WriteFile(page, []byte(edited), 0o644)
	if stale, err := Sync(root, false); err != nil || len(stale) != 1 || stale[0] != "docs/designs.md#locks" {
		t.Fatalf("want the hand edit found in docs/designs.md#locks, got %q, %v", stale, err)
	}
	if _, err := Sync(root, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(page); strings.Contains(string(b), "SET key token NX EX ttl") {
		t.Error("make docs left the hand edit")
	}
}

// TestUsageListsEveryCommand: the usage names each command once, as its table does.
func TestUsageListsEveryCommand(t *testing.T) {
	u := Usage()
	for _, c := range Commands {
		if strings.Count(u, "stockbench "+c.Name+" ")+strings.Count(u, "stockbench "+c.Name+"\n") != 1 {
			t.Errorf("usage names %q other than once:\n%s", c.Name, u)
		}
	}
}
