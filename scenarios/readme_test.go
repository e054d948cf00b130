package scenarios_test

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// The README is what a newcomer reads first: it must stay short, its figures must be the
// code's, and its links must lead somewhere. These tests hold it to that.

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeShort: a newcomer reads the README in ten minutes; the rest is in docs/.
func TestReadmeShort(t *testing.T) {
	if n := strings.Count(readDoc(t, "README.md"), "\n"); n > 300 {
		t.Errorf("README.md is %d lines; keep it within 300 and move the rest to docs/", n)
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	fenced  = regexp.MustCompile("(?s)```.*?```")
)

// anchor is GitHub's id for a heading: lower case, punctuation but hyphens dropped,
// spaces as hyphens.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocLinks: every relative link in the README and docs/ names a file that exists
// and, with a #fragment, a heading in it.
func TestDocLinks(t *testing.T) {
	pages, _ := filepath.Glob("../docs/*.md")
	pages = append(pages, "../README.md", "../adapters/PROTOCOL.md")
	for _, page := range pages {
		rel, _ := filepath.Rel("..", page)
		text := fenced.ReplaceAllString(readDoc(t, rel), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target, frag := m[1], m[2]
			if strings.Contains(target, "://") {
				continue
			}
			path := page
			if target != "" {
				path = filepath.Join(filepath.Dir(page), target)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s links %s: %v", rel, m[0], err)
				continue
			}
			if frag == "" {
				continue
			}
			var ids []string
			for _, h := range heading.FindAllStringSubmatch(fenced.ReplaceAllString(string(b), ""), -1) {
				ids = append(ids, anchor(h[1]))
			}
			if !slices.Contains(ids, frag[1:]) {
				t.Errorf("%s links %s: no such heading (have %v)", rel, m[0], ids)
			}
		}
	}
}

// matrix reads a verdict matrix as the command prints it, from the README: the row's
// design, the column's fault, the cell's class.
func matrix(t *testing.T, readme, title string) map[[2]string]oracle.Class {
	t.Helper()
	lines := strings.Split(readme, "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, title) })
	if at < 0 {
		t.Fatalf("README.md shows no matrix %q", title)
	}
	head := lines[at]
	type col struct {
		at    int
		fault string
	}
	var cols []col
	for _, m := range regexp.MustCompile(`\S+`).FindAllStringIndex(head[len(title):], -1) {
		cols = append(cols, col{len(title) + m[0], head[len(title)+m[0] : len(title)+m[1]]})
	}
	cells := map[[2]string]oracle.Class{}
	for _, l := range lines[at+1:] {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "```") {
			break
		}
		design := strings.Fields(l)[0]
		for i, c := range cols {
			end := len(l)
			if i+1 < len(cols) {
				end = min(cols[i+1].at, len(l))
			}
			cell := strings.Fields(l[c.at:end])
			if len(cell) == 0 {
				t.Fatalf("%s: %s has no cell under %s", title, design, c.fault)
			}
			cells[[2]string{design, c.fault}] = oracle.Class(strings.TrimSuffix(cell[0], "!"))
		}
	}
	if len(cells) == 0 {
		t.Fatalf("README.md: matrix %q has no rows", title)
	}
	return cells
}

func plan(t *testing.T, fault string) faults.Plan {
	if fault == "none" {
		return nil
	}
	p, err := faults.Parse(fault)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadmeMatrices: every cell of the matrices the README shows is a class its design
// documents under that fault (where it documents one), as the tests assert on Redis: the
// README cannot show a verdict the code no longer earns.
func TestReadmeMatrices(t *testing.T) {
	readme := readDoc(t, "README.md")
	check := func(title string, want func(design string) faults.Verdicts) {
		asserted := 0
		for k, got := range matrix(t, readme, title) {
			classes, ok := want(k[0]).For(plan(t, k[1]))
			if !ok {
				continue
			}
			asserted++
			if !slices.Contains(classes, got) {
				t.Errorf("README.md, %s: %s under %s reads %s; it documents %v", title, k[0], k[1], got, classes)
			}
		}
		if asserted == 0 {
			t.Errorf("README.md, %s: no cell is a documented verdict", title)
		}
	}
	check(`fault-sale: DESIGN \ FAULT`, func(d string) faults.Verdicts {
		impl, err := lockimpl.Lookup(d)
		if err != nil {
			t.Errorf("README.md: %v", err)
		}
		return impl.Documented
	})
	for _, f := range scenarios.Fulfils {
		check(fmt.Sprintf(`queue-sale (%s fulfil): DESIGN \ FAULT`, f), func(d string) faults.Verdicts {
			impl, err := queueimpl.Lookup(d)
			if err != nil {
				t.Errorf("README.md: %v", err)
			}
			return impl.Documented.For(f == scenarios.Idempotent)
		})
	}
}

// TestReadmePresets: the sizes the README gives for the matrix's sales are the presets'.
func TestReadmePresets(t *testing.T) {
	readme := strings.Join(strings.Fields(readDoc(t, "README.md")), " ")
	lock, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	queue, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) string {
		if d >= time.Second && d%time.Second == 0 {
			return fmt.Sprintf("%d s", d/time.Second)
		}
		return fmt.Sprintf("%d ms", d/time.Millisecond)
	}
	think := lock.Think.Draw(0, 0)
	for _, want := range []string{
		fmt.Sprintf("%d buyers race for %d units", lock.Buyers, lock.Stock),
		fmt.Sprintf("work %s and write it back, the TTL is %s", ms(think), ms(lock.TTL)),
		fmt.Sprintf("%d buyers enqueue an order each for %d units, %d workers take them, work %s", queue.Buyers, queue.Stock, queue.Workers, ms(queue.Work)),
		fmt.Sprintf("the visibility timeout %s", ms(queue.Visibility)),
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md should say %q, as the preset is", want)
		}
	}
}

// TestPerformanceHeadline: docs/performance.md's headline table is the committed
// baseline's headline, row for row: a refreshed baseline (make baseline) refreshes the
// page, or this fails.
func TestPerformanceHeadline(t *testing.T) {
	doc := readDoc(t, "docs/performance.md")
	base, err := results.Read(filepath.Join("..", "baseline", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, r := range base.Runs {
		if r.Scenario != "headline" {
			continue
		}
		rows++
		if r.DamageRate == nil || r.Repeats == nil {
			t.Fatalf("the baseline's headline %s has no damage rate or reruns: make baseline makes both", r.Impl)
		}
		row := fmt.Sprintf("| %s | %s | %d/%d | %s | %s | %s (%s-%s) | %s |", r.Impl, r.Verdict.Cell(),
			r.Oracle.Bought, r.Params.Stock, thousands(r.SalesPerSec), p99(r.Latency["purchase"].P99Us),
			thousands(r.DamageRate.Per10k), thousands(r.DamageRate.Low), thousands(r.DamageRate.High), reruns(r.Repeats))
		if !strings.Contains(doc, row+"\n") {
			t.Errorf("docs/performance.md lacks the baseline's row\n%s", row)
		}
	}
	if rows == 0 {
		t.Fatal("the baseline has no headline sale")
	}
	table := regexp.MustCompile(`(?m)^\| [a-z-]+ \| [A-Z-]+.*\| [A-Z-]+ \d+(, [A-Z-]+ \d+)* \|$`)
	if n := len(table.FindAllString(doc, -1)); n != rows {
		t.Errorf("docs/performance.md shows %d headline rows; the baseline has %d", n, rows)
	}
}

// thousands is x rounded, with commas: 49,202.
func thousands(x float64) string {
	s := fmt.Sprint(int64(math.Round(x)))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// p99 is a latency as the table writes it: 20 ms, 1.31 s.
func p99(us int64) string {
	if us >= 1e6 {
		return fmt.Sprintf("%.2f s", float64(us)/1e6)
	}
	return fmt.Sprintf("%.0f ms", float64(us)/1e3)
}

// reruns is the classes reruns earned, the most frequent first: LOST 6, STUCK 4.
func reruns(r *results.Repeats) string {
	classes := slices.Collect(maps.Keys(r.Classes))
	slices.SortFunc(classes, func(a, b oracle.Class) int {
		return cmp.Or(cmp.Compare(r.Classes[b], r.Classes[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = fmt.Sprintf("%s %d", c, r.Classes[c])
	}
	return strings.Join(parts, ", ")
}
