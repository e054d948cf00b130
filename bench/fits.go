package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stockbench/stockbench/internal/host"
)

// fits refuses, before any server starts, a sale this machine cannot hold: more memory
// than it has available, or more connections than the process may open files. A
// refusal names the estimate, what is there and the flag that changes the sale.
func fits(jobs []Job, redisHere bool) error {
	avail, memOK := host.Memory()
	files, filesOK := host.OpenFiles()
	for _, j := range jobs {
		f := j.Footprint(redisHere)
		if memOK && f.Bytes > avail {
			where := ""
			if redisHere {
				where = ", Redis's share included"
			}
			return fmt.Errorf("%s: the sale needs about %s of memory (%s%s) and %s is available: lower %s",
				j.design(), host.Size(f.Bytes), f.Most, where, host.Size(avail), "--"+f.Setting)
		}
		// Each connection is a descriptor; leave room for the harness's own.
		if need := uint64(f.Conns) + 256; filesOK && need > files {
			return fmt.Errorf("%s: the sale opens %d connections and this process may open %d files (ulimit -n): lower --conns",
				j.design(), f.Conns, files)
		}
	}
	return nil
}

// Writable checks, without leaving anything behind, that the run directory can be made
// under out: out is a directory, or can be made as one, and files can be written there.
func Writable(out string) error {
	dir := filepath.Clean(out)
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				if dir == filepath.Clean(out) {
					return fmt.Errorf("--out %s is a file, not a directory", out)
				}
				return fmt.Errorf("--out %s cannot be made: %s is a file", out, dir)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--out %s: %s: %w", out, dir, bare(err))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("--out %s: no directory of it exists", out)
		}
		dir = parent
	}
	probe, err := os.CreateTemp(dir, ".stockbench-probe-*")
	if err != nil {
		return fmt.Errorf("--out %s: cannot write in %s: %w", out, dir, bare(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// bare is a file error without the path it names, which the message says its own way.
func bare(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}
