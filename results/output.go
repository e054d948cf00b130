package results

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Output is a run directory: results.json here, and what package report derives from
// it (summary.md, report.html and the plots).
type Output struct {
	Dir  string
	made bool
}

// NewOutput names the run directory base/id without making it: it is made when first
// written to, so a run stopped before it measured anything leaves no empty directory.
func NewOutput(base, id string) *Output { return &Output{Dir: filepath.Join(base, id)} }

// Reopen is the run directory dir, which exists: Progress rewrites its results.json.
func Reopen(dir string) *Output { return &Output{Dir: dir, made: true} }

// Create makes the run directory base/id now; it fails if it already exists.
func Create(base, id string) (*Output, error) {
	o := NewOutput(base, id)
	return o, o.make()
}

func (o *Output) make() error {
	if o.made {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(o.Dir), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Mkdir(o.Dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	o.made = true
	return nil
}

// Progress writes results.json alone, making the directory if need be. It is called
// after every sale, so that a run that dies later still leaves what it measured.
func (o *Output) Progress(f *File) error {
	if err := o.make(); err != nil {
		return err
	}
	return writeJSON(filepath.Join(o.Dir, "results.json"), f)
}

// NewID names a run directory: sortable by time, unique across hosts.
func NewID() string {
	b := make([]byte, 3)
	rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}
