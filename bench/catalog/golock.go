package catalog

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/internal/host"
)

// goAdapters is where the Go process adapters' module is in stockbench's checkout: a
// module of its own, so that a library runs at the version its go.mod names.
const goAdapters = "adapters/go"

// shipped is adapters/go as this binary was built with it (make docs writes it), so
// that a stockbench installed with go install builds the adapters as a checkout does.
//
//go:embed goadapters.txtar
var shipped []byte

// GoSpec is a Go library --lock-go or --queue-go names: "MODULE@VERSION [ARGS]" (a release, a
// commit or a branch, as go get takes it) or "MODULE=DIR [ARGS]" (a working tree of
// the module, as a go.mod's replace).
type GoSpec struct {
	Module, Version, Dir string
	Args                 []string
}

// ParseGoSpec reads spec (without its NAME=), checking what it can without building.
func ParseGoSpec(spec string) (GoSpec, error) {
	fields := strings.Fields(spec)
	if len(fields) == 0 {
		return GoSpec{}, errors.New("want MODULE@VERSION or MODULE=DIR, then the adapter's arguments, as github.com/go-redsync/redsync/v4@v4.12.1 --extend")
	}
	s := GoSpec{Args: fields[1:]}
	if m, dir, ok := strings.Cut(fields[0], "="); ok {
		s.Module, s.Dir = m, dir
		if err := s.checkDir(); err != nil {
			return GoSpec{}, err
		}
		return s, nil
	}
	m, v, ok := strings.Cut(fields[0], "@")
	if !ok || m == "" || !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+/-]*$`).MatchString(v) {
		return GoSpec{}, fmt.Errorf("%q: want MODULE@VERSION (a release as v4.12.1, a commit or a branch) or MODULE=DIR", fields[0])
	}
	s.Module, s.Version = m, v
	return s, nil
}

// checkDir says whether s.Dir is a working tree of s.Module.
func (s GoSpec) checkDir() error {
	b, err := os.ReadFile(filepath.Join(s.Dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("%s is not a Go module: no go.mod there", s.Dir)
	}
	m := regexp.MustCompile(`(?m)^module\s+"?([^\s"]+)"?`).FindSubmatch(b)
	switch {
	case m == nil:
		return fmt.Errorf("%s/go.mod names no module", s.Dir)
	case string(m[1]) != s.Module:
		return fmt.Errorf("%s is module %s, not %s", s.Dir, m[1], s.Module)
	}
	return nil
}

// AddGo adds an adapter of part (adapter.SupportsLock or SupportsQueue) built from
// adapters/go against a Go library (--lock-go, --queue-go): spec is "[NAME=]MODULE@VERSION [ARGS]" or "[NAME=]MODULE=DIR [ARGS]", the program
// being the adapter that imports MODULE, built once into the user's cache directory;
// NAME is by default PROGRAM-VERSION, or PROGRAM-DIR for a working tree. Two versions
// of one library side by side are what a maintainer reviewing a change compares
// (explore --lock-go MODULE@LAST_RELEASE --lock-go MODULE=../their-branch).
func (c *Catalog) AddGo(ctx context.Context, part, spec string) error {
	name, rest := Named(spec, "/@")
	s, err := ParseGoSpec(rest)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	bin, prog, err := s.build(ctx, part)
	if err != nil {
		return err
	}
	if name == "" {
		name = prog + "-" + cmp.Or(s.Version, filepath.Base(s.Dir))
	}
	command := strings.Join(append([]string{bin}, s.Args...), " ")
	if err := c.free(name, command); err != nil {
		return err
	}
	c.execs = append(c.execs, execDesign{cfg: adapter.Config{Name: name, Command: command}, part: part, goSpec: strings.TrimSpace(rest)})
	return nil
}

// build builds the adapter that imports s.Module against s, unless the cache holds it,
// and returns the binary's path and the program's name; a program of another part (an
// adapter's directory ends in -lock or -queue) is refused before it is built. A binary
// is named for what it was built from (the adapters' files, the version or the working tree's files), so
// that a changed adapter or tree is built again and nothing stale runs.
func (s GoSpec) build(ctx context.Context, part string) (bin, prog string, err error) {
	src, err := adapterFiles()
	if err != nil {
		return "", "", err
	}
	prog, err = adapterOf(src, s.Module)
	if err != nil {
		return "", "", err
	}
	if other, _ := strings.CutSuffix(prog, "-"+part); other == prog {
		_, its, _ := strings.Cut(prog[strings.LastIndex(prog, "-"):], "-")
		return "", "", fmt.Errorf("%s's adapter %s runs a %s: name it with --%s-go", s.Module, prog, its, its)
	}
	if s.Version != "" && !release.MatchString(s.Version) {
		// A branch moves and a short commit is a query: the version it resolves to now
		// names the build, so that a branch's new commits are built again.
		out, err := goCmd(ctx, os.TempDir(), "list", "-m", "-f", "{{.Version}}", s.Module+"@"+s.Version)
		if err != nil {
			return "", "", fmt.Errorf("go list -m %s@%s: %s", s.Module, s.Version, out)
		}
		s.Version = out
	}
	h := sha256.New()
	hashFiles(h, src)
	fmt.Fprintf(h, "%s@%s\n", s.Module, s.Version)
	if s.Dir != "" {
		tree, err := readTree(s.Dir)
		if err != nil {
			return "", "", err
		}
		hashFiles(h, tree)
	}
	dir, err := cacheDir()
	if err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, prog+"-"+cmp.Or(s.Version, filepath.Base(s.Dir))+"-"+hex.EncodeToString(h.Sum(nil))[:12])
	if _, err := os.Stat(bin); err == nil {
		return bin, prog, nil
	}
	if err := s.compile(ctx, src, prog, bin); err != nil {
		return "", "", err
	}
	return bin, prog, nil
}

// compile builds prog of the adapters' files src against s into bin, in a directory of
// its own that it removes.
func (s GoSpec) compile(ctx context.Context, src map[string][]byte, prog, bin string) error {
	tmp, err := os.MkdirTemp("", "stockbench-go-adapter-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := writeFiles(tmp, src); err != nil {
		return err
	}
	if s.Dir != "" {
		abs, err := filepath.Abs(s.Dir)
		if err != nil {
			return err
		}
		if out, err := goCmd(ctx, tmp, "mod", "edit", "-replace", s.Module+"="+abs); err != nil {
			return fmt.Errorf("go mod edit -replace %s=%s: %s", s.Module, abs, out)
		}
	} else if out, err := goCmd(ctx, tmp, "get", s.Module+"@"+s.Version); err != nil {
		return fmt.Errorf("go get %s@%s: %s", s.Module, s.Version, out)
	}
	// Built beside, then renamed: two runs building one adapter at once each see a
	// whole binary.
	part := bin + fmt.Sprintf(".%d.tmp", os.Getpid())
	defer os.Remove(part)
	tags := buildTags(src, prog)
	for {
		out, err := goCmd(ctx, tmp, "build", "-tags", strings.Join(tags, ","), "-o", part, "./"+prog)
		switch {
		case err == nil:
			return os.Rename(part, bin)
		case len(tags) == 0:
			return fmt.Errorf("build %s against %s: %s", prog, s, out)
		}
		tags = tags[:len(tags)-1] // a feature this release lacks
	}
}

// release is a tagged release's version, which names one commit for good.
var release = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+incompatible)?$`)

// String is the library as a person names it: MODULE@VERSION or MODULE=DIR.
func (s GoSpec) String() string {
	if s.Dir != "" {
		return s.Module + "=" + s.Dir
	}
	return s.Module + "@" + s.Version
}

// cacheDir is where built adapters are kept: the user's cache directory, as the go
// command keeps its builds.
func cacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "stockbench", "go-adapters")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("Go adapters are kept in %s: %w", dir, err)
	}
	return dir, nil
}

// adapterFiles are the adapters module's files by their path in it: the checkout's
// adapters/go when stockbench runs inside its checkout (a contributor's edit is built
// at once), else the copy built into this binary.
func adapterFiles() (map[string][]byte, error) {
	if root, err := host.Checkout(); err == nil {
		if files, err := readTree(filepath.Join(root, goAdapters)); err == nil {
			return files, nil
		}
	}
	return unpack(shipped)
}

// readTree is the regular files under dir by their slash path, but for hidden ones
// (.git) and what a build leaves (bin/): a module's sources.
func readTree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.IsDir() && rel == "bin") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return files, nil
}

func hashFiles(h io.Writer, files map[string][]byte) {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s %d\n", name, len(files[name]))
		h.Write(files[name])
	}
}

func writeFiles(dir string, files map[string][]byte) error {
	for name, b := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", errors.New("a Go adapter (--lock-go, --queue-go) builds with the go command, which is not on PATH")
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.Join(strings.Fields(out.String()), " "), err
}

// adapterOf is the program of the adapters' module that imports module.
func adapterOf(src map[string][]byte, module string) (string, error) {
	var known []string
	for _, name := range slices.Sorted(maps.Keys(src)) {
		prog, file, ok := strings.Cut(name, "/")
		if !ok || file != "main.go" {
			continue
		}
		known = append(known, prog)
		b := src[name]
		if bytes.Contains(b, []byte(`"`+module+`"`)) || bytes.Contains(b, []byte(`"`+module+`/`)) {
			return prog, nil
		}
	}
	return "", fmt.Errorf("no adapter in %s imports %s (adapters: %s)", goAdapters, module, strings.Join(known, ", "))
}

// buildTags are the tags a program's files are built with (//go:build TAG), each a
// feature of a later release.
func buildTags(src map[string][]byte, prog string) []string {
	var tags []string
	re := regexp.MustCompile(`(?m)^//go:build ([a-z][a-z0-9_]*)\s*$`)
	for _, name := range slices.Sorted(maps.Keys(src)) {
		if dir, file, _ := strings.Cut(name, "/"); dir == prog && strings.HasSuffix(file, ".go") {
			if m := re.FindSubmatch(src[name]); m != nil {
				tags = append(tags, string(m[1]))
			}
		}
	}
	return tags
}
