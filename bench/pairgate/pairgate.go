// Package pairgate times a change against a base build in one job: the base built from
// git into a directory of its own, both builds' speed rows run trial by trial, in pairs
// whose order is drawn per pair, and judged pair by pair (gate.JudgePairs), so that a
// busy or different runner moves both sides of every pair alike.
package pairgate

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-shellwords"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/gate"
)

// SpeedRows are the matrix arguments every trial starts from: make bench's sales with no
// fault, the rows whose speed a gate judges, once each (the headline, which is all
// faults, left out).
var SpeedRows = []string{"--faults", "none", "--queue-faults", "none", "--headline", ""}

// ApartRows are the arguments of a trial's second matrix, after its own, whenever its
// first ran a lock: the same locks, their 200 buyers served one at a time (one
// application instance serving one), so that nobody waits for the lock. A purchase's
// own path then shows on its own, the commands Redis runs for it exactly (token's 7
// every time): in SpeedRows' races every buyer's retries while another holds the lock
// vary from trial to trial by more than one round trip in the holder's path.
var ApartRows = []string{"--scenarios", "flash-sale", "--queues", "", "--buyers", "200", "--stock", "200", "--apps", "1", "--serve", "1", "--think", "0"}

// apart names ApartRows' rows, apart from any flash-sale rows of the trial's own.
const apart = "one at a time: "

// Config is a paired timing. Zero fields take the defaults their comments give.
type Config struct {
	// Repo is the git checkout the base is read from and the change runs in (default ".").
	Repo string
	// Base is the base's git ref, as origin/main or a commit. Empty: the base is this
	// build, told from the change by BaseWith and With (two versions of a user's design).
	Base string
	// BaseWith and With are the base's and the change's own matrix arguments, before
	// Args: two versions of one design, as --lock-file v1/mine.json and --lock-file
	// v2/mine.json. A design compared across the sides keeps its name on both.
	BaseWith, With []string
	// Change is the change's stockbench binary (default: the running one).
	Change string
	// Pairs is how many pairs of trials run (default 6).
	Pairs int
	// Seed draws the pairs' order (default 1).
	Seed uint64
	// Args are every trial's matrix arguments after SpeedRows, which they override (as
	// --locks token --queues ''): none runs the speed rows of make bench.
	Args []string
	// Redis is where every trial's sales find their servers, as the command's --redis
	// flags say; given to the trials in their environment, so that a URL's password is
	// on no command line. Zero: the trials read this process's environment.
	Redis servers.Config
	// Log is given a line per trial (default: discarded).
	Log io.Writer
}

// Timed reports whether the gate runs pairs of trials: this build against a base, or
// two versions of a design.
func (c *Config) Timed() bool { return c.Base != "" || c.BaseWith != nil || c.With != nil }

// Against says what the pairs timed, for the gate's exit line.
func (c *Config) Against() string {
	if c.Base != "" {
		return "this build against " + c.Base
	}
	return "--with against --base-with"
}

// Check refuses a gate that cannot run, in one line: baseline is the baseline file the
// gate holds the run to, if any.
func (c *Config) Check(baseline string) error {
	switch {
	case baseline == "" && !c.Timed():
		return errors.New("gate: --baseline is required (or --base, to time this build against another)")
	case c.Args != nil && !c.Timed():
		return errors.New("gate: matrix arguments after -- are a trial's, and only --base (or --base-with and --with) runs trials")
	case c.Base == "" && (c.BaseWith == nil) != (c.With == nil):
		return errors.New("gate: --base-with and --with name the two versions of a design: give both (or --base)")
	case c.Pairs < 3:
		return fmt.Errorf("gate: --pairs %d: at least 3 (fewer cannot tell a slowdown from the machine)", c.Pairs)
	}
	return nil
}

// SetWith sets BaseWith and With from the words of base and change (Words); a quote left
// open is a bench.UsageError.
func (c *Config) SetWith(base, change string) error {
	var err error
	if c.BaseWith, err = Words(base); err != nil {
		return bench.UsageError(fmt.Errorf("gate: --base-with: %w", err))
	}
	if c.With, err = Words(change); err != nil {
		return bench.UsageError(fmt.Errorf("gate: --with: %w", err))
	}
	return nil
}

// DefaultPairs is Config.Pairs' default.
const DefaultPairs = 6

// Result is what a paired timing measured.
type Result struct {
	Base  string      `json:"base"` // the base's commit; empty when the base is this build
	Pairs []gate.Pair `json:"pairs"`
	Took  time.Duration
}

// Run builds cfg.Base (when given) and runs the pairs. Bad input (a ref that is not a
// commit here, a base that does not build, a trial the base cannot run, sides whose rows
// differ) is a bench.UsageError; the base's directory is removed whatever happens.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	began := time.Now()
	cfg = withDefaults(cfg)
	if cfg.Base == "" && cfg.BaseWith == nil && cfg.With == nil {
		return nil, bench.UsageError(errors.New("gate: --base needs a git ref (or --base-with and --with, two versions of a design)"))
	}
	dir, err := os.MkdirTemp("", "stockbench-base-")
	if err != nil {
		return nil, fmt.Errorf("gate: base directory: %w", err)
	}
	defer os.RemoveAll(dir)
	builds := [2]side{{"base", cfg.Change, cfg.Repo, cfg.BaseWith}, {"change", cfg.Change, cfg.Repo, cfg.With}}
	res := &Result{}
	// What is logged waits until the first pair shows both sides ran the same rows: bad
	// input is one line.
	log := cfg.Log
	var held bytes.Buffer
	cfg.Log = &held
	if cfg.Base != "" {
		if res.Base, err = buildBase(ctx, cfg, dir); err != nil {
			return nil, err
		}
		builds[0].bin, builds[0].dir = filepath.Join(dir, "stockbench"), filepath.Join(dir, "src")
		fmt.Fprintf(cfg.Log, "gate: built the base, %s (%s), in %s\n", cfg.Base, res.Base[:12], time.Since(began).Round(time.Second))
	}
	for i, baseFirst := range gate.Order(cfg.Pairs, cfg.Seed) {
		order := builds
		if !baseFirst {
			order[0], order[1] = builds[1], builds[0]
		}
		p := gate.Pair{BaseFirst: baseFirst}
		for _, b := range order {
			t, err := b.trial(ctx, cfg, filepath.Join(dir, "trials", fmt.Sprintf("%d-%s", i+1, b.name)))
			if errors.Is(err, bench.ErrUsage) {
				return res, err
			} else if err != nil {
				return res, fmt.Errorf("gate: pair %d, %s: %w", i+1, b.name, err)
			}
			if b.name == "base" {
				p.Base = t
			} else {
				p.Change = t
			}
			fmt.Fprintf(cfg.Log, "gate: pair %d of %d: %s ran %d rows\n", i+1, cfg.Pairs, b.name, len(t))
		}
		if err := sameRows(p); err != nil {
			return res, err
		}
		if i == 0 {
			held.WriteTo(log)
			cfg.Log = log
		}
		res.Pairs = append(res.Pairs, p)
	}
	res.Took = time.Since(began)
	return res, nil
}

// buildBase writes cfg.Base's tree under dir/src and builds its command as
// dir/stockbench; it returns the base's commit.
func buildBase(ctx context.Context, cfg Config, dir string) (string, error) {
	if _, err := revParse(ctx, "gate", cfg.Repo, cfg.Base); err != nil {
		return "", err
	}
	if err := stale(ctx, cfg); err != nil {
		return "", err
	}
	_, commit, err := BuildRef(ctx, "gate", cfg.Repo, cfg.Base, dir)
	return commit, err
}

// BuildRef writes ref's tree (a git ref of the checkout repo) under dir/src and builds
// its command as dir/stockbench; it returns the binary and ref's commit. A ref that is
// not a commit here, or a tree that does not build, is a bench.UsageError whose line
// begins with who (the command).
func BuildRef(ctx context.Context, who, repo, ref, dir string) (bin, commit string, err error) {
	if commit, err = revParse(ctx, who, repo, ref); err != nil {
		return "", "", err
	}
	src := filepath.Join(dir, "src")
	if err := extract(ctx, repo, commit, src); err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, "stockbench")
	if err := build(ctx, src, bin); err != nil {
		return "", "", bench.UsageError(fmt.Errorf("%s: the base %s does not build: %w", who, ref, err))
	}
	return bin, commit, nil
}

// stale refuses a change binary that would time another change than the checkout's: one
// built from a clean tree at another commit than its HEAD, or one older than an
// uncommitted change to a file it builds from (newerChange). One with no build stamp, or
// stamped with a commit the checkout does not have, is taken as given.
func stale(ctx context.Context, cfg Config) error {
	built, dirty := stamp(cfg.Change)
	if built == "" {
		return nil
	}
	if _, err := revParse(ctx, "gate", cfg.Repo, built); err != nil {
		return nil
	}
	if f := newerChange(ctx, cfg.Repo, cfg.Change); f != "" {
		return bench.UsageError(fmt.Errorf("gate: %s is older than the change not committed to %s: rebuild it (make gate does) to time this change", cfg.Change, f))
	}
	head, err := revParse(ctx, "gate", cfg.Repo, "HEAD")
	if err != nil || head == built || dirty {
		return nil
	}
	return bench.UsageError(fmt.Errorf("gate: %s was built at %s, the checkout is at %s: rebuild it (make gate does) to time this change", cfg.Change, built[:min(12, len(built))], head[:12]))
}

// newerChange is a file of repo's changes not committed (tracked, modified or added)
// written after the binary bin, "" when there is none: the binary was built without it.
// Documentation (Markdown, docs/) and records (results/, baseline/) build nothing.
func newerChange(ctx context.Context, repo, bin string) string {
	fi, err := os.Stat(bin)
	if err != nil {
		return ""
	}
	top, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return ""
	}
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "diff", "--name-only", "-z", "HEAD").Output()
	if err != nil {
		return ""
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" || strings.HasSuffix(f, ".md") || strings.HasPrefix(f, "docs/") || strings.HasPrefix(f, "results/") || strings.HasPrefix(f, "baseline/") {
			continue
		}
		if st, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), f)); err == nil && st.ModTime().After(fi.ModTime()) {
			return f
		}
	}
	return ""
}

// sameRows refuses a pair whose sides ran different rows: a design renamed between the
// builds, or two versions of a design under two names, cannot be timed against itself.
func sameRows(p gate.Pair) error {
	var only [2][]string
	for k := range p.Base {
		if _, ok := p.Change[k]; !ok {
			only[0] = append(only[0], k)
		}
	}
	for k := range p.Change {
		if _, ok := p.Base[k]; !ok {
			only[1] = append(only[1], k)
		}
	}
	if only[0] == nil && only[1] == nil {
		return nil
	}
	slices.Sort(only[0])
	slices.Sort(only[1])
	return bench.UsageError(fmt.Errorf("gate: the base ran rows the change did not (%s) and the change rows the base did not (%s): a design timed across the builds keeps one name on both (NAME= on --lock-exec and --lock-go, the file's name)",
		cmp.Or(strings.Join(only[0], ", "), "none"), cmp.Or(strings.Join(only[1], ", "), "none")))
}

// Gate runs cfg and writes the rows' verdicts to w as a table; passed is false when a
// row regressed under g.
func Gate(ctx context.Context, cfg Config, g gate.Rules, w io.Writer) (passed bool, err error) {
	res, err := Run(ctx, cfg)
	if err != nil {
		return false, err
	}
	against := fmt.Sprintf("this build against %s (%s)", cfg.Base, res.Base[:min(12, len(res.Base))])
	if cfg.Base == "" {
		against = fmt.Sprintf("%q against %q", strings.Join(cfg.With, " "), strings.Join(cfg.BaseWith, " "))
	}
	fmt.Fprintf(w, "\ngate: %s, %d pairs of trials in %s:\n\n", against, len(res.Pairs), res.Took.Round(time.Second))
	return gate.WritePaired(w, gate.JudgePairs(res.Pairs, g), g) == 0, nil
}

func withDefaults(c Config) Config {
	if c.Repo == "" {
		c.Repo = "."
	}
	if c.Change == "" {
		c.Change, _ = os.Executable()
	}
	if c.Pairs <= 0 {
		c.Pairs = DefaultPairs
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

// revParse is ref's commit in repo.
func revParse(ctx context.Context, who, repo, ref string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}").Output()
	if err != nil {
		return "", bench.UsageError(fmt.Errorf("%s: --base %s: not a commit of the checkout %s", who, ref, repo))
	}
	return strings.TrimSpace(string(out)), nil
}

// extract writes commit's tree into dir, as git archive gives it.
func extract(ctx context.Context, repo, commit, dir string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "archive", "--format=tar", commit)
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("gate: git archive: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("gate: git archive: %w", err)
	}
	untarErr := untar(out, dir)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("gate: git archive %s: %w: %s", commit, err, strings.TrimSpace(stderr.String()))
	}
	return untarErr
}

// untar writes the regular files, directories and links of a tar stream under dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("gate: read the base's tree: %w", err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			continue // git archive writes none, but a path must stay inside dir
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, h.FileInfo().Mode().Perm())
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Symlink(h.Linkname, path)
			}
		}
		if err != nil {
			return fmt.Errorf("gate: write the base's tree: %w", err)
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// build builds the stockbench command of the tree src into bin; its error ends with the
// compiler's last lines. -trimpath keeps src's temporary path out of the build, and so
// out of the build cache's keys: the same base built again, by the next job on a runner
// that keeps its cache or by make gate run twice, takes seconds, not minutes.
func build(ctx context.Context, src, bin string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/stockbench")
	cmd.Dir = src
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build: %w: %s", err, lastLines(out, 3))
	}
	return nil
}

// side is one build of the pairs: its binary, the tree it runs in (the files its sales
// read: adapters, examples) and its own matrix arguments.
type side struct {
	name, bin, dir string
	with           []string
}

// trial runs b's speed rows once, and then its locks one purchase at a time
// (ApartRows), each run written under out, and reads their speed.
func (b side) trial(ctx context.Context, cfg Config, out string) (gate.Trial, error) {
	args := slices.Concat(SpeedRows, cfg.Redis.Args(), b.with, cfg.Args)
	f, err := b.matrix(ctx, cfg, filepath.Join(out, "rows"), args)
	if err != nil {
		return nil, err
	}
	t := speeds(f, "")
	if !slices.ContainsFunc(f.Runs, func(r results.Run) bool { return r.Kind == results.LockSale }) {
		return t, nil
	}
	if f, err = b.matrix(ctx, cfg, filepath.Join(out, "apart"), slices.Concat(args, ApartRows)); err != nil {
		return nil, err
	}
	maps.Copy(t, speeds(f, apart))
	return t, nil
}

// matrix runs b's matrix with args once, its run written under out, and reads it. A
// matrix that found a sale worse than documented (exit 1) still timed it; any other
// failure ends the timing.
func (b side) matrix(ctx context.Context, cfg Config, out string, args []string) (*results.File, error) {
	args = slices.Concat([]string{"matrix", "--repeat", "1", "--out", out}, args)
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Dir = b.dir
	if cfg.Redis != (servers.Config{}) {
		cmd.Env = append(os.Environ(), cfg.Redis.Env()...)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	// Ctrl-C reaches the trial as an interrupt, so that it stops its own servers.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err != nil && errors.As(err, &exit) && exit.ExitCode() == bench.ExitUsage:
		// the side's arguments, or the base's matrix, refuse: bad input, not a slowdown
		why := strings.TrimPrefix(lastLines(stderr.Bytes(), 1), "stockbench: ")
		return nil, bench.UsageError(fmt.Errorf("gate: the %s's trial (matrix %s) refused: %s", b.name, strings.Join(slices.Concat(b.with, cfg.Args), " "), why))
	case err != nil && !(errors.As(err, &exit) && exit.ExitCode() == bench.ExitFailed):
		return nil, fmt.Errorf("%s matrix: %w: %s", b.bin, err, lastLines(stderr.Bytes(), 2))
	}
	dir := results.Newest(out)
	if dir == "" {
		return nil, fmt.Errorf("%s matrix wrote no run under %s", b.bin, out)
	}
	f, err := results.ReadRun(dir)
	if err != nil {
		return nil, fmt.Errorf("read the trial's run: %w", err)
	}
	return f, nil
}

// speeds are the complete fault-free rows of f, each keyed by prefix and its key. A row
// whose server had other clients, or restarted, has no count of commands.
func speeds(f *results.File, prefix string) gate.Trial {
	t := gate.Trial{}
	for i := range f.Runs {
		r := &f.Runs[i]
		if !r.Complete || r.FaultPlan() != faults.None {
			continue
		}
		_, l := r.MainLatency()
		s := gate.Speed{P50Us: float64(l.P50Us), SalesPerSec: r.SalesPerSec}
		if c := r.Commands; c != nil && !c.Shared {
			s.CmdsPerSale = c.PerSale
		}
		t[prefix+r.Key()] = s
	}
	return t
}

// lastLines is the last n non-empty lines of b, joined by "; ".
func lastLines(b []byte, n int) string {
	lines := strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
	return strings.Join(lines[max(0, len(lines)-n):], "; ")
}

// stamp is the commit the binary at path was built at, and whether its tree had
// uncommitted changes; "" when it carries no build stamp.
func stamp(path string) (commit string, dirty bool) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", false
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return commit, dirty
}

// Words splits s into words as a shell does (quotes, backslashes; no variables, no
// backticks): how --base-with and --with take matrix arguments that themselves hold a
// command (--lock-exec "mine=python3 a.py").
func Words(s string) ([]string, error) {
	w, err := shellwords.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q: a quote or an escape left open: %w", s, err)
	}
	if len(w) == 0 {
		w = nil
	}
	return w, nil
}
