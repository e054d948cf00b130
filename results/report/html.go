package report

import (
	"bytes"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

//go:embed templates/report.html
var templates embed.FS

var reportTemplate = template.Must(template.ParseFS(templates, "templates/report.html"))

// Source is one results file a report shows; a report compares several side by side.
type Source struct {
	// Name labels the source's runs when there are several (the run directory's name).
	Name string
	File *results.File
}

// htmlCell is a table cell: its text, CSS class and tooltip.
type htmlCell struct {
	Text, Class, Title string
	// Href, when set, links the cell: to porcupine's drawing of a violation.
	Href     string
	Surprise bool
}

type htmlMatrix struct {
	Scenario string
	// Faults are the column heads, with a break allowed after each ':' and '+' so that
	// a long plan wraps at its settings rather than widening the matrix.
	Faults []template.HTML
	Rows   []struct {
		Name  string
		Cells []htmlCell
	}
}

type htmlDesign struct {
	Name, Anchor string
	Rows         [][]htmlCell
}

type htmlFigure struct {
	Name, Title, Reading string
	PNG                  string // base64
	// Files are the plot's files under plots/, each linked under the image.
	Files []htmlLink
	// Note, when set, stands in for the image: why there is none.
	Note string
}

type htmlLink struct{ Text, Href string }

type htmlSection struct {
	Name    string
	Figures []htmlFigure
}

type htmlSource struct {
	Name, ID, Started, Finished, Args, Target, Host, Incomplete string
	// Checks is the run file's outcome: its broken thresholds, or that all held.
	Checks       []string
	ChecksPassed int
}

type htmlPage struct {
	Title     string
	Sources   []htmlSource
	Surprises []string
	// Draws are the rates of the sales run with several seeds (DrawLines).
	Draws                []string
	Matrices             []htmlMatrix
	MatrixLegend, Legend string
	// Sheets are the queues' delivery guarantees, with their legend.
	Sheets      []htmlMatrix
	SheetLegend string
	Columns     []string
	Designs     []htmlDesign
	Sections    []htmlSection
	// Violations are the timelines of each run's worst violations.
	Violations []htmlViolations
	// Glance is the opening: every class earned, what it means and who earned it where.
	Glance []htmlGlance
	// Pareto is the Pareto view, shown after the verdicts.
	Pareto *htmlFigure
	// Exploration, for an exploration's record, is its answer, which the page opens on.
	Exploration *htmlExploration
}

type htmlGlance struct {
	GlanceLine
	// CSS is the class's cell colour, as the matrices use it.
	CSS string
}

// designColumns are the per-design tables' columns: the terminal table's, less the
// design, with fairness and the worst wait.
var designColumns = append(slices.DeleteFunc(slices.Clone(columns), func(c column) bool { return c.head == "DESIGN" }),
	column{"JAIN", func(r *results.Run) string {
		if r.Fairness == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f", r.Fairness.Jain)
	}},
	column{"WORST WAIT", func(r *results.Run) string {
		if r.Fairness == nil {
			return "-"
		}
		return results.FormatMicros(r.Fairness.WorstUs)
	}},
	column{"TRIES", func(r *results.Run) string {
		if r.Tries == nil {
			return "-"
		}
		return fmt.Sprintf("%.1f / %d", r.Tries.Mean, r.Tries.Max)
	}},
	column{"REDIS CPU/SALE", func(r *results.Run) string {
		if r.Commands == nil || r.Commands.CPUPerSaleUs == 0 {
			return "-"
		}
		return results.FormatDuration(time.Duration(r.Commands.CPUPerSaleUs * float64(time.Microsecond)))
	}},
	column{"LOST LOCKS", func(r *results.Run) string { return r.LostLocks.String() }},
	column{"ERRORS", func(r *results.Run) string { return fmt.Sprint(r.Errors) }},
)

// WriteHTML writes report.html into dir: one self-contained page, every plot embedded,
// readable offline. figs must already be drawn (SaveAll).
func WriteHTML(dir string, sources []Source, runs []results.Run, figs []Figure) error {
	page := htmlPage{MatrixLegend: results.MatrixLegend, Legend: Legend + " JAIN = Jain's fairness index of the waits (1 = all alike)." +
		" TRIES = tries for the lock (or to buy) per buyer that tried: mean / most." +
		" REDIS CPU/SALE = the servers' CPU time (INFO cpu delta) per confirmed order." +
		" LOST LOCKS = holds that had lost their lock by their release (the release found it gone, or a lease that does not renew outlasted its TTL), each put down to what took most of its time.",
		Surprises: results.Surprises(runs), Draws: DrawLines(runs)}
	var names []string
	for _, s := range sources {
		names = append(names, s.File.ID)
		page.Sources = append(page.Sources, sourceOf(s))
	}
	page.Title = strings.Join(names, " vs ")
	if x := sources[0].File.Exploration; len(sources) == 1 && x != nil {
		page.Exploration = explorationOf(x)
		page.Title = "explore: " + strings.Join(x.Designs, " against ")
	}
	for _, m := range results.Matrices(runs) {
		page.Matrices = append(page.Matrices, matrixOf(m))
	}
	for _, sh := range Sheets(runs) {
		page.Sheets = append(page.Sheets, sheetOf(sh))
	}
	if len(page.Sheets) > 0 {
		page.SheetLegend = SheetLegend()
	}
	for _, c := range designColumns {
		page.Columns = append(page.Columns, c.head)
	}
	page.Designs = designsOf(runs)
	for _, g := range Glance(runs) {
		page.Glance = append(page.Glance, htmlGlance{g, cssClass(g.Class)})
	}
	page.Violations = violationsOf(runs)
	for _, f := range figs {
		hf := htmlFigure{Name: f.Name, Title: f.Title, Note: f.Note, Reading: f.Reading}
		if f.Note == "" {
			hf.PNG = base64.StdEncoding.EncodeToString(f.PNG)
		}
		for _, file := range f.Files {
			hf.Files = append(hf.Files, htmlLink{strings.ToUpper(strings.TrimPrefix(filepath.Ext(file), ".")), filepath.ToSlash(file)})
		}
		if f.Section == ParetoSection {
			page.Pareto = &hf
			continue
		}
		i := slices.IndexFunc(page.Sections, func(s htmlSection) bool { return s.Name == f.Section })
		if i < 0 {
			page.Sections = append(page.Sections, htmlSection{Name: f.Section})
			i = len(page.Sections) - 1
		}
		page.Sections[i].Figures = append(page.Sections[i].Figures, hf)
	}
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, page); err != nil {
		return fmt.Errorf("report: report: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "report.html"), b.Bytes(), 0o644)
}

// checksOf sets the outcome of a check on h.
func checksOf(h *htmlSource, checks []results.Check) {
	h.Checks = results.Broken(checks)
	if len(h.Checks) == 0 {
		h.ChecksPassed = len(checks)
	}
}

func sourceOf(s Source) htmlSource {
	f := s.File
	hs := htmlSource{Name: s.Name, ID: f.ID, Args: strings.Join(f.Args, " "), Target: f.Target.String(),
		Host:    fmt.Sprintf("%d CPUs, %s/%s, %s", f.Host.CPUs, f.Host.OS, f.Host.Arch, f.Host.GoVersion),
		Started: f.StartedAt.Format(time.RFC3339), Finished: f.FinishedAt.Format(time.RFC3339)}
	if f.Host.Procs > 0 && f.Host.Procs < f.Host.CPUs {
		hs.Host = fmt.Sprintf("%d CPUs (buyers on %d), %s/%s, %s", f.Host.CPUs, f.Host.Procs, f.Host.OS, f.Host.Arch, f.Host.GoVersion)
	}
	hs.Host += shards(f) + served(f)
	if !f.Complete {
		hs.Incomplete = f.Incomplete
	}
	checksOf(&hs, f.Checks)
	return hs
}

// headsOf are fault plans as column heads, with a break allowed after each ':' and '+'.
func headsOf(plans []string) []template.HTML {
	heads := make([]template.HTML, len(plans))
	for i, f := range plans {
		h := template.HTMLEscapeString(f)
		heads[i] = template.HTML(strings.NewReplacer(":", ":<wbr>", "+", "+<wbr>").Replace(h))
	}
	return heads
}

func matrixOf(m results.Matrix) htmlMatrix {
	hm := htmlMatrix{Scenario: m.Scenario, Faults: headsOf(m.Faults)}
	for _, l := range m.Locks {
		row := struct {
			Name  string
			Cells []htmlCell
		}{Name: l}
		for _, f := range m.Faults {
			c := htmlCell{Text: m.Cell(l, f), Class: "none"}
			if r := m.Run(l, f); r != nil {
				c.Class = classOf(r)
				c.Title = strings.Join(r.Verdict.Findings, "; ")
				c.Surprise = r.AsExpected != nil && !*r.AsExpected
				c.Href = evidenceOf(r)
			}
			row.Cells = append(row.Cells, c)
		}
		hm.Rows = append(hm.Rows, row)
	}
	return hm
}

// sheetOf is a guarantee sheet as the page's tables show it, each cell coloured as its
// verdict is.
func sheetOf(sh Sheet) htmlMatrix {
	hm := htmlMatrix{Scenario: sh.Scenario, Faults: headsOf(sh.Faults)}
	for _, row := range sh.Rows {
		r := struct {
			Name  string
			Cells []htmlCell
		}{Name: row.Design}
		for _, c := range row.Cells {
			hc := htmlCell{Text: c.Text(), Class: "none", Title: c.Guarantee.Describe()}
			if c.Run != nil {
				hc.Class = classOf(c.Run)
			}
			r.Cells = append(r.Cells, hc)
		}
		hm.Rows = append(hm.Rows, r)
	}
	return hm
}

// evidenceOf is where a run's cell links: porcupine's drawing of a history that could not
// be linearized, else the timelines of its violations, else nowhere.
func evidenceOf(r *results.Run) string {
	if f := violationFile(r); f != "" {
		return f
	}
	if len(r.Oracle.Violations) > 0 {
		return "#" + violationAnchor(r)
	}
	return ""
}

// classOf is the run's verdict class as a CSS class name part.
func classOf(r *results.Run) string { return cssClass(classOrUnknown(r)) }

// cssClass is a verdict class as a CSS class name part.
func cssClass(c oracle.Class) string { return strings.ReplaceAll(string(c), "-", "") }

func designsOf(runs []results.Run) []htmlDesign {
	var ds []htmlDesign
	for i := range runs {
		r := &runs[i]
		k := slices.IndexFunc(ds, func(d htmlDesign) bool { return d.Name == r.Label() })
		if k < 0 {
			ds = append(ds, htmlDesign{Name: r.Label(), Anchor: fileSafe(r.Label())})
			k = len(ds) - 1
		}
		row := make([]htmlCell, len(designColumns))
		for j, c := range designColumns {
			row[j] = htmlCell{Text: c.cell(r)}
		}
		row[0].Class, row[2].Class = "name", "v-"+classOf(r)
		row[2].Text, row[2].Title, row[2].Href = r.Verdict.Cell(), strings.Join(r.Verdict.Findings, "; "), evidenceOf(r)
		if !r.Complete {
			row[2].Text += " (incomplete)"
		}
		ds[k].Rows = append(ds[k].Rows, row)
	}
	return ds
}

// shards says, for results merged from a sharded sale's shards, how many load generators
// ran it (each shard's host is the first shard's kind: the Job's pods) and how late the
// latest started; "" for a run of one process.
// served states how the process adapters of f served their buyers, when any ran: the
// model a reader needs before comparing an adapter's speed with a built-in design's.
func served(f *results.File) string {
	var pools []int
	for _, r := range f.Runs {
		if p := r.Params.Pool; p > 0 && !slices.Contains(pools, p) {
			pools = append(pools, p)
		}
	}
	if len(pools) == 0 {
		return ""
	}
	slices.Sort(pools)
	n := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(pools)), " or "), "[]")
	procs := "processes"
	if len(pools) == 1 && pools[0] == 1 {
		procs = "process"
	}
	return fmt.Sprintf("; process adapters: a pool of %s %s per instance serves as many buyers at once, "+
		"the others waiting in line without touching Redis, as requests wait for a PHP-FPM worker (--serve to change)", n, procs)
}

func shards(f *results.File) string {
	for _, r := range f.Runs {
		if s := r.Shard; s != nil && s.Merged {
			return fmt.Sprintf(" each, in %d shards merged (the latest started %s after the common start)", s.Count, s.Late.Round(time.Microsecond))
		}
	}
	return ""
}
