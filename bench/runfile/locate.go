package runfile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/stockbench/stockbench/results/ghactions"
	"github.com/stockbench/stockbench/results/junit"
)

// Locator says where a GitHub annotation of a check of the run file at path points:
// the file, named from the workflow's workspace ($GITHUB_WORKSPACE) when it is inside
// it, at the line of the first key of its thresholds that the case broke; at the file
// alone for a case that broke none (a class fail_on names).
func Locator(path string) ghactions.Locator {
	b, _ := os.ReadFile(path)
	lines := ThresholdLines(b)
	file := fromWorkspace(path)
	return func(c junit.Case) (string, int) {
		for _, sel := range c.Selectors {
			if l, ok := lines[sel]; ok {
				return file, l
			}
		}
		return file, 0
	}
}

// fromWorkspace is path as the workflow's workspace names it, which is how an
// annotation names a file; as given outside a workflow or outside its workspace.
func fromWorkspace(path string) string {
	ws := os.Getenv("GITHUB_WORKSPACE")
	abs, err := filepath.Abs(path)
	if ws == "" || err != nil {
		return filepath.ToSlash(filepath.Clean(path))
	}
	rel, err := filepath.Rel(ws, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return filepath.ToSlash(filepath.Clean(path))
	}
	return filepath.ToSlash(rel)
}

// ThresholdLines are the line (from 1) of each key of a run file's thresholds, read
// from its JSON as written; none for a file that is not JSON.
func ThresholdLines(b []byte) map[string]int {
	lines := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(b))
	// The containers open at the token read, each an object that waits for a key (or
	// a value), or an array; keys are the object keys read on the way down.
	type open struct{ object, wantKey bool }
	var stack []open
	var keys []string
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
			keys = keys[:len(keys)-1]
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return lines
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, open{object: t == '{', wantKey: t == '{'})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				stack[n-1].wantKey = false
				keys = append(keys, t)
				if len(keys) == 2 && keys[0] == "thresholds" {
					lines[t] = bytes.Count(b[:dec.InputOffset()], []byte("\n")) + 1
				}
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}
