package analysis

import (
	"context"
	"slices"
	"strings"
	"sync"
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
		{Name: "x", Quote: "q", Source: "s", Faults: []string{"none"}},                            // none is a deployment's over servers of its own
		{Name: "x", Quote: "q", Source: "s", Nodes: 1, Faults: []string{"redis-restart"}},         // one server is as most run
		{Name: "x", Quote: "q", Source: "s", Nodes: 10, Faults: []string{"redis-restart"}},        // past catalog.MaxNodes
		{Name: "x", Quote: "q", Source: "s", Nodes: 3, Faults: []string{"redis-pause:servers=4"}}, // more than it has
		{Name: "x", Quote: "q", Source: "s", Faults: []string{"redis-restart:servers=2"}},         // over one server
	} {
		c.Deployments = []Deployment{bad}
		if err := c.check(); err == nil {
			t.Errorf("check took deployment %+v", bad)
		}
	}
}

// A deployment over several lock servers runs every cell over them, none too, each
// named with them, and judged by the claims of its fault; a queue sale has no such.
func TestDeploymentOverNodes(t *testing.T) {
	c := *lockClaims
	c.Faults = []string{"none", "redis-restart"}
	c.Claims = append(slices.Clone(c.Claims), Claim{ID: "restart", Quote: "q", Source: "s", Faults: []string{"redis-restart"}, Admits: []string{"OVERLAP", "OVERSOLD"}})
	c.Deployments = []Deployment{{Name: "redlock-3", Quote: "we assume we have N Redis masters", Source: "the Redis docs", Nodes: 3,
		Faults: []string{"none", "redis-restart", "redis-restart:servers=2", "redis-restart:servers=2:for=1.5s"}}}
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	cells, err := c.Cells(results.LockSale)
	want := "none|redis-restart|none over 3 servers|redis-restart over 3 servers|redis-restart:servers=2 over 3 servers|redis-restart:servers=2:for=1.5s over 3 servers"
	if err != nil || strings.Join(cells, "|") != want {
		t.Fatalf("Cells = %q, %v; want %q", cells, err, want)
	}
	for _, tt := range []struct {
		cell, plan string
		nodes      int
	}{{"redis-restart", "redis-restart", 0}, {"redis-restart:servers=2 over 3 servers", "redis-restart:servers=2", 3}, {"none over 5 servers", "none", 5}} {
		if plan, nodes := CellPlan(tt.cell); plan != tt.plan || nodes != tt.nodes {
			t.Errorf("CellPlan(%q) = %q, %d; want %q, %d", tt.cell, plan, nodes, tt.plan, tt.nodes)
		}
	}
	if c.Nodes() != 3 {
		t.Errorf("Nodes() = %d, want 3", c.Nodes())
	}
	an := Analysis{Claims: &c, Record: &Record{Kind: results.LockSale, Cells: []Cell{
		{Fault: "none over 3 servers", Draws: draws(20, 1, oracle.ClassOversold)},
		{Fault: "redis-restart:servers=2 over 3 servers", Draws: draws(20, 20, oracle.ClassOverlap)},
	}}}
	if a, _ := an.Accord(an.Record.Cells[0]); a != Contradicts {
		t.Errorf("OVERSOLD with no fault over 3 servers: %s, want it to contradict the exclusion claim", a)
	}
	if a, _ := an.Accord(an.Record.Cells[1]); a != AsDocumented {
		t.Errorf("OVERLAP under a majority's restart: %s, want as documented by the restart claim", a)
	}
	c.Faults, c.Claims = []string{"none"}, c.Claims[2:3] // a claim of every fault, which a queue has too
	if _, err := c.Cells(results.QueueSale); err == nil || !strings.Contains(err.Error(), "queue sale runs on one server") {
		t.Errorf("a queue library's deployment over 3 servers: %v", err)
	}
}

// A claim narrowed to a deployment speaks there first, and nowhere else: a delayed
// restart's promise forbids what the restarts' admission allows, in that deployment's
// cell alone; of a class it says nothing of, the other claims judge.
func TestClaimNarrowedToDeployment(t *testing.T) {
	c := *lockClaims
	c.Faults = []string{"none", "redis-restart"}
	c.Deployments = []Deployment{{Name: "delayed-restart", Quote: "unavailable for at least a bit more than the max TTL", Source: "the Redis docs", Faults: []string{"redis-restart:for=1.5s"}}}
	c.Claims = append(slices.Clone(c.Claims),
		Claim{ID: "restarts", Quote: "q", Source: "s", Faults: []string{"redis-restart"}, Admits: []string{"LOCK-BROKEN", "OVERLAP"}},
		Claim{ID: "delayed", Quote: "q", Source: "s", Faults: []string{"redis-restart"}, Deployments: []string{"delayed-restart"}, Never: []string{"LOCK-BROKEN"}})
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cell  string
		class oracle.Class
		want  Judgement
	}{
		{"redis-restart", oracle.ClassBroken, Judgement{Admitted, []string{"restarts"}}},
		{"redis-restart:for=1.5s", oracle.ClassBroken, Judgement{Breaks, []string{"delayed"}}},
		{"redis-restart:for=1.5s", oracle.ClassOverlap, Judgement{Admitted, []string{"restarts"}}},
	} {
		if got := c.JudgeCell(tt.cell, tt.class); got.Standing != tt.want.Standing || !slices.Equal(got.Claims, tt.want.Claims) {
			t.Errorf("JudgeCell(%s, %s) = %v, want %v", tt.cell, tt.class, got, tt.want)
		}
	}
	an := Analysis{Claims: &c, Record: &Record{Kind: results.LockSale, Cells: []Cell{
		{Fault: "redis-restart", Draws: draws(20, 20, oracle.ClassBroken)},
		{Fault: "redis-restart:for=1.5s", Draws: draws(20, 0, oracle.ClassBroken)},
	}}}
	if st := an.ClaimStatus(c.Claims[len(c.Claims)-1]); st != Held {
		t.Errorf("the delayed restart's claim, broken only where it does not speak: %s, want %s", st, Held)
	}
	c.Claims[len(c.Claims)-1].Deployments = []string{"nowhere"}
	if err := c.check(); err == nil || !strings.Contains(err.Error(), `no deployment "nowhere"`) {
		t.Errorf("a claim narrowed to no deployment: %v", err)
	}
}

// Two libraries whose rows read alike in every column both measured, rates aside, are
// named as such; one that differs in a single column is not.
func TestAlikeRows(t *testing.T) {
	lib := func(name string, restart oracle.Class, k int) Analysis {
		c := *lockClaims
		c.Library, c.Title = name, name
		return Analysis{Claims: &c, Record: &Record{Kind: results.LockSale, Cells: []Cell{
			{Fault: "none", Draws: draws(20, 0, oracle.ClassSafe)},
			{Fault: "client-pause", Draws: draws(20, 20, oracle.ClassOverlap)},
			{Fault: "redis-restart", Draws: draws(20, k, restart)},
		}}}
	}
	libs := []Analysis{lib("a", oracle.ClassOverlap, 20), lib("b", oracle.ClassOverlap, 17), lib("c", oracle.ClassBroken, 3)}
	got := alikeRows(libs, []string{"none", "client-pause", "redis-restart"})
	if want := []string{"[a](a.md) and [b](b.md)"}; !slices.Equal(got, want) {
		t.Errorf("alikeRows = %q, want %q", got, want)
	}
	if got := alikeRows(libs, []string{"none", "client-pause"}); len(got) != 3 {
		t.Errorf("over the columns where all three read alike: %q, want every pair", got)
	}
}

// Records of Redis of two kinds are named by kind, for the comparison's warning that
// their restart columns are not alike; one kind says nothing.
func TestServerKinds(t *testing.T) {
	an := func(title, machine string) Analysis {
		return Analysis{Claims: &Claims{Title: title}, Record: &Record{Machine: machine}}
	}
	for _, tt := range []struct {
		libs []Analysis
		want string
	}{
		{[]Analysis{an("A", "2 CPUs, Redis 7.0.15 as a process"), an("B", "2 CPUs, Redis 7.0.15 as a process")}, ""},
		{[]Analysis{an("A", "2 CPUs, Redis 7.0.15 as a process"), an("B", "2 CPUs, Redis 7.0.15 as a container"), an("C", "2 CPUs, Redis 7.0.15 as a process")},
			"The records were measured on Redis of two kinds: as a process (A, C), and as a container (B). A restart is not alike on them"},
		{[]Analysis{an("A", "2 CPUs, Redis 7.0.15 as a process"), an("B", "2 CPUs, Redis 7.0.15 as a "+InPlace)},
			"The records were measured on Redis of two kinds: as a process (A), and as a container restarted in place (B). Each answers again within milliseconds"},
		{[]Analysis{an("A", "2 CPUs, Redis 7.0.15 as a process"), an("B", "2 CPUs, Redis 7.0.15 as a "+InPlace), an("C", "2 CPUs, Redis 7.0.15 as a container")},
			"of three kinds: as a process (A), and as a container restarted in place (B), and as a container (C). A restart is not alike"},
	} {
		if got := serverKinds(tt.libs); !strings.Contains(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("want %q in %q", tt.want, got)
		}
	}
}

// TestToldHeld: a claim on what the library's answer to "do I still hold it?" means
// forbids TOLD-HELD, a holder told yes once the next one had the lock, read off the
// draws' word in a record from before the findings named it. It decides the cell over
// a class the library says nothing of, and a claim that admits losing the lock admits
// it too.
func TestToldHeld(t *testing.T) {
	c := &Claims{
		Library: "lib", Title: "lib", Language: "Go", Release: "v1", From: "the proxy", Design: []string{"--lock", "token"},
		Claims: []Claim{
			{ID: "until", Quote: "Until returns the time of validity", Source: "mutex.go", Faults: []string{"*"}, Never: []string{oracle.KindToldHeld}},
			{ID: "restarts", Quote: "restarts lose the lock", Source: "lock.go", Faults: []string{"redis-restart"},
				Admits: []string{"LOCK-BROKEN", "OVERSOLD", oracle.KindToldHeld}},
		},
	}
	if err := c.check(); err != nil {
		t.Fatalf("a claim naming TOLD-HELD: %v", err)
	}
	told := func(n, k int) []results.Draw {
		ds := draws(n, n, oracle.ClassOversold, "LOCK-BROKEN")
		for i := range k {
			ds[i].Word = &oracle.Word{Asked: 9, ToldHeld: 1}
		}
		return ds
	}
	an := Analysis{Claims: c, Record: &Record{Kind: results.LockSale}}
	for _, tt := range []struct {
		name  string
		cell  Cell
		want  Accord
		words string
	}{
		{"the library's wrong word", Cell{Fault: "evict", Draws: told(20, 6)}, Contradicts, "TOLD-HELD 6/20 (15%-52%)"},
		{"the key lost, the holder told so", Cell{Fault: "evict", Draws: told(20, 0)}, Undocumented, "OVERSOLD 20/20 (84%-100%)"},
		{"admitted with the lost lock", Cell{Fault: "redis-restart", Draws: told(20, 20)}, AsDocumented, "OVERSOLD 20/20 (84%-100%)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, words := an.Accord(tt.cell); got != tt.want || words != tt.words {
				t.Errorf("Accord = %q %q, want %q %q", got, words, tt.want, tt.words)
			}
		})
	}
	c.Claims[0].Never = []string{"TOLD-YES"}
	if err := c.check(); err == nil || !strings.Contains(err.Error(), `unknown class "TOLD-YES"`) || !strings.Contains(err.Error(), oracle.KindToldHeld) {
		t.Errorf("an unknown name: want one naming it and listing TOLD-HELD, got %v", err)
	}
}

// A deployment at settings of its own (a library's own clock) runs each of its cells
// with them, named with them, judged by the claims of its fault, set apart in the
// comparison; a setting that is no name and one value is refused.
func TestDeploymentSettings(t *testing.T) {
	c := *lockClaims
	c.Faults = []string{"none", "client-pause"}
	c.Deployments = []Deployment{{Name: "own-clock", Quote: "q", Source: "s", Settings: map[string]string{"ttl": "5s", "buyers": "8"},
		Faults: []string{"client-pause"}}}
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	cells, err := c.Cells(results.LockSale)
	const cell = "client-pause with buyers=8 ttl=5s"
	if err != nil || strings.Join(cells, "|") != "none|client-pause|"+cell {
		t.Fatalf("Cells = %q, %v", cells, err)
	}
	if plan, nodes := CellPlan(cell); plan != "client-pause" || nodes != 0 {
		t.Errorf("CellPlan(%q) = %q, %d", cell, plan, nodes)
	}
	if set := CellSettings(cell); !slices.Equal(set, []string{"buyers=8", "ttl=5s"}) || CellSettings("client-pause") != nil {
		t.Errorf("CellSettings(%q) = %q", cell, set)
	}
	if d := c.deploymentOf(cell); d != "own-clock" {
		t.Errorf("deploymentOf(%q) = %q", cell, d)
	}
	if got := c.JudgeCell(cell, oracle.ClassOversold); got.Standing != Admitted || !slices.Equal(got.Claims, []string{"expiry"}) {
		t.Errorf("JudgeCell(%s, OVERSOLD) = %v, want admitted by expiry, the claim of its fault", cell, got)
	}

	sale := results.Sale{Kind: results.LockSale, Scenario: "fault-sale", Design: "token", Faults: "none",
		Settings: []results.Setting{{Name: "buyers", Value: "4"}, {Name: "ttl", Value: "300ms"}, {Name: "seed", Value: "7"}}}
	var mu sync.Mutex
	ran := map[string][]string{}
	run := func(_ context.Context, s results.Sale) (results.Run, error) {
		mu.Lock()
		defer mu.Unlock()
		ran[s.Faults] = append(ran[s.Faults], s.Get("buyers")+" "+s.Get("ttl"))
		return results.Run{Sale: &s, Complete: true, Verdict: oracle.Verdict{Class: oracle.ClassSafe}}, nil
	}
	rec := Analyse(context.Background(), Config{Claims: &c, Sale: sale, Cells: []string{"client-pause", cell}, Runs: 2, Parallel: 2, Run: run})
	slices.Sort(ran["client-pause"]) // the cells' draws run side by side
	if got := strings.Join(ran["client-pause"], ","); got != "4 300ms,4 300ms,8 5s,8 5s" {
		t.Errorf("the sales of client-pause and of %s ran with %q", cell, got)
	}
	if rec.Cells[1].Fault != cell || len(rec.Cells[1].Draws) != 2 {
		t.Errorf("the deployment's cell: %+v", rec.Cells[1])
	}
	an := Analysis{Claims: &c, Record: rec}
	if page := an.Page(); !strings.Contains(page, "Deployment **own-clock**: client-pause with buyers=8 ttl=5s, as s prescribes") {
		t.Errorf("the page does not say the deployment's settings:\n%s", page)
	}
	cmp := Comparison([]Analysis{an}, results.LockSale)
	if !strings.Contains(cmp, "With settings of a library's own") || !strings.Contains(cmp, "| Library | "+cell+" |") ||
		strings.Contains(cmp, "| Library | client-pause | "+cell) {
		t.Errorf("the comparison does not set the cell with settings apart:\n%s", cmp)
	}

	for _, bad := range []map[string]string{{"ttl": ""}, {"ttl": "5 s"}, {"Ttl": "5s"}, {"ttl": "a=b"}} {
		c.Deployments[0].Settings = bad
		if err := c.check(); err == nil {
			t.Errorf("check took settings %q", bad)
		}
	}
}
