package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/internal/host"
)

// goAdapters is where the Go process adapters' module is in stockbench's checkout: a
// module of its own, so that a library runs at the version its go.mod names.
const goAdapters = "adapters/go"

// AddGoLock adds a lock adapter built from adapters/go at a Go module's version (--lock-go):
// spec is "[NAME=]MODULE@VERSION [ARGS]", the program being the adapter that
// imports MODULE, built once into bin/adapters/PROGRAM-VERSION, NAME by default
// PROGRAM-VERSION. Two versions of one library side by side are what a maintainer
// reviewing a change compares (explore --lock-go A --lock-go B).
func (c *Catalog) AddGoLock(ctx context.Context, spec string) error {
	name, rest := Named(spec, "/@")
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return errors.New("want MODULE@VERSION [ARGS], as github.com/go-redsync/redsync/v4@v4.12.1 --extend")
	}
	module, version, ok := strings.Cut(fields[0], "@")
	if !ok || module == "" || !regexp.MustCompile(`^v[0-9][0-9A-Za-z.+-]*$`).MatchString(version) {
		return fmt.Errorf("%q: want MODULE@VERSION, a version as v4.12.1", fields[0])
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	bin, err := buildGoAdapter(ctx, module, version)
	if err != nil {
		return err
	}
	if name == "" {
		name = filepath.Base(bin)
	}
	command := strings.Join(append([]string{bin}, fields[1:]...), " ")
	if err := c.free(name, command); err != nil {
		return err
	}
	c.execs = append(c.execs, execDesign{adapter.Config{Name: name, Command: command}, adapter.SupportsLock})
	return nil
}

// buildGoAdapter builds the adapter of adapters/go that imports module, against module
// at version, into bin/adapters/PROGRAM-VERSION unless it is there, and returns its
// path. An adapter's build tags (//go:build TAG) are its features that need a later
// release: each is built in where the release compiles with it.
func buildGoAdapter(ctx context.Context, module, version string) (string, error) {
	root, err := host.Checkout()
	if err != nil {
		return "", fmt.Errorf("--lock-go builds from %s: %w", goAdapters, err)
	}
	src := filepath.Join(root, goAdapters)
	prog, err := adapterOf(src, module)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin", "adapters", filepath.Base(prog)+"-"+version)
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, bin); err == nil {
			bin = rel // the command line a person reads, from where they ran it
		}
	}
	if built, err := os.Stat(bin); err == nil && !changedSince(src, built.ModTime()) {
		return bin, nil
	}
	tmp, err := os.MkdirTemp("", "stockbench-go-adapter-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, os.DirFS(src)); err != nil {
		return "", fmt.Errorf("copy %s: %w", src, err)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	if out, err := goCmd(ctx, tmp, "get", module+"@"+version); err != nil {
		return "", fmt.Errorf("go get %s@%s: %s", module, version, out)
	}
	tags := buildTags(filepath.Join(src, prog))
	for {
		out, err := goCmd(ctx, tmp, "build", "-tags", strings.Join(tags, ","), "-o", abs, "./"+prog)
		switch {
		case err == nil:
			return bin, nil
		case len(tags) == 0:
			return "", fmt.Errorf("build %s against %s@%s: %s", prog, module, version, out)
		}
		tags = tags[:len(tags)-1] // a feature this release lacks
	}
}

// changedSince reports whether a file under src changed after t: an adapter built
// before its source changed (a newer stockbench's) is built again.
func changedSince(src string, t time.Time) bool {
	changed := false
	filepath.WalkDir(src, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || changed {
			return filepath.SkipAll
		}
		if info, err := d.Info(); err == nil && !d.IsDir() && info.ModTime().After(t) {
			changed = true
		}
		return nil
	})
	return changed
}

func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.Join(strings.Fields(out.String()), " "), err
}

// adapterOf is the program of the adapters' module in src that imports module.
func adapterOf(src, module string) (string, error) {
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	var known []string
	for _, e := range entries {
		main := filepath.Join(src, e.Name(), "main.go")
		b, err := os.ReadFile(main)
		if err != nil {
			continue
		}
		known = append(known, e.Name())
		if bytes.Contains(b, []byte(`"`+module+`"`)) || bytes.Contains(b, []byte(`"`+module+`/`)) {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("no adapter in %s imports %s (adapters: %s)", goAdapters, module, strings.Join(known, ", "))
}

// buildTags are the tags a program's files are built with (//go:build TAG), each a
// feature of a later release.
func buildTags(dir string) []string {
	var tags []string
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	re := regexp.MustCompile(`(?m)^//go:build ([a-z][a-z0-9_]*)\s*$`)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if m := re.FindSubmatch(b); m != nil {
			tags = append(tags, string(m[1]))
		}
	}
	return tags
}
