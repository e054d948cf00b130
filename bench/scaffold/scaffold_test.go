package scaffold_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench/runfile"
	"github.com/stockbench/stockbench/bench/scaffold"
)

// TestFiles: every route's files carry the design's name and none of the template's,
// its run files read as check reads them and name the design and its broken example,
// and a route with a protocol helper carries the shipped one.
func TestFiles(t *testing.T) {
	for _, route := range append([]scaffold.Route{scaffold.LockFile, scaffold.GoKit}, scaffold.Languages...) {
		t.Run(string(route), func(t *testing.T) {
			dir := t.TempDir()
			o := scaffold.Options{Route: route, Name: "shop-lock", Dir: dir}
			written, err := scaffold.Write(o)
			if err != nil {
				t.Fatal(err)
			}
			runFiles := 0
			for _, p := range written {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(p, "mylock") || strings.Contains(string(b), "mylock") {
					t.Errorf("%s: the template's name is left in it", p)
				}
				if strings.HasSuffix(p, ".json") && strings.Contains(filepath.Base(p), "stockbench") {
					runFiles++
					rf, err := runfile.Read(p)
					if err != nil {
						t.Fatalf("%s: %v", p, err)
					}
					want := "shop-lock"
					if strings.Contains(p, "broken") {
						want = "shop-lock-broken"
					}
					if rf.Locks == nil || len(*rf.Locks) != 1 || (*rf.Locks)[0] != want || len(rf.Thresholds["*"]) == 0 {
						t.Errorf("%s: want the design %s and thresholds on every run, got %+v", p, want, rf)
					}
				}
			}
			if want := map[bool]int{true: 0, false: 2}[route == scaffold.GoKit]; runFiles != want {
				t.Errorf("want %d run files, got %d in %v", want, runFiles, written)
			}
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
				t.Error("no README.md")
			}
			// Nothing is overwritten: a second init refuses, naming a file.
			if _, err := scaffold.Write(o); err == nil || !strings.Contains(err.Error(), "exists; nothing was written") {
				t.Errorf("a second init: %v", err)
			}
		})
	}
}

// TestGoPackageName: a Go package takes the name without its dashes.
func TestGoPackageName(t *testing.T) {
	files, err := scaffold.Files(scaffold.Options{Route: scaffold.GoKit, Name: "shop-lock"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".go") && !strings.Contains(string(f.Body), "package shoplock\n") {
			t.Errorf("%s: want package shoplock:\n%s", f.Path, f.Body)
		}
	}
}

func TestRefusals(t *testing.T) {
	for _, o := range []scaffold.Options{
		{Route: "cobol"},
		{Route: scaffold.Python, Name: "Shop"},
		{Route: scaffold.Python, Name: "shop-"},
		{Route: scaffold.Python, Name: strings.Repeat("a", 41)},
	} {
		if err := scaffold.Check(o); err == nil {
			t.Errorf("%+v: want a refusal", o)
		}
	}
	// A design file's JSON is valid JSON.
	files, _ := scaffold.Files(scaffold.Options{Route: scaffold.LockFile})
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".json") && !json.Valid(f.Body) {
			t.Errorf("%s: not JSON", f.Path)
		}
	}
}
