package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stockbench/stockbench/results"
)

// A pages directory holds claims/LIBRARY.json (what each library claims),
// records/LIBRARY.json (what was measured), LIBRARY.md (the page rendered from both)
// and README.md (the summary of every page).
const (
	ClaimsDir  = "claims"
	RecordsDir = "records"
)

// Write puts rec in dir with its claims (copied from claimsFile when that is not
// already dir's) and renders every page of dir again.
func Write(dir, claimsFile string, rec *Record) error {
	for _, sub := range []string{ClaimsDir, RecordsDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("analyse: write %s: %w", dir, err)
		}
	}
	dst := filepath.Join(dir, ClaimsDir, rec.Library+".json")
	if same, _ := sameFile(claimsFile, dst); !same {
		b, err := os.ReadFile(claimsFile)
		if err == nil {
			err = os.WriteFile(dst, b, 0o644)
		}
		if err != nil {
			return fmt.Errorf("analyse: copy the claims: %w", err)
		}
	}
	js, err := json.MarshalIndent(rec, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, RecordsDir, rec.Library+".json"), append(js, '\n'), 0o644)
	}
	if err != nil {
		return fmt.Errorf("analyse: write the record: %w", err)
	}
	return Render(dir)
}

// Render renders every page of dir, and its summary, from its claims and records.
func Render(dir string) error {
	all, err := Load(dir)
	if err != nil {
		return err
	}
	for file, text := range Rendered(all) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			return fmt.Errorf("analyse: %w", err)
		}
	}
	return nil
}

// comparisons are the files that set the libraries of a kind side by side.
var comparisons = map[results.SaleKind]string{results.LockSale: "locks.md", results.QueueSale: "queues.md"}

// Rendered are the pages of all, their summary and the comparisons, by file name.
func Rendered(all []Analysis) map[string]string {
	out := map[string]string{"README.md": Summary(all)}
	for kind, file := range comparisons {
		if len(ofKind(all, kind)) > 0 {
			out[file] = Comparison(all, kind)
		}
	}
	for _, an := range all {
		out[an.Claims.Library+".md"] = an.Page()
	}
	return out
}

// Load reads every record of dir with its claims.
func Load(dir string) ([]Analysis, error) {
	files, err := filepath.Glob(filepath.Join(dir, RecordsDir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, errors.Join(err, fmt.Errorf("analyse: no record in %s", filepath.Join(dir, RecordsDir)))
	}
	var all []Analysis
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("analyse: %w", err)
		}
		var rec Record
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("analyse: %s: %w", f, err)
		}
		c, err := Read(filepath.Join(dir, ClaimsDir, strings.TrimSuffix(filepath.Base(f), ".json")+".json"))
		if err != nil {
			return nil, err
		}
		all = append(all, Analysis{Claims: c, Record: &rec})
	}
	return all, nil
}

func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}
