package analysis

import (
	"strings"
	"testing"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

func TestAccord(t *testing.T) {
	an := Analysis{Claims: lockClaims, Record: &Record{Kind: results.LockSale}}
	unstruck := draws(20, 0, oracle.ClassSafe)
	for i := range unstruck {
		unstruck[i].Unstruck = true
	}
	tests := []struct {
		name  string
		cell  Cell
		want  Accord
		words string
	}{
		{"nothing seen", Cell{Fault: "none", Draws: draws(20, 0, oracle.ClassSafe)}, AsDocumented, "SAFE 20/20 (84%-100%)"},
		{"a class a claim forbids", Cell{Fault: "none", Draws: draws(20, 3, oracle.ClassOversold)}, Contradicts, "OVERSOLD 3/20 (5%-36%)"},
		{"admitted, however often", Cell{Fault: "client-pause", Draws: draws(20, 20, oracle.ClassOversold)}, AsDocumented, "OVERSOLD 20/20 (84%-100%)"},
		// Under client-pause, LOCK-BROKEN (forbidden) in 2 draws outranks OVERSOLD
		// (admitted) in all 20: a contradiction is one however rare.
		{"forbidden beside admitted", Cell{Fault: "client-pause", Draws: append(draws(18, 18, oracle.ClassOversold), draws(2, 2, oracle.ClassOversold, "LOCK-BROKEN")...)},
			Contradicts, "LOCK-BROKEN 2/20 (3%-30%)"},
		{"silent, and held to it", Cell{Fault: "evict", Draws: draws(20, 7, oracle.ClassLost)}, Undocumented, "LOST 7/20 (18%-57%)"},
		{"silent, and nobody judges it", Cell{Fault: "evict", Draws: draws(20, 5, oracle.ClassStuck)}, AsDocumented, "STUCK 5/20 (11%-47%)"},
		{"the fault never struck", Cell{Fault: "evict", Draws: unstruck}, Unexercised, ""},
		// Of two contradictions the more severe decides, however rarer.
		{"the more severe of two", Cell{Fault: "none", Draws: append(draws(10, 2, oracle.ClassOversold), draws(10, 5, oracle.ClassBroken)...)},
			Contradicts, "OVERSOLD 2/20 (3%-30%)"},
		{"admitted: the more severe of two", Cell{Fault: "client-pause", Draws: append(draws(10, 1, oracle.ClassOversold), draws(10, 9, oracle.ClassOverlap)...)},
			AsDocumented, "OVERSOLD 1/20 (1%-24%)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, words := an.Accord(tt.cell)
			if got != tt.want || words != tt.words {
				t.Errorf("Accord = %q %q, want %q %q", got, words, tt.want, tt.words)
			}
		})
	}
}

func TestNeeds(t *testing.T) {
	lock := Analysis{Claims: lockClaims, Record: &Record{Kind: results.LockSale, Cells: []Cell{
		{Fault: "none", Draws: draws(20, 0, oracle.ClassSafe)},
		{Fault: "client-pause", Draws: draws(20, 20, oracle.ClassOverlap)}, // told no, withdrew: nothing to add
		{Fault: "redis-restart", Draws: draws(20, 20, oracle.ClassOversold, "LOCK-BROKEN")},
	}}}
	got := lock.Needs()
	if len(got) != 2 || !strings.HasPrefix(got[0].What, "a fencing token") || !strings.HasPrefix(got[1].What, "persistence") {
		t.Fatalf("Needs = %+v, want the fencing token, then persistence", got)
	}
	if want := "OVERSOLD under redis-restart; LOCK-BROKEN under redis-restart"; got[1].Because != want {
		t.Errorf("persistence because %q, want %q", got[1].Because, want)
	}
	safe := Analysis{Claims: lockClaims, Record: &Record{Kind: results.LockSale, Cells: lock.Record.Cells[:2]}}
	if got := safe.Needs(); len(got) != 0 {
		t.Errorf("a lock whose only second holders were told no needs %+v", got)
	}
	queue := Analysis{Claims: lockClaims, Record: &Record{Kind: results.QueueSale, Cells: []Cell{
		{Fault: "worker-crash", Draws: draws(20, 4, oracle.ClassLost)},
		{Fault: "redis-restart", Draws: draws(20, 20, oracle.ClassLost)},
		{Fault: "none", Draws: draws(20, 6, oracle.ClassDuplicated)},
	}}}
	var whats []string
	for _, n := range queue.Needs() {
		whats = append(whats, strings.SplitN(n.What, ":", 2)[0]+" ("+n.Because+")")
	}
	want := []string{"an idempotent handler (DUPLICATED under none)", "a reliable fetch (LOST under worker-crash)",
		"persistence on the queue's server (appendonly yes, appendfsync always) (LOST under redis-restart)"}
	if strings.Join(whats, "\n") != strings.Join(want, "\n") {
		t.Errorf("a queue's needs:\n%s\nwant:\n%s", strings.Join(whats, "\n"), strings.Join(want, "\n"))
	}
}

// The comparison sets each library of its kind in a row, a cell per fault any of them
// measured ("not measured" where one did not), and leaves the other kind out.
func TestComparison(t *testing.T) {
	a := Analysis{Claims: lockClaims, Record: &Record{Kind: results.LockSale, Cells: []Cell{
		{Fault: "none", Draws: draws(20, 0, oracle.ClassSafe)},
		{Fault: "evict", Draws: draws(20, 7, oracle.ClassLost)},
	}}}
	bc := *lockClaims
	bc.Library, bc.Title = "other", "Other"
	b := Analysis{Claims: &bc, Record: &Record{Kind: results.LockSale, Cells: []Cell{
		{Fault: "none", Draws: draws(20, 3, oracle.ClassOversold)},
		{Fault: "app-pause", Draws: draws(20, 0, oracle.ClassSafe)},
	}}}
	qc := *lockClaims
	qc.Library = "queue"
	q := Analysis{Claims: &qc, Record: &Record{Kind: results.QueueSale, Cells: []Cell{{Fault: "none", Draws: draws(20, 0, oracle.ClassSafe)}}}}
	page := Comparison([]Analysis{q, b, a}, results.LockSale)
	for _, want := range []string{
		"| Library | none | evict | app-pause | told held while taken |",
		"| [lib](lib.md) | as documented: SAFE 20/20 (84%-100%) | undocumented: LOST 7/20 (18%-57%) | not measured | not asked |",
		"| [Other](other.md) | **contradicts its docs**: OVERSOLD 3/20 (5%-36%) | not measured | as documented: SAFE 20/20 (84%-100%) | not asked |",
		"- **[lib](lib.md)**:\n  - a fencing token",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "queue.md") {
		t.Errorf("the lock comparison names a queue library:\n%s", page)
	}
}

// A deployment's cell is its fault with settings: judged by the claims of its fault,
// set beside the fault as most run, and counted among the cells.
func TestDeploymentCells(t *testing.T) {
	c := *lockClaims
	c.Faults = []string{"none", "client-pause"}
	c.Deployments = []Deployment{{Name: "as-documented", Quote: "enable fsync=always", Source: "the Redis docs", Faults: []string{"client-pause:persist=aof-always"}}}
	if err := c.check(); err == nil {
		t.Error("check took a setting its fault does not have")
	}
	c.Deployments[0].Faults = []string{"redis-restart:persist=aof-always"}
	c.Claims = append(c.Claims, Claim{ID: "restart", Quote: "q", Source: "s", Faults: []string{"redis-restart"}, Admits: []string{"OVERLAP"}})
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	cells, err := c.Cells(results.LockSale)
	if err != nil || strings.Join(cells, " ") != "none client-pause redis-restart:persist=aof-always" {
		t.Fatalf("Cells = %v, %v", cells, err)
	}
	an := Analysis{Claims: &c, Record: &Record{Kind: results.LockSale, Cells: []Cell{
		{Fault: "redis-restart", Draws: draws(20, 20, oracle.ClassOversold)},
		{Fault: "redis-restart:persist=aof-always", Draws: draws(20, 4, oracle.ClassOverlap)},
	}}}
	if a, words := an.Accord(an.Record.Cells[1]); a != AsDocumented || words != "OVERLAP 4/20 (8%-42%)" {
		t.Errorf("the deployment's cell: %s %s, want as documented by its fault's claim", a, words)
	}
	if a, _ := an.Accord(an.Record.Cells[0]); a != Undocumented {
		t.Errorf("the fault as most run: %s, want undocumented", a)
	}
	for _, bad := range []Deployment{
		{Name: "x", Quote: "", Source: "s", Faults: []string{"redis-restart:persist=aof-always"}},
		{Name: "x", Quote: "q", Source: "s", Faults: []string{"meteor"}},
		{Name: "x", Quote: "q", Source: "s"},
		{Name: "X y", Quote: "q", Source: "s", Faults: []string{"redis-restart"}},
	} {
		c.Deployments = []Deployment{bad}
		if err := c.check(); err == nil {
			t.Errorf("check took deployment %+v", bad)
		}
	}
}
