package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg/draw"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// sampleFile is a results file with two runs of one scenario.
func sampleFile(t *testing.T) *results.File {
	t.Helper()
	var runs []results.Run
	for _, impl := range []string{"lua", "set-nx-ex"} {
		r := results.NewRecorder(1)
		for i := range 500 {
			r.Record(0, results.Purchase, time.Duration(100+i*10)*time.Microsecond)
		}
		l, err := results.Summarize(r.Histogram(results.Purchase))
		if err != nil {
			t.Fatal(err)
		}
		rep := oracle.Report{Bought: 10, InitialStock: 10}
		runs = append(runs, results.Run{Scenario: "flash-sale", Impl: impl, Complete: true, Verdict: rep.Outcome(),
			Oracle: rep, Latency: map[string]results.Latency{"purchase": l}})
	}
	return &results.File{SchemaVersion: results.SchemaVersion, ID: "test", Complete: false, Incomplete: "interrupted", Runs: runs}
}

func TestOutputWrite(t *testing.T) {
	out, err := results.Create(t.TempDir(), "run1")
	if err != nil {
		t.Fatal(err)
	}
	f := sampleFile(t)
	if err := out.Progress(f); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), out, f); err != nil {
		t.Fatal(err)
	}
	back, err := results.Read(filepath.Join(out.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if back.Complete || back.Incomplete != "interrupted" || len(back.Runs) != 2 {
		t.Errorf("round trip lost the incomplete mark or runs: %+v", back)
	}
	if exp, got := "SAFE", back.Verdicts["flash-sale"]["set-nx-ex"]["none"]; exp != got {
		t.Errorf("verdicts matrix: want %q, got %q in %v", exp, got, back.Verdicts)
	}
	summary, _ := os.ReadFile(filepath.Join(out.Dir, "summary.md"))
	for _, want := range []string{"**Incomplete**: interrupted", "| flash-sale | set-nx-ex | none | SAFE |", "`report.html`"} {
		if !bytes.Contains(summary, []byte(want)) {
			t.Errorf("summary.md lacks %q:\n%s", want, summary)
		}
	}
	for _, name := range []string{"report.html", "plots/latency-flash-sale.png", "plots/fairness-flash-sale.png"} {
		if st, err := os.Stat(filepath.Join(out.Dir, name)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: missing or empty (%v)", name, err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(out.Dir, "report.html"))
	for _, want := range []string{"<b>Incomplete</b>", `class="v-SAFE`, "data:image/png;base64,", `href="plots/latency-flash-sale.png"`} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	pf, err := os.Open(filepath.Join(out.Dir, "plots", "latency-flash-sale.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatalf("plot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
		t.Errorf("plot is %v, want a readable size", b)
	}
	if _, err := results.Create(filepath.Dir(out.Dir), "run1"); err == nil {
		t.Error("Create must refuse an existing run directory")
	}
}

// TestUntimedLatency: a run whose purchases were all left out of the latencies (all in
// the warm-up) prints "-" where a quantile would be, not 0µs.
func TestUntimedLatency(t *testing.T) {
	timed := results.Latency{Count: 3, P50Us: 850, P99Us: 1234, P999Us: 1234}
	for _, tt := range []struct {
		name string
		run  results.Run
		want string
	}{
		{"timed", results.Run{Latency: map[string]results.Latency{results.Purchase.String(): timed}}, "850µs"},
		{"untimed", results.Run{Latency: map[string]results.Latency{}}, "-"},
	} {
		if got := mainQuantile(&tt.run, func(l results.Latency) int64 { return l.P50Us }); got != tt.want {
			t.Errorf("%s: p50 printed %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestDesignColumns: a design's own table repeats every column of the terminal table but
// the design, and adds fairness and errors.
func TestDesignColumns(t *testing.T) {
	var heads []string
	for _, c := range designColumns {
		heads = append(heads, c.head)
	}
	if slices.Contains(heads, "DESIGN") || len(heads) != len(columns)-1+6 {
		t.Errorf("design table columns %v", heads)
	}
	for _, want := range []string{"SCENARIO", "FAULTS", "VERDICT", "P99", "JAIN", "WORST WAIT", "TRIES", "REDIS CPU/SALE", "LOST LOCKS", "ERRORS"} {
		if !slices.Contains(heads, want) {
			t.Errorf("design table lacks %s: %v", want, heads)
		}
	}
}

// TestLegendsBeside: the plots of one line per design carry their legend beside the
// plot, not inside it over the curves, and the SVG shows every design's name.
func TestLegendsBeside(t *testing.T) {
	figs := Figures(sampleFile(t).Runs)
	for _, f := range figs {
		if !strings.HasPrefix(f.Name, "latency-") && !strings.HasPrefix(f.Name, "fairness-") {
			continue
		}
		if f.legend == nil || f.plot.Legend.Rectangle(draw.Canvas{}).Size().Y != 0 {
			t.Errorf("%s: the legend is not beside the plot", f.Name)
			continue
		}
		svg, err := f.render("svg")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"lua", "set-nx-ex"} {
			if !bytes.Contains(svg, []byte(">"+name)) {
				t.Errorf("%s.svg does not name %s", f.Name, name)
			}
		}
	}
}

// TestPlotsLayout: a run directory holds report.html, summary.md and results.json at its
// top and the plot files under plots/, as --plots asks; every link of report.html and
// every file summary.md names resolves; report.html embeds every plot whatever --plots
// says; and a report rebuilt in a directory of the older layout (plots at the top)
// leaves one copy of each, under plots/.
func TestPlotsLayout(t *testing.T) {
	for _, tt := range []struct {
		plots Plots
		want  []string // files of the latency plot
	}{
		{"", []string{"latency-flash-sale.png"}},
		{PlotsSVG, []string{"latency-flash-sale.svg"}},
		{PlotsBoth, []string{"latency-flash-sale.png", "latency-flash-sale.svg"}},
		{PlotsNone, nil},
	} {
		t.Run(string(tt.plots), func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "latency-flash-sale.png"), []byte("an older report's"), 0o644)
			os.WriteFile(filepath.Join(dir, "latency-flash-sale.svg"), []byte("an older report's"), 0o644)
			f := sampleFile(t)
			f.Plots = string(tt.plots)
			if err := results.WriteFile(filepath.Join(dir, "results.json"), f); err != nil {
				t.Fatal(err)
			}
			if err := Report(context.Background(), dir, []Source{{File: f}}); err != nil {
				t.Fatal(err)
			}
			top, _ := filepath.Glob(filepath.Join(dir, "*"))
			for _, p := range top {
				if b := filepath.Base(p); b != "report.html" && b != "summary.md" && b != "results.json" && b != PlotsDir {
					t.Errorf("%s at the top of the run directory", b)
				}
			}
			got, _ := filepath.Glob(filepath.Join(dir, PlotsDir, "latency-flash-sale.*"))
			if len(got) != len(tt.want) {
				t.Errorf("latency plot files %v, want %v", got, tt.want)
			}
			html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
			if n, want := bytes.Count(html, []byte("data:image/png;base64,")), bytes.Count(html, []byte("<figure><img")); n == 0 || n != want {
				t.Errorf("%d plots embedded of %d figures", n, want)
			}
			summary, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
			links := regexp.MustCompile(`href="([^"#][^"]*)"`).FindAllSubmatch(html, -1)
			links = append(links, regexp.MustCompile("`((?:plots/)?[a-z0-9.-]+\\.(?:png|svg|html|json|md))`").FindAllSubmatch(summary, -1)...)
			if len(links) < 2 {
				t.Errorf("only %d links found in report.html and summary.md", len(links))
			}
			for _, l := range links {
				if _, err := os.Stat(filepath.Join(dir, string(l[1]))); err != nil {
					t.Errorf("a link to %s, which is not there", l[1])
				}
			}
			if tt.plots != PlotsNone && !bytes.Contains(summary, []byte("in `plots/`")) {
				t.Errorf("summary.md does not say where the plots are:\n%s", summary)
			}
		})
	}
}
