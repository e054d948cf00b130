// Package analysis measures a library at one release against what its own docs claim:
// each fault's sale as a rate over many draws, every class judged by the claims that
// admit or forbid it, what breaks a claim shrunk and rerun, and the page that says so.
package analysis

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/designs/designfile"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Defaults of a claims file.
const (
	DefaultRuns = 20
	// MinRuns is the fewest draws a cell may take: fewer and a rate's 95% interval
	// spans most of 0 to 1.
	MinRuns = 5
	// Reruns is how often a finding's smallest sale is rerun, and then rerun again
	// without its fault (its control): the rule that confirms a finding takes at least
	// as many (Analysis.Confirmation).
	Reruns = 20
	// ExploreReruns is how often the exploration reruns each region's smallest sale, on
	// its own budget; its findings have no control of their own sale, so none of them
	// is confirmed by the rule.
	ExploreReruns = 10
)

// Claims is one library at one release as its claims file describes it: where the
// release came from, the design flags that run it, the sentences it says of itself,
// each mapped to the classes it admits or forbids under which faults, and what its
// tracker held when a finding was looked up there.
type Claims struct {
	// Library names the page (LIBRARY.md); Title is how the page calls it.
	Library  string `json:"library"`
	Title    string `json:"title"`
	Language string `json:"language"`
	// Release is the version analysed; From where that release came from (the Go
	// module proxy, a Debian package and its version).
	Release string `json:"release"`
	From    string `json:"from"`
	// Tracker is the library's public issue tracker, OWNER/REPO on GitHub.
	Tracker string `json:"tracker"`
	// Design is the command line's design flags that run the library
	// (["--lock-go", "MODULE@VERSION ARGS"], ["--queue-exec", "CMD"], ["--queue",
	// "asynq"] for a built-in); the analysis runs the one design they name.
	Design []string `json:"design"`
	// Settings set the sale's settings by name over the preset's (buyers, stock, ttl...).
	Settings map[string]string `json:"settings"`
	// Faults are the cells, one fault each, "none" for none. Default: none, every fault
	// of the default matrix of the library's kind of sale, and for a lock the faults
	// that strike one application instance of two (faults.Needs.PerApp).
	Faults []string `json:"faults"`
	// Deployments are the ways to run the library's servers its docs (or Redis's)
	// prescribe beyond the one most run (one Redis, no persistence, restarted empty),
	// each adding its own cells.
	Deployments []Deployment `json:"deployments,omitempty"`
	// Runs is how many draws each cell takes. Default DefaultRuns.
	Runs int `json:"runs"`
	// Parallel, when set, is the most sales at once, in place of --parallel's default:
	// a library whose sales mostly wait (asynq's minute-long recovery) can take more.
	Parallel int `json:"parallel,omitempty"`
	// Notes say what the analysis leaves out or sets, and why; the page prints them.
	Notes string `json:"notes,omitempty"`
	// Explore, when set, explores what the cells leave open: sizes, timings and faults
	// together, as stockbench explore.
	Explore *Explore `json:"explore"`
	Claims  []Claim  `json:"claims"`
	Lookups []Lookup `json:"lookups"`
}

// Deployment is servers run as a doc prescribes, quoted: its cells are the faults it
// changes, each a fault plan with its settings ("redis-restart:persist=aof-always", a
// delayed restart "redis-restart:for=1.5s"), so that a page and the comparison set each
// beside the same fault as most run. A deployment over several independent lock servers
// (Nodes, Redlock's) runs all its cells over them, "none" among them, each named with
// them ("redis-restart:servers=2 over 3 servers": two of the three restarted at once).
type Deployment struct {
	Name   string `json:"name"`
	Quote  string `json:"quote"`
	Source string `json:"source"`
	URL    string `json:"url,omitempty"`
	// Nodes, when set, is how many independent lock servers the design runs over in
	// this deployment's cells, as --adapter-nodes gives them: from 2 to
	// catalog.MaxNodes, for a lock adapter that takes several. Default: the design's own.
	Nodes int `json:"nodes,omitempty"`
	// Settings, when set, are the sale's settings its cells change over the claims
	// file's, by name: a library's own clock ("visibility": "5s"), each cell named with
	// them ("worker-crash with visibility=5s").
	Settings map[string]string `json:"settings,omitempty"`
	Faults   []string          `json:"faults"`
}

// check refuses a deployment no doc prescribes, or whose faults do not parse as one
// fault each with its settings (none, too, over several servers) striking no more
// servers than it has; at names it in the error.
func (d Deployment) check(at string) error {
	switch {
	case !name.MatchString(d.Name):
		return fmt.Errorf("%s.name: want lower-case letters, digits and dashes, got %q", at, d.Name)
	case strings.TrimSpace(d.Quote) == "" || d.Source == "":
		return fmt.Errorf("%s: a deployment is what a doc prescribes: quote and source are required", at)
	case len(d.Faults) == 0:
		return fmt.Errorf("%s.faults: name the faults it changes, with their settings", at)
	case d.Nodes != 0 && (d.Nodes < 2 || d.Nodes > catalog.MaxNodes):
		return fmt.Errorf("%s.nodes: from 2 to %d independent lock servers, got %d", at, catalog.MaxNodes, d.Nodes)
	}
	for n, v := range d.Settings {
		if !name.MatchString(n) || v == "" || strings.ContainsAny(v, " =") {
			return fmt.Errorf("%s.settings: want a sale's setting by name and one value, got %q: %q", at, n, v)
		}
	}
	for _, f := range d.Faults {
		p, err := faults.Parse(f)
		switch {
		case f == faults.None && d.Nodes > 1:
		case err != nil || len(p) != 1:
			return fmt.Errorf("%s.faults: %q: want one fault with its settings: %v", at, f, err)
		case p.Servers() > max(d.Nodes, 1):
			return fmt.Errorf("%s.faults: %q strikes %d lock servers; the deployment has %d", at, f, p.Servers(), max(d.Nodes, 1))
		}
	}
	return nil
}

// cell is the name of deployment d's cell for plan: plan, the lock servers it runs over
// when they are several, and the settings it changes, in the order of their names.
func (d Deployment) cell(plan string) string {
	if d.Nodes > 1 {
		plan = fmt.Sprintf("%s over %d servers", plan, d.Nodes)
	}
	if len(d.Settings) == 0 {
		return plan
	}
	return plan + " with " + d.settings()
}

// settings are d's settings as its cells' names say them: name=value, by name.
func (d Deployment) settings() string {
	var set []string
	for _, name := range slices.Sorted(maps.Keys(d.Settings)) {
		set = append(set, name+"="+d.Settings[name])
	}
	return strings.Join(set, " ")
}

// CellPlan is a cell's fault plan and the lock servers its sales run over (0 for the
// design's own), read back from its name.
func CellPlan(cell string) (plan string, nodes int) {
	cell, _, _ = strings.Cut(cell, " with ")
	plan, over, ok := strings.Cut(cell, " over ")
	if !ok {
		return cell, 0
	}
	fmt.Sscanf(over, "%d servers", &nodes)
	return plan, nodes
}

// CellSettings are the sale's settings a cell changes, as name=value, read back from
// its name (none for a cell as most run).
func CellSettings(cell string) []string {
	_, set, ok := strings.Cut(cell, " with ")
	if !ok {
		return nil
	}
	return strings.Fields(set)
}

// deploymentOf is the name of the deployment cell is one of, "" for a cell as most run.
func (c *Claims) deploymentOf(cell string) string {
	for _, d := range c.Deployments {
		for _, f := range d.Faults {
			if d.cell(f) == cell {
				return d.Name
			}
		}
	}
	return ""
}

// sentinelDeployment names the deployment of the first of cells that runs over a
// Sentinel group ("" for none): its design's own client must follow the group.
func (c *Claims) sentinelDeployment(cells []string) string {
	for _, cell := range cells {
		plan, _ := CellPlan(cell)
		if p, err := faults.Parse(plan); err == nil && p.Needs().Sentinel {
			return cmp.Or(c.deploymentOf(cell), cell)
		}
	}
	return ""
}

// Nodes is the most independent lock servers a deployment of c runs over (0 for none).
func (c *Claims) Nodes() int {
	most := 0
	for _, d := range c.Deployments {
		most = max(most, d.Nodes)
	}
	return most
}

// Explore is a claims file's exploration, as explore's flags.
type Explore struct {
	Budget string `json:"budget"`
	Seed   uint64 `json:"seed"`
}

// Claim is one thing a library says of itself, quoted, and what it admits.
type Claim struct {
	// ID names the claim on the page and in lookups.
	ID string `json:"id"`
	// Quote is the library's own words; Source the file (as shipped: the module cache,
	// the Debian package) or page, with the version; URL its public address.
	Quote  string `json:"quote"`
	Source string `json:"source"`
	URL    string `json:"url,omitempty"`
	// File is the shipped file the quote is in, where the library ships it: an absolute
	// path as its Debian package installs it, or go:MODULE@VERSION/PATH in the module
	// cache. An analysis checks the quote is there (CheckQuotes); a page or wiki the
	// library does not ship has none.
	File string `json:"file,omitempty"`
	// Faults are the cells the claim speaks to: fault names, "none", or "*" for all.
	Faults []string `json:"faults"`
	// Deployments, when set, narrow it to the cells of these deployments (their names):
	// what a doc says of servers run as it prescribes. There it speaks before the
	// claims of every deployment (see Claims.JudgeCell).
	Deployments []string `json:"deployments,omitempty"`
	// Never are the classes the claim forbids there; Admits those it allows (an
	// expiring lock admits OVERLAP when its holder outlives it, and the oversold stock
	// that follows). Either may name TOLD-HELD, the library's own "you hold it" to a
	// holder whose lock the next one had (see Names): what a claim on the library's
	// answer to "do I still hold it?" forbids.
	Never  []string `json:"never"`
	Admits []string `json:"admits"`
	// Why says how the quote maps to the classes, where that is not plain.
	Why string `json:"why,omitempty"`
}

// Lookup is what the library's tracker held for a finding: Known, OWNER/REPO#N, when
// an issue reports it, or empty when none was found on Searched (a date), searching
// Query.
type Lookup struct {
	Claim    string `json:"claim"`
	Class    string `json:"class"`
	Known    string `json:"known,omitempty"`
	Title    string `json:"title,omitempty"`
	Searched string `json:"searched"`
	Query    string `json:"query"`
}

// HeldTo are the classes every library is held to where it says nothing of them: no
// broken lock, no lost or oversold stock.
var HeldTo = []oracle.Class{oracle.ClassBroken, oracle.ClassLost, oracle.ClassOversold}

// name is a page's name: lower case, digits and dashes.
var name = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Read reads and checks a claims file strictly: an unknown field, fault or class is an
// error naming where.
func Read(file string) (*Claims, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c Claims
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", file, designfile.JSONError(b, err))
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &c, nil
}

// ReadDir reads every claims file (*.json) of dir, by name.
func ReadDir(dir string) ([]*Claims, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, errors.Join(err, fmt.Errorf("analyse: no claims file in %s", dir))
	}
	var all []*Claims
	for _, f := range files {
		c, err := Read(f)
		if err != nil {
			return nil, err
		}
		all = append(all, c)
	}
	return all, nil
}

// check refuses what the analysis cannot use; the kind of sale is known only once the
// design is, so Kinds checks the faults against it.
func (c *Claims) check() error {
	switch {
	case !name.MatchString(c.Library):
		return fmt.Errorf("library: want a page name of lower-case letters, digits and dashes, got %q", c.Library)
	case c.Title == "" || c.Language == "" || c.Release == "" || c.From == "":
		return errors.New("title, language, release and from: each is required, for the page")
	case len(c.Design) == 0:
		return errors.New(`design: name the design flags that run the library, as ["--lock-go", "MODULE@VERSION"]`)
	case c.Runs != 0 && (c.Runs < MinRuns || c.Runs > 1000):
		return fmt.Errorf("runs: from %d to 1000, got %d", MinRuns, c.Runs)
	case c.Parallel < 0 || c.Parallel > 64:
		return fmt.Errorf("parallel: from 1 to 64, got %d", c.Parallel)
	case len(c.Claims) == 0:
		return errors.New("claims: quote at least one thing the library says of itself")
	}
	if c.Tracker != "" && strings.Count(c.Tracker, "/") != 1 {
		return fmt.Errorf("tracker: want OWNER/REPO, got %q", c.Tracker)
	}
	if c.Explore != nil {
		if d, err := time.ParseDuration(c.Explore.Budget); err != nil || d < 10*time.Second {
			return fmt.Errorf("explore.budget: want a duration of at least 10s, got %q", c.Explore.Budget)
		}
	}
	ids := map[string]bool{}
	for i, cl := range c.Claims {
		at := fmt.Sprintf("claims[%d]", i)
		switch {
		case !name.MatchString(cl.ID) || ids[cl.ID]:
			return fmt.Errorf("%s.id: want a new name of lower-case letters, digits and dashes, got %q", at, cl.ID)
		case strings.TrimSpace(cl.Quote) == "" || cl.Source == "":
			return fmt.Errorf("%s: a claim is quoted: quote and source are required", at)
		case len(cl.Faults) == 0:
			return fmt.Errorf(`%s.faults: name the faults it speaks to, or "*"`, at)
		case len(cl.Never)+len(cl.Admits) == 0:
			return fmt.Errorf("%s: map the quote to what it forbids (never) or admits (admits)", at)
		case cl.File != "" && !filepath.IsAbs(cl.File) && !strings.HasPrefix(cl.File, "go:"):
			return fmt.Errorf("%s.file: want an absolute path or go:MODULE@VERSION/PATH, got %q", at, cl.File)
		}
		ids[cl.ID] = true
		for _, class := range append(slices.Clone(cl.Never), cl.Admits...) {
			if !slices.Contains(Names(), oracle.Class(class)) {
				return fmt.Errorf("%s: unknown class %q (classes: %s)", at, class, classNames())
			}
		}
		for _, f := range cl.Faults {
			if f != "*" && f != faults.None {
				if _, ok := faults.Lookup(faults.Kind(f)); !ok {
					return fmt.Errorf("%s.faults: unknown fault %q", at, f)
				}
			}
		}
		for _, d := range cl.Deployments {
			if !slices.ContainsFunc(c.Deployments, func(x Deployment) bool { return x.Name == d }) {
				return fmt.Errorf("%s.deployments: no deployment %q", at, d)
			}
		}
	}
	for _, f := range c.Faults {
		if _, ok := faults.Lookup(faults.Kind(f)); !ok && f != faults.None {
			return fmt.Errorf("faults: unknown fault %q", f)
		}
	}
	for i, d := range c.Deployments {
		if err := d.check(fmt.Sprintf("deployments[%d]", i)); err != nil {
			return err
		}
	}
	for i, l := range c.Lookups {
		if !ids[l.Claim] {
			return fmt.Errorf("lookups[%d].claim: no claim %q", i, l.Claim)
		}
		if !slices.Contains(Names(), oracle.Class(l.Class)) {
			return fmt.Errorf("lookups[%d]: unknown class %q (classes: %s)", i, l.Class, classNames())
		}
		if _, err := time.Parse(time.DateOnly, l.Searched); err != nil || l.Query == "" {
			return fmt.Errorf("lookups[%d]: searched (YYYY-MM-DD) and query are required", i)
		}
	}
	return nil
}

// Cells are the faults the analysis runs, checked against the library's kind of sale.
func (c *Claims) Cells(kind results.SaleKind) ([]string, error) {
	a := faults.Locks
	if kind == results.QueueSale {
		a = faults.Queues
	}
	ofKind := faults.Kinds(a)
	cells := c.Faults
	if len(cells) == 0 {
		cells = []string{faults.None}
		for _, k := range faults.MatrixKinds(a) {
			cells = append(cells, string(k))
		}
		// And the faults that strike one application instance while the others go on,
		// the case the literature on Redis locks turns on.
		for _, k := range ofKind {
			if s, _ := faults.Lookup(k); s.Needs.PerApp {
				cells = append(cells, string(k))
			}
		}
	}
	// A deployment may run the faults on a topology of their own (a Sentinel group's),
	// and a claim speak to them; the cells as most run are not on one.
	deployed := append(slices.Clone(ofKind), faults.InfraKinds(a)...)
	for _, cl := range c.Claims {
		for _, f := range cl.Faults {
			if f != "*" && f != faults.None && !slices.Contains(deployed, faults.Kind(f)) {
				return nil, fmt.Errorf("claim %s: %s is not a fault of %s sales", cl.ID, f, kind)
			}
		}
	}
	for _, f := range cells {
		if f != faults.None && !slices.Contains(ofKind, faults.Kind(f)) {
			return nil, fmt.Errorf("faults: %s is not a fault of %s sales", f, kind)
		}
	}
	for _, d := range c.Deployments {
		if d.Nodes > 1 && kind == results.QueueSale {
			return nil, fmt.Errorf("deployment %s: nodes: a queue sale runs on one server", d.Name)
		}
		for _, f := range d.Faults {
			if k := FaultsOf(f)[0]; k != faults.None && !slices.Contains(deployed, faults.Kind(k)) {
				return nil, fmt.Errorf("deployment %s: %s is not a fault of %s sales", d.Name, k, kind)
			}
			cells = append(cells, d.cell(f))
		}
	}
	return cells, nil
}

func classNames() string { return joinClasses(Names()) }
