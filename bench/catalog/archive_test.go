package catalog

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite goadapters.txtar from the checkout's adapters/go (make docs)")

// TestShippedAdapters: the archive built into the binary is the checkout's adapters/go,
// so that a go install'ed stockbench builds what a checkout does; make docs rewrites it.
func TestShippedAdapters(t *testing.T) {
	files, err := readTree(filepath.Join("..", "..", goAdapters))
	if err != nil {
		t.Fatal(err)
	}
	want := pack(files)
	if *update {
		if err := os.WriteFile("goadapters.txtar", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(shipped, want) {
		t.Errorf("bench/catalog/goadapters.txtar differs from adapters/go: run make docs")
	}
	got, err := unpack(shipped)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s does not come back out of the archive as it went in", name)
		}
	}
	if len(got) != len(files) {
		t.Errorf("%d files out of the archive, %d in", len(got), len(files))
	}
}
