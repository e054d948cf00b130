// Package scaffold writes what a new design starts from (stockbench init): a Lua design
// file, an adapter in another language, or a Go test through the kit, each with the
// claims stockbench checks it by and the example's broken lock that fails them.
//
// Every route but the kit's writes two run files: stockbench.json, whose thresholds say
// what the user claims (no oversell, no lost update, never stuck, never broken, with no
// fault and with a holder that dies holding the lock), and stockbench-broken.json, the
// same claims of the example's broken lock, which forgets the lock's expiry and so
// stays stuck once a holder dies: `stockbench check` passes the first and fails the
// second as written. The kit's route writes a go test that does the same, its broken
// lock picked by STOCKBENCH_EXAMPLE=broken.
package scaffold

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/adapters"
)

//go:embed templates
var templates embed.FS

// Route is what init writes: a design file, an adapter in a language, or a kit test.
type Route string

// The routes.
const (
	LockFile  Route = "lock-file"
	Python    Route = "python"
	PHP       Route = "php"
	Node      Route = "node"
	Ruby      Route = "ruby"
	GoAdapter Route = "go"
	GoKit     Route = "go-kit"
)

// Languages are the adapter routes, as --adapter names them.
var Languages = []Route{Python, PHP, Node, Ruby, GoAdapter}

// route is where a route's files come from: its folder of templates, and the shipped
// protocol helper it copies, by its path in package adapters and the name it takes.
type route struct {
	dir            string
	helper, helpAs string
	// check is how the files are checked, as the README and init say: its commands, the
	// first passing, the second failing on the broken example.
	build, pass, fail string
}

var routes = map[Route]route{
	LockFile:  {dir: "lock-file", pass: "stockbench check", fail: "stockbench check stockbench-broken.json"},
	Python:    {dir: "python", helper: "python/stockbench_adapters/protocol.py", helpAs: "stockbench_protocol.py", pass: "stockbench check", fail: "stockbench check stockbench-broken.json"},
	PHP:       {dir: "php", helper: "php/protocol.php", helpAs: "protocol.php", pass: "stockbench check", fail: "stockbench check stockbench-broken.json"},
	Node:      {dir: "node", helper: "node/protocol.js", helpAs: "protocol.js", pass: "stockbench check", fail: "stockbench check stockbench-broken.json"},
	Ruby:      {dir: "ruby", helper: "ruby/lib/stockbench_adapters/protocol.rb", helpAs: "protocol.rb", pass: "stockbench check", fail: "stockbench check stockbench-broken.json"},
	GoAdapter: {dir: "go-adapter", build: "go mod tidy && go build -o mylock .", pass: "stockbench check", fail: "stockbench check stockbench-broken.json"},
	GoKit:     {dir: "go", build: "go mod tidy", pass: "go test ./...", fail: "STOCKBENCH_EXAMPLE=broken go test ./..."},
}

// Options is what to write and where.
type Options struct {
	Route Route
	// Name is the design's name, in its files and its run files. Default: mylock.
	Name string
	// Dir receives the files; it is made when missing. Default: the current directory.
	Dir string
	// From is the library a PHP adapter starts from (Froms): its lock, and its broken
	// example the library's own way to forget an expiry. Default: phpredis alone.
	From string
}

// Froms are the libraries a PHP adapter can start from, as --from names them.
var Froms = []string{"symfony", "laravel"}

// DefaultName is the design's name when Options names none.
const DefaultName = "mylock"

var validName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)

// Choose is the route init's flags name: exactly one of a design file, an adapter's
// language and the kit.
func Choose(lockFile bool, language string, kit bool) (Route, error) {
	switch n := btoi(lockFile) + btoi(language != "") + btoi(kit); {
	case n != 1:
		return "", errors.New("init: one of --lock-file, --adapter LANG or --go")
	case lockFile:
		return LockFile, nil
	case kit:
		return GoKit, nil
	case !slices.Contains(Languages, Route(language)):
		return "", fmt.Errorf("init: --adapter %q: one of %s", language, strings.Join(words(Languages), ", "))
	}
	return Route(language), nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Report prints the files Write wrote and what to run next.
func Report(w io.Writer, written []string, o Options) {
	for _, p := range written {
		fmt.Fprintln(w, "wrote", p)
	}
	fmt.Fprintln(w, "\nnext:")
	for _, l := range Next(o) {
		fmt.Fprintln(w, "  "+l)
	}
}

// Check says what is wrong with o, and which of its files exist already, before
// anything is written.
func Check(o Options) error {
	if _, ok := routes[o.Route]; !ok {
		return fmt.Errorf("init: no route %q (--lock-file, --go, or --adapter %s)", o.Route, strings.Join(words(Languages), "|"))
	}
	name := cmp.Or(o.Name, DefaultName)
	if !validName.MatchString(name) || strings.HasSuffix(name, "-") {
		return fmt.Errorf("init: --name %q: lower-case letters, digits and dashes, starting with a letter, at most 40", name)
	}
	if o.From != "" && (o.Route != PHP || !slices.Contains(Froms, o.From)) {
		return fmt.Errorf("init: --from %q: one of %s, with --adapter php", o.From, strings.Join(Froms, ", "))
	}
	files, err := Files(o)
	if err != nil {
		return err
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(cmp.Or(o.Dir, "."), f.Path)); err == nil {
			return fmt.Errorf("init: %s exists; nothing was written (another --dir, or move it away)", filepath.Join(cmp.Or(o.Dir, "."), f.Path))
		}
	}
	return nil
}

// File is one file init writes: its path under the directory, and what it holds.
type File struct {
	Path string
	Body []byte
	Mode fs.FileMode
}

// Files are the files of o's route, with its name in them.
func Files(o Options) ([]File, error) {
	r, ok := routes[o.Route]
	if !ok {
		return nil, fmt.Errorf("init: no route %q", o.Route)
	}
	name := cmp.Or(o.Name, DefaultName)
	var files []File
	root := path.Join("templates", r.dir)
	err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
		if o.From != "" {
			if _, err := fs.Stat(templates, path.Join(root+"-"+o.From, rel)); err == nil {
				p = path.Join(root+"-"+o.From, rel) // the library's own version of the file
			}
		}
		b, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, file(rel, b, name))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	if r.helper != "" {
		b, err := adapters.Helpers.ReadFile(r.helper)
		if err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		files = append(files, File{Path: r.helpAs, Body: b, Mode: 0o644})
	}
	switch o.Route {
	case GoAdapter:
		files = append(files, goMod("example.com/"+name, false))
	case GoKit:
		files = append(files, goMod("example.com/"+name, true))
	}
	files = append(files, readme(o.Route, name, o.From))
	for i, f := range files {
		if strings.HasSuffix(f.Path, ".go") {
			b, err := format.Source(f.Body)
			if err != nil {
				return nil, fmt.Errorf("init: %s: %w", f.Path, err)
			}
			files[i].Body = b
		}
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// file is a template with the design's name in its path and body; a Go package takes
// the name without its dashes.
func file(rel string, b []byte, name string) File {
	ident := strings.ReplaceAll(name, "-", "")
	b = bytes.ReplaceAll(b, []byte("package mylock"), []byte("package "+ident))
	b = bytes.ReplaceAll(b, []byte("mylock"), []byte(name))
	mode := fs.FileMode(0o644)
	if bytes.HasPrefix(b, []byte("#!")) {
		mode = 0o755
	}
	return File{Path: strings.ReplaceAll(rel, "mylock", name), Body: b, Mode: mode}
}

// goMod is a module's go.mod requiring go-redis at the version this stockbench was
// built with, and the kit when kit is set: at this stockbench's version, when it was
// built from one (go install ...@version); else go get names the version.
func goMod(module string, kit bool) File {
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo 1.26\n", module)
	if v := depVersion("github.com/redis/go-redis/v9"); v != "" {
		fmt.Fprintf(&b, "\nrequire github.com/redis/go-redis/v9 %s\n", v)
	}
	if kit {
		if v := selfVersion(); v != "" {
			fmt.Fprintf(&b, "\nrequire github.com/stockbench/stockbench %s\n", v)
		} else {
			b.WriteString("\n// The kit: go get github.com/stockbench/stockbench@latest (this stockbench was built\n// from a checkout, so it cannot name its own version).\n")
		}
	}
	return File{Path: "go.mod", Body: []byte(b.String()), Mode: 0o644}
}

// depVersion is the version of module m this binary was built with; "" when its build
// information does not say (go mod tidy then takes the newest).
func depVersion(m string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == m {
				return d.Version
			}
		}
	}
	return ""
}

// selfVersion is this stockbench's module version, "" when built from a checkout.
func selfVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Path != "github.com/stockbench/stockbench" || info.Main.Version == "(devel)" {
		return ""
	}
	return info.Main.Version
}

// Write writes o's files into o.Dir, after Check: all of them, or none when one cannot
// be written (those written by then are removed). It returns their paths.
func Write(o Options) ([]string, error) {
	if err := Check(o); err != nil {
		return nil, err
	}
	files, err := Files(o)
	if err != nil {
		return nil, err
	}
	dir := cmp.Or(o.Dir, ".")
	var written []string
	for _, f := range files {
		p := filepath.Join(dir, f.Path)
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		if err == nil {
			err = os.WriteFile(p, f.Body, f.Mode)
		}
		if err != nil {
			for _, w := range written {
				os.Remove(w)
			}
			return nil, fmt.Errorf("init: %w", err)
		}
		written = append(written, p)
	}
	return written, nil
}

// Next is what to run once the files are written: build, then check (passes), then
// check the broken example (fails).
func Next(o Options) []string {
	r := routes[o.Route]
	name := cmp.Or(o.Name, DefaultName)
	var lines []string
	if o.Dir != "" && o.Dir != "." {
		lines = append(lines, "cd "+o.Dir)
	}
	if r.build != "" {
		lines = append(lines, strings.ReplaceAll(r.build, "mylock", name))
	}
	return append(lines, r.pass+"    # passes: your lock keeps its claims", r.fail+"    # fails: the example's broken lock, stuck once a holder dies")
}

func readme(rt Route, name, from string) File {
	var b strings.Builder
	label := string(rt)
	if from != "" {
		label += ", from " + from
	}
	fmt.Fprintf(&b, "# %s\n\nWritten by `stockbench init` (%s). What is here:\n\n", name, label)
	switch rt {
	case LockFile:
		fmt.Fprintf(&b, "- `locks/%s.json`: your lock as a design file, its acquire and release as Lua.\n", name)
	case GoKit:
		fmt.Fprintf(&b, "- `%s.go`: your lock; `%s_test.go`: it under stockbench's sales, through the kit.\n", name, name)
	default:
		fmt.Fprintf(&b, "- your lock behind stockbench's adapter protocol (one process of the pool the harness starts), and the protocol's helper beside it.\n")
	}
	if rt != GoKit {
		b.WriteString("- `stockbench.json`: what runs and what you claim for it (the thresholds): no oversell, no lost update, never stuck, never broken, with no fault and with a holder that dies holding the lock.\n")
		b.WriteString("- `stockbench-broken.json`: the same claims of the example's broken lock, which forgets its expiry.\n")
	}
	b.WriteString("\nCheck it:\n\n```sh\n")
	for _, l := range Next(Options{Route: rt, Name: name}) {
		b.WriteString(l + "\n")
	}
	b.WriteString("```\n\nPut your own lock in place of the example's, and your own claims in the thresholds. In CI: `--junit FILE` for the test report, `--format github` for annotations; stockbench's examples/ci has workflows for GitHub Actions and GitLab.\n")
	return File{Path: "README.md", Body: []byte(b.String()), Mode: 0o644}
}

func words(rs []Route) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}
