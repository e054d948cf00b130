package analysis

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/bench/findings"
	"github.com/stockbench/stockbench/results"
)

// Flags are what analyse's command line adds to a claims file, each over the file's own.
type Flags struct {
	Runs, Parallel int
	Budget         string
	Shrink         time.Duration
	Pages, Render  string
}

// Bind binds the flags to fs.
func (f *Flags) Bind(fs *flag.FlagSet) {
	fs.IntVar(&f.Parallel, "parallel", 0, "at most `n` sales at once, each on servers of its own (default: the claims file's parallel, else two per CPU; the user's own Redis: one)")
	fs.IntVar(&f.Runs, "runs", 0, "draws per fault (default: the claims file's runs, else 20)")
	fs.StringVar(&f.Budget, "budget", "", "explore for this long after the cells, for what they leave open (default: the claims file's explore.budget; 0: no exploration)")
	fs.DurationVar(&f.Shrink, "shrink", time.Minute, "how long each finding's shrink may take")
	fs.StringVar(&f.Pages, "pages", "", "write the page into `DIR`: DIR/LIBRARY.md, its claims and record under DIR/claims and DIR/records, and DIR/README.md over every page there (default: a directory of its own under --out)")
	fs.StringVar(&f.Render, "render", "", "render the pages of `DIR` again from their claims and records, measuring nothing (after a claim's wording, mapping or tracker lookup changed)")
}

// RenderDir is `analyse --render DIR`: the pages of dir rendered again, measuring
// nothing; pos, the positional arguments, must be none. It returns the exit status.
func RenderDir(dir string, pos []string, stdout, stderr io.Writer) int {
	err := Render(dir)
	if err == nil && len(pos) > 0 {
		err = errors.New("analyse: --render DIR takes no claims file")
	}
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	return bench.Exit(stdout, bench.ExitOK, "the pages of "+dir+" rendered again")
}

// Plan is an analysis the command line asks for, checked, and where its page goes.
type Plan struct {
	Config
	file, pages string
	// sentinel names a deployment whose cells run over a Sentinel group, which needs a
	// Docker engine; "" for none.
	sentinel string
}

// Prepare reads the claims file pos names and checks everything before a server starts:
// its design, added to cat by parsing its design flags on a flag set design binds (the
// command line's own, plus --lock and --queue for a built-in), its settings, and its
// faults against its kind of sale, and that out (where runs go) and the pages directory
// can be written. redis is where Redis comes from, as flags.
func (f *Flags) Prepare(pos []string, cat *catalog.Catalog, design func(*flag.FlagSet), redis []string, out string) (*Plan, error) {
	if len(pos) != 1 {
		return nil, fmt.Errorf("analyse: name one claims file (see docs/analyses/claims), got %d", len(pos))
	}
	cl, err := Read(pos[0])
	if err != nil {
		return nil, err
	}
	dfs := flag.NewFlagSet("design", flag.ContinueOnError)
	dfs.SetOutput(io.Discard)
	design(dfs)
	var locks, queues []string
	dfs.Func("lock", "", func(s string) error { locks = append(locks, s); return nil })
	dfs.Func("queue", "", func(s string) error { queues = append(queues, s); return nil })
	if err := dfs.Parse(cl.Design); err == nil && dfs.NArg() > 0 {
		return nil, fmt.Errorf("%s: design: unexpected argument %q", pos[0], dfs.Arg(0))
	} else if err != nil {
		return nil, fmt.Errorf("%s: design: %w", pos[0], err)
	}
	x, err := findings.Designs(cat, locks, queues, "", false, redis)
	if err == nil && len(x.Designs) != 1 {
		err = fmt.Errorf("names %d designs; an analysis takes one", len(x.Designs))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: design: %w", pos[0], err)
	}
	// Each quote read from the file it names, once the design was built (a Go module's
	// files are then in the module cache).
	qctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cl.CheckQuotes(qctx); err != nil {
		return nil, fmt.Errorf("%s: %w", pos[0], err)
	}
	sale := x.Designs[0]
	if n := cl.Nodes(); n > 1 {
		if sale.Kind != results.LockSale || sale.Source == nil || sale.Source.Exec == "" && sale.Source.Go == "" {
			return nil, fmt.Errorf("%s: deployments: nodes: %s is no lock adapter; only an adapter that takes several lock servers runs over %d", pos[0], sale.Design, n)
		}
		cat.NodesLater = n // the adapter's hello says whether it takes them, before a sale starts
	}
	for name, v := range cl.Settings {
		sale.Set(name, v)
	}
	if _, err := bench.JobOf(&sale); err != nil {
		return nil, fmt.Errorf("%s: settings: %w", pos[0], err)
	}
	for _, d := range cl.Deployments {
		s := sale.Clone()
		for name, v := range d.Settings {
			s.Set(name, v)
		}
		if _, err := bench.JobOf(&s); err != nil {
			return nil, fmt.Errorf("%s: deployment %s: settings: %w", pos[0], d.Name, err)
		}
	}
	p := &Plan{Config: Config{Claims: cl, Sale: sale, Runs: cmp.Or(f.Runs, cl.Runs, DefaultRuns), Parallel: cmp.Or(f.Parallel, cl.Parallel, 2*runtime.NumCPU()), Shrink: f.Shrink, Explore: x}, file: pos[0], pages: f.Pages}
	if p.Cells, err = cl.Cells(sale.Kind); err != nil {
		return nil, fmt.Errorf("%s: %w", pos[0], err)
	}
	if p.sentinel = cl.sentinelDeployment(p.Cells); p.sentinel != "" && sale.Source != nil && (sale.Source.Exec != "" || sale.Source.Go != "") {
		cat.SentinelLater = true // the adapter's hello says whether its client follows the group itself
	}
	switch {
	case p.Runs < MinRuns || p.Runs > 1000:
		return nil, fmt.Errorf("analyse: --runs must be from %d to 1000, got %d", MinRuns, p.Runs)
	case p.Parallel < 1 || f.Shrink < 0:
		return nil, errors.New("analyse: --parallel must be at least 1 and --shrink not negative")
	}
	if err := errors.Join(bench.Writable(out), writable(f.Pages)); err != nil {
		return nil, err
	}
	if p.Repros, err = Repros(pagesOf(f.Pages, pos[0]), cl.Library); err != nil {
		return nil, err
	}
	return p, p.explore(f.Budget)
}

// pagesOf is the pages directory whose reproductions an analysis runs: the one it
// writes to, else the one its claims file is in (DIR/claims/LIBRARY.json), else none.
func pagesOf(pages, claimsFile string) string {
	if pages != "" {
		return pages
	}
	if dir := filepath.Dir(claimsFile); filepath.Base(dir) == ClaimsDir {
		return filepath.Dir(dir)
	}
	return ""
}

func writable(dir string) error {
	if dir == "" {
		return nil
	}
	return bench.Writable(dir)
}

// explore sets the exploration: budget, else the claims file's.
func (p *Plan) explore(budget string) error {
	if budget == "" && p.Claims.Explore != nil {
		budget, p.Explore.Seed = p.Claims.Explore.Budget, p.Claims.Explore.Seed
	}
	if budget == "" || budget == "0" {
		return nil
	}
	d, err := time.ParseDuration(budget)
	if err != nil || d < 10*time.Second {
		return fmt.Errorf("analyse: --budget: want 0 or a duration of at least 10s, got %q", budget)
	}
	p.Explore.Budget, p.Explore.Confirm, p.Explore.Parallel = d, ExploreReruns, explore.DefaultParallel
	return nil
}

// Run runs the analysis on e's servers, each sale on servers of its own, writes its
// page (under out when no pages directory was named) and says how it ended: 0 written,
// 130 interrupted (what was measured is written, marked so). ms reports whether designs
// keep their leases to the millisecond, for the exploration's timings.
func (p *Plan) Run(ctx context.Context, e *bench.Env, ms func([]string) bool, out string, stdout, stderr io.Writer) bench.Ending {
	if p.sentinel != "" {
		if err := e.Pool.Topologies(); err != nil {
			return bench.Told(bench.Complain(stderr, bench.UsageError(fmt.Errorf("analyse: deployment %s: %w", p.sentinel, err))))
		}
	}
	cfg := p.Config
	cfg.Explore.Space.Fine = cfg.Sale.Kind == results.LockSale && ms([]string{cfg.Sale.Design})
	if !e.Shared.Info.Owned {
		cfg.Parallel, cfg.Explore.Parallel = 1, 1
	}
	var n atomic.Int64
	cfg.Run = func(ctx context.Context, s results.Sale) (results.Run, error) {
		j, err := bench.JobOf(&s)
		if err != nil {
			return results.Run{}, err
		}
		return e.RunApart(ctx, j, fmt.Sprintf("{stockbench:analyse:%d}", n.Add(1)))
	}
	cfg.Explore.Run = func(ctx context.Context, s results.Sale, _ int) (results.Run, error) { return cfg.Run(ctx, s) }
	t := e.Shared.Info.Record()
	kind := string(t.Kind)
	if t.Kind == "container" && e.Shared.RestartsInPlace(ctx) {
		kind = InPlace // the analysis's own servers come from the same image
	}
	cfg.Machine = fmt.Sprintf("%d CPUs, Redis %s as a %s", runtime.NumCPU(), t.Version, kind)
	cfg.Progress = func(line string) { fmt.Fprintln(stderr, "stockbench: analyse:", line) }
	fmt.Fprintf(stderr, "stockbench: analyse %s %s: %d faults, %d draws each, up to %d sales at once\n", cfg.Claims.Title, cfg.Claims.Release, len(cfg.Cells), cfg.Runs, cfg.Parallel)
	rec := Analyse(ctx, cfg)
	for _, t := range rec.Time {
		cfg.Progress(fmt.Sprintf("time: %s %s, %d sales, %.1f at once; %s", t.Phase, t.Wall.Round(time.Second), t.Sales, t.AtOnce(), t.Spent))
	}
	dir := p.pages
	if dir == "" {
		dir = filepath.Join(out, "analyse-"+results.NewID())
	}
	if err := Write(dir, p.file, rec); err != nil {
		return bench.Told(bench.Complain(stderr, err))
	}
	fmt.Fprintf(stdout, "%s %s: %s\npage: %s\n", cfg.Claims.Title, cfg.Claims.Release, Analysis{cfg.Claims, rec}.Headline(), filepath.Join(dir, rec.Library+".md"))
	if !rec.Complete {
		return bench.Ending{Code: bench.ExitInterrupted, Why: "interrupted; the page says what was measured until then"}
	}
	return bench.Ending{Code: bench.ExitOK, Why: "the library measured against its claims and its page written"}
}
