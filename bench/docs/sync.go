package docs

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"

	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
)

// Block is a generated part of a file of the checkout: between the markers
// "<!-- generated: NAME -->" and "<!-- end generated: NAME -->" in a Markdown file, or
// the whole file when Name is empty.
type Block struct {
	File, Name string
	// Source says where the block comes from, for its marker and for a reader who would
	// change it.
	Source string
	Render func(root string) (string, error)
}

// Blocks are every generated part of the checkout.
var Blocks = []Block{
	{"README.md", "lock-matrix", "baseline/results.json (make baseline)", func(root string) (string, error) { return matrices(root, false) }},
	{"README.md", "queue-matrices", "baseline/results.json (make baseline)", func(root string) (string, error) { return matrices(root, true) }},
	{"docs/designs.md", "locks", "lockimpl/builtin.go", static(lockTable)},
	{"docs/designs.md", "lock-verdicts", "each design's Documented in lockimpl/builtin.go", static(lockVerdicts)},
	{"docs/designs.md", "drop-verdicts", "each design's DropDocumented in lockimpl/builtin.go", static(dropVerdicts)},
	{"docs/designs.md", "queues", "queueimpl's registrations", static(queueTable)},
	{"docs/designs.md", "queue-verdicts", "each queue design's Documented", static(queueVerdicts)},
	{"docs/faults.md", "faults", "the fault table, faults/faults.go", static(faultTable)},
	{"docs/running.md", "commands", "bench/docs.Commands", static(commandsTable)},
	{"cmd/stockbench/doc.go", "", "bench/docs.Commands", static(docComment)},
}

func static(f func() string) func(string) (string, error) {
	return func(string) (string, error) { return f(), nil }
}

// matrices is the baseline's lock matrix of the fault-sale preset, or its queue
// matrices, as a terminal prints them.
func matrices(root string, queues bool) (string, error) {
	f, err := results.Read(filepath.Join(root, "baseline", "results.json"))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("```\n")
	n := 0
	for _, m := range results.Matrices(f.Runs) {
		isQueue := strings.HasPrefix(m.Scenario, "queue-sale")
		if len(m.Faults) < 2 || isQueue != queues || (!queues && m.Scenario != "fault-sale") {
			continue
		}
		if n++; n > 1 {
			b.WriteString("\n")
		}
		if err := report.WriteMatrix(&b, m, 0); err != nil {
			return "", err
		}
	}
	b.WriteString("```\n")
	if n == 0 {
		return "", fmt.Errorf("baseline/results.json holds no %s matrix", map[bool]string{false: "lock", true: "queue"}[queues])
	}
	return b.String(), nil
}

// Sync renders every block of the checkout at root and, when write is set, writes
// those that changed; it returns the blocks that differed ("FILE" or "FILE#NAME").
func Sync(root string, write bool) (stale []string, err error) {
	for _, bl := range Blocks {
		path := filepath.Join(root, bl.File)
		old, err := os.ReadFile(path)
		if err != nil && !(bl.Name == "" && os.IsNotExist(err)) {
			return nil, err
		}
		body, err := bl.Render(root)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", bl.File, err)
		}
		updated := []byte(body)
		if strings.HasSuffix(bl.File, ".go") {
			if updated, err = format.Source(updated); err != nil {
				return nil, fmt.Errorf("%s: %w", bl.File, err)
			}
		}
		if bl.Name != "" {
			if updated, err = replace(old, bl, body); err != nil {
				return nil, err
			}
		}
		if bytes.Equal(old, updated) {
			continue
		}
		stale = append(stale, strings.TrimSuffix(bl.File+"#"+bl.Name, "#"))
		if write {
			if err := os.WriteFile(path, updated, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return stale, nil
}

// replace puts body between bl's markers in text.
func replace(text []byte, bl Block, body string) ([]byte, error) {
	begin := fmt.Sprintf("<!-- generated: %s", bl.Name)
	end := fmt.Sprintf("<!-- end generated: %s -->", bl.Name)
	i, j := bytes.Index(text, []byte(begin)), bytes.Index(text, []byte(end))
	if i < 0 || j < i {
		return nil, fmt.Errorf("%s: no block %q (want %s ... %s)", bl.File, bl.Name, begin, end)
	}
	marker := fmt.Sprintf("%s from %s by make docs; edit that, not this -->\n", begin, bl.Source)
	var out bytes.Buffer
	out.Write(text[:i])
	out.WriteString(marker)
	out.WriteString(body)
	out.Write(text[j:])
	return out.Bytes(), nil
}
