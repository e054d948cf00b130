package analysis

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// lockClaims are a lock library's claims as a claims file maps them: exclusion where
// the client is in control, an expiry that admits what an outlived lease brings.
var lockClaims = &Claims{
	Library: "lib", Title: "lib", Language: "Go", Release: "v1.2.3", From: "the proxy", Tracker: "owner/lib",
	Design: []string{"--lock", "token"},
	Claims: []Claim{
		{ID: "exclusion", Quote: "no one else can obtain the lock", Source: "README.md", Faults: []string{"none", "crash-holder"}, Never: []string{"LOCK-BROKEN", "OVERSOLD"}, Admits: []string{"STUCK"}},
		{ID: "expiry", Quote: "the lock expires", Source: "lock.go", Faults: []string{"client-pause", "slow-work"}, Never: []string{"LOCK-BROKEN"}, Admits: []string{"OVERLAP", "OVERSOLD"}},
		{ID: "everywhere", Quote: "it never duplicates", Source: "lock.go", Faults: []string{"*"}, Never: []string{"DUPLICATED"}},
	},
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name   string
		plan   []string
		class  oracle.Class
		want   Standing
		claims []string
	}{
		{"forbidden where the claim speaks", []string{"none"}, oracle.ClassOversold, Breaks, []string{"exclusion"}},
		{"admitted where the claim speaks", []string{"client-pause"}, oracle.ClassOversold, Admitted, []string{"expiry"}},
		{"forbidden by two claims", []string{"crash-holder"}, oracle.ClassBroken, Breaks, []string{"exclusion"}},
		{"a claim of every fault", []string{"evict"}, oracle.ClassDuplicated, Breaks, []string{"everywhere"}},
		{"silent: held to no broken lock", []string{"evict"}, oracle.ClassBroken, BreaksHold, nil},
		{"silent: held to no lost stock", []string{"redis-restart"}, oracle.ClassLost, BreaksHold, nil},
		{"silent and not held", []string{"evict"}, oracle.ClassStuck, Unclaimed, nil},
		{"several faults: one admits it", []string{"none", "client-pause"}, oracle.ClassOversold, Admitted, []string{"expiry"}},
		{"several faults: one silent, to blame", []string{"none", "evict"}, oracle.ClassOversold, BreaksHold, nil},
		{"several faults: each forbids it", []string{"none", "crash-holder"}, oracle.ClassOversold, Breaks, []string{"exclusion"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lockClaims.Judge(tt.plan, tt.class)
			if got.Standing != tt.want || !slices.Equal(got.Claims, tt.claims) {
				t.Errorf("Judge(%v, %s) = %v %v, want %v %v", tt.plan, tt.class, got.Standing, got.Claims, tt.want, tt.claims)
			}
		})
	}
	if got := FaultsOf("client-pause+evict:nth=2"); !slices.Equal(got, []string{"client-pause", "evict"}) {
		t.Errorf("FaultsOf two faults: %v", got)
	}
	if got := FaultsOf("failover+term-holder:p"); !slices.Equal(got, []string{"failover", "term-holder"}) {
		t.Errorf("FaultsOf an exploration's region: %v", got)
	}
	if got := FaultsOf("none"); !slices.Equal(got, []string{"none"}) {
		t.Errorf("FaultsOf none: %v", got)
	}
}

// draws are n draws, the first k of class c (with its kinds), the rest SAFE.
func draws(n, k int, c oracle.Class, kinds ...string) []results.Draw {
	out := make([]results.Draw, n)
	for i := range out {
		out[i] = results.Draw{Seed: uint64(i), Class: oracle.ClassSafe}
		if i < k {
			out[i] = results.Draw{Seed: uint64(i), Class: c, Findings: kinds}
		}
	}
	return out
}

// fixed is an analysis as measured: exclusion broken under none (a bug: 9 of 10
// reruns), the expiry's admitted oversell under a pause, a broken lock under evict
// that no claim speaks to, a crash that never struck.
func fixed() Analysis {
	sale := results.Sale{Kind: results.LockSale, Scenario: "fault-sale", Design: "token", Faults: "none", Settings: []results.Setting{{Name: "buyers", Value: "3"}, {Name: "stock", Value: "1"}, {Name: "seed", Value: "7"}}}
	at := func(f string) results.Sale { s := sale.Clone(); s.Faults = f; return s }
	rec := &Record{Library: "lib", Release: "v1.2.3", Design: "token", Kind: results.LockSale, Sale: sale, Date: "2026-11-29", Machine: "2 CPUs", Complete: true, Sales: 140,
		Cells: []Cell{
			{Fault: "none", Draws: draws(20, 2, oracle.ClassOversold, "OVERSOLD", "LOST-UPDATE")},
			{Fault: "client-pause", Draws: draws(20, 20, oracle.ClassOversold, "OVERSOLD", "OVERLAP")},
			{Fault: "evict", Draws: draws(20, 15, oracle.ClassBroken, "LOCK-BROKEN")},
			{Fault: "crash-holder", Draws: draws(20, 20, oracle.ClassNotExercised)},
		},
		Findings: []Finding{
			{Faults: "none", Class: oracle.ClassOversold, Smallest: at("none"), Shrunk: true, ShrinkSales: 12, Shown: 18, Reruns: 20, Verdict: "OVERSOLD 1", Timeline: []string{"  12ms  ended: OVERSOLD 1"}},
			{Faults: "evict", Class: oracle.ClassBroken, Smallest: at("evict"), Shrunk: true, ShrinkSales: 3, Shown: 10, Reruns: 10, Timeline: []string{"   5ms  evict: the lock's key evicted"}},
			{Faults: "client-pause", Class: oracle.ClassOversold, Smallest: at("client-pause"), Shown: 10, Reruns: 10},
			{Faults: "none", Timing: "work < TTL", Class: oracle.ClassDuplicated, Smallest: at("none"), Shown: 7, Reruns: 10},
			// Holders working past their lease are a slowed holder: the expiry admits it.
			{Faults: "none", Timing: "work >= TTL", Class: oracle.ClassOversold, Smallest: at("none"), Shown: 10, Reruns: 10},
		},
	}
	return Analysis{Claims: lockClaims, Record: rec}
}

func TestPage(t *testing.T) {
	an := fixed()
	// everywhere is broken by the exploration's finding, shown again in its reruns.
	for cl, want := range map[string]Status{"exclusion": Broken, "expiry": Held, "everywhere": Broken} {
		if got := an.ClaimStatus(lockClaims.Claims[slices.IndexFunc(lockClaims.Claims, func(c Claim) bool { return c.ID == cl })]); got != want {
			t.Errorf("claim %s: %s, want %s", cl, got, want)
		}
	}
	fs := an.Findings()
	if len(fs) != 3 { // the admitted oversells, under a pause and past the lease, are none
		t.Fatalf("findings: want 3, got %d: %+v", len(fs), fs)
	}
	if c := []Confirmation{an.Confirmation(fs[0]), an.Confirmation(fs[1]), an.Confirmation(fs[2])}; !c[0].Statistics || c[1].Statistics || c[2].Statistics || c[0].Confirmed {
		t.Errorf("confirmations: want only the first above its control (a claim broken under no fault, 18 of 20 reruns), none confirmed without a reproduction, got %+v", c)
	}
	if got, want := an.Worst(), "LOCK-BROKEN 15/20 (53%-89%) under evict"; got != want {
		t.Errorf("worst: got %q, want %q", got, want)
	}
	page := an.Page()
	for _, want := range []string{
		"**1 of 3 claims held, 2 broken; 3 findings, 0 of them confirmed; worst: LOCK-BROKEN 15/20 (53%-89%) under evict.**",
		"| none | OVERSOLD 2/20 SAFE 18/20 | OVERSOLD 2/20 (3%-30%): breaks a claim (exclusion) |",
		"| client-pause | OVERSOLD 20/20 | OVERSOLD 20/20 (84%-100%): admitted (expiry)",
		"| crash-holder | NOT-EXERCISED 20/20 | the fault never struck in 20 |",
		"### 1. OVERSOLD under none: breaks the claim exclusion",
		"- Reruns: 18/20 (70%-97%) showed it again. **Above its control**: its rate, 20/40 (35%-65%), is above zero under no fault, but no standalone reproduction shows it yet.",
		"- Tracker: not looked up yet",
		"Draft report for owner/lib",
		"### 2. LOCK-BROKEN under evict: the library says nothing of this under evict; it breaks the hold",
		"Not confirmed: the library claims nothing here.",
		"### 3. DUPLICATED found exploring, under none, work < TTL: breaks the claim everywhere",
		"Not confirmed: found exploring: no control of its own sale was measured.",
		"- Rerun: `stockbench run --scenario fault-sale --lock token --fault evict --buyers 3 --stock 1 --seed 7 --runs 20`",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	// Once the tracker holds it, the page links it and drafts nothing.
	known := fixed()
	c := *lockClaims
	c.Lookups = []Lookup{{Claim: "exclusion", Class: "OVERSOLD", Known: "owner/lib#42", Title: "oversells", Searched: "2026-11-29", Query: "oversell"}}
	known.Claims = &c
	page = known.Page()
	if !strings.Contains(page, "known: [owner/lib#42](https://github.com/owner/lib/issues/42)") || strings.Contains(page, "Draft report") {
		t.Errorf("a known finding links its issue and drafts no report:\n%s", page)
	}
	// A claim that forbids nothing cannot fail: it is listed as admitting only and not
	// counted among the claims held.
	admits := fixed()
	c2 := *lockClaims
	c2.Claims = append(slices.Clone(lockClaims.Claims), Claim{ID: "canceled", Quote: "the context is canceled", Source: "lock.go", Faults: []string{"evict"}, Admits: []string{"LOCK-BROKEN"}})
	admits.Claims = &c2
	if got := admits.ClaimStatus(c2.Claims[3]); got != AdmitsOnly {
		t.Errorf("a claim that forbids nothing: %s, want %s", got, AdmitsOnly)
	}
	if h := admits.Headline(); !strings.HasPrefix(h, "1 of 3 claims held, 2 broken (1 more admits only, forbidding nothing); ") {
		t.Errorf("headline with a claim that only admits: %q", h)
	}
	if row := Summary([]Analysis{admits}); !strings.Contains(row, "| 1 / 2 of 3 (+1 admit only) |") {
		t.Errorf("summary row with a claim that only admits:\n%s", row)
	}
	row := Summary([]Analysis{an})
	if !strings.Contains(row, "| [lib](lib.md) | Go | v1.2.3, from the proxy | 1 / 2 of 3 | 3 (0) | LOCK-BROKEN 15/20 (53%-89%) under evict | 2026-11-29 |") {
		t.Errorf("summary row:\n%s", row)
	}
}

// TestConfirmation: the rule confirms a finding only when it breaks the library's own
// claim, its rate over its cell's draws and at least Reruns reruns lies above its
// control's (the no-fault cell and as many reruns without the fault; zero under no
// fault), and a standalone reproduction shows it, which none does yet.
func TestConfirmation(t *testing.T) {
	an := fixed()
	// expiry forbids LOCK-BROKEN under client-pause, whose cell showed none of it.
	broke := func(shown, reruns, cshown, cruns int) Judged {
		return Judged{Finding: Finding{Faults: "client-pause", Class: oracle.ClassBroken, Shown: shown, Reruns: reruns, ControlShown: cshown, ControlRuns: cruns},
			Judgement: lockClaims.Judge([]string{"client-pause"}, oracle.ClassBroken)}
	}
	tests := []struct {
		name  string
		f     Judged
		stats bool
		why   string
	}{
		{"above a clean control", broke(15, 20, 0, 20), true, "its rate, 15/40 (24%-53%), is above its control's, 0/40 (0%-9%), but no standalone reproduction shows it yet"},
		{"within its control's reach", broke(15, 20, 8, 20), false, "its rate, 15/40 (24%-53%), is not above its control's, 8/40 (10%-35%)"},
		{"too few reruns", broke(10, 10, 0, 10), false, "10 reruns of its smallest sale finished; the rule takes 20"},
		{"no control", broke(15, 20, 0, 0), false, "its control was not measured (a no-fault cell, and 20 reruns of its smallest sale without the fault)"},
		{"found exploring", Judged{Finding: Finding{Faults: "none", Timing: "work < TTL", Class: oracle.ClassDuplicated, Shown: 20, Reruns: 20},
			Judgement: Judgement{Standing: Breaks}}, false, "found exploring: no control of its own sale was measured"},
		{"breaks only the hold", Judged{Finding: Finding{Faults: "evict", Class: oracle.ClassBroken, Shown: 20, Reruns: 20, ControlRuns: 20},
			Judgement: lockClaims.Judge([]string{"evict"}, oracle.ClassBroken)}, false, "the library claims nothing here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := an.Confirmation(tt.f)
			if c.Statistics != tt.stats || c.Confirmed || c.Why != tt.why {
				t.Errorf("got %+v, want statistics %v, not confirmed, why %q", c, tt.stats, tt.why)
			}
		})
	}
}

// TestCommittedPages: every claims file of docs/analyses reads, has its record, and its
// page and the summary are what the record and the claims render: a claim edited, or a
// page edited by hand, without rendering again (stockbench analyse --render
// docs/analyses) fails here.
func TestCommittedPages(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "analyses")
	claims, err := ReadDir(filepath.Join(dir, ClaimsDir))
	if err != nil {
		t.Fatal(err)
	}
	all, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(claims) {
		t.Errorf("%d claims files but %d records: make analyses LIBS=... measures the missing", len(claims), len(all))
	}
	for file, want := range Rendered(all) {
		got, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || string(got) != want {
			t.Errorf("docs/analyses/%s is not what its record and claims render: make docs renders it again (%v)", file, err)
		}
	}
}

// TestAnalyseSaysWhereTheTimeWent: every sale an analysis runs is counted in its phase
// (the cells', the finding's shrink and reruns), with the sales' own time by part, and
// the page gets the table.
func TestAnalyseSaysWhereTheTimeWent(t *testing.T) {
	sale := results.Sale{Kind: results.LockSale, Scenario: "fault-sale", Design: "token", Faults: "none",
		Settings: []results.Setting{{Name: "buyers", Value: "4"}, {Name: "stock", Value: "2"}, {Name: "seed", Value: "7"}}}
	run := func(_ context.Context, s results.Sale) (results.Run, error) {
		r := results.Run{Sale: &s, Complete: true, Verdict: oracle.Verdict{Class: oracle.ClassSafe},
			Spent: results.Spent{Servers: time.Millisecond, SetUp: 2 * time.Millisecond, Selling: 3 * time.Millisecond, Judging: 4 * time.Millisecond}}
		if s.Faults == "none" { // the exclusion claim forbids it: shrunk and rerun
			r.Verdict = oracle.Verdict{Class: oracle.ClassOversold, Count: 1, Findings: []string{"OVERSOLD 1"}}
		}
		return r, nil
	}
	rec := Analyse(context.Background(), Config{Claims: lockClaims, Sale: sale, Cells: []string{"none", "evict"}, Runs: 3, Parallel: 2,
		Shrink: time.Second, Run: run})
	byPhase := map[string]int{}
	for _, tm := range rec.Time {
		byPhase[string(tm.Phase)] = tm.Sales
		if tm.Wall <= 0 || tm.Spent.Judging != time.Duration(tm.Sales)*4*time.Millisecond {
			t.Errorf("phase %s: wall %s, %d sales, spent %s", tm.Phase, tm.Wall, tm.Sales, tm.Spent)
		}
	}
	if byPhase[string(Cells)] != 6 || byPhase[string(Shrinking)] == 0 || byPhase[string(Rerunning)] != Reruns {
		t.Errorf("sales by phase: %v, want 6 cells', a shrink's and %d reruns", byPhase, Reruns)
	}
	if total := byPhase[string(Cells)] + byPhase[string(Shrinking)] + byPhase[string(Rerunning)]; total != rec.Sales {
		t.Errorf("the phases count %d sales, the record %d", total, rec.Sales)
	}
	page := Analysis{Claims: lockClaims, Record: rec}.Page()
	if !strings.Contains(page, "## Where the time went") || !strings.Contains(page, "| cells | ") {
		t.Errorf("the page lacks the time table:\n%s", page)
	}
}

// TestWordTable: a lock's page gives, fault by fault, how long the library said "held"
// while another holder had the lock and how long a holder waited to be told no, each
// draw's longest as p50 / p99 / max over the draws that had one; a record whose holders
// never asked says why there is nothing, and a queue's page has no such section.
func TestWordTable(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	told := func(asked, toldHeld int, stale time.Duration, toldNo int, toBeTold time.Duration) results.Draw {
		return results.Draw{Class: oracle.ClassSafe, Word: &oracle.Word{Asked: asked, ToldHeld: toldHeld, Stale: stale, ToldNo: toldNo, ToBeTold: toBeTold}}
	}
	an := fixed()
	an.Record.Cells = []Cell{
		{Fault: "none", Draws: []results.Draw{told(5, 0, 0, 0, 0), told(4, 0, 0, 1, 0)}},
		{Fault: "redis-pause", Draws: []results.Draw{told(3, 1, ms(12), 1, ms(30)), told(3, 2, ms(40), 0, 0), told(2, 1, ms(8), 2, ms(250)), {Class: oracle.ClassSafe}}},
	}
	page := an.Page()
	for _, want := range []string{
		"## The library's word against Redis",
		"| none | 9 in 2 of 2 draws | none | 1 draw of 2: 0s / 0s / 0s |",
		"| redis-pause | 8 in 3 of 4 draws | 3 draws of 3: 12ms / 40ms / 40ms | 2 draws of 3: 250ms / 250ms / 250ms |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if page := fixed().Page(); !strings.Contains(page, "No holder in these draws asked the library") {
		t.Errorf("a record without asking says so:\n%s", page)
	}
	queue := fixed()
	queue.Record.Kind = results.QueueSale
	if page := queue.Page(); strings.Contains(page, "The library's word") {
		t.Errorf("a queue's page has no word table:\n%s", page)
	}
}

// TestRegionFindingsLeaveOutUnstruckReruns: a rerun of an exploration's finding whose
// planned fault never struck is no evidence under that fault, and is left out of both
// the shown and the reruns; a region whose reruns never struck shows nothing.
func TestRegionFindingsLeaveOutUnstruckReruns(t *testing.T) {
	oversold := func(unstruck bool) results.Draw {
		return results.Draw{Class: oracle.ClassOversold, Findings: []string{"OVERSOLD", "LOST-UPDATE"}, Unstruck: unstruck}
	}
	safe := results.Draw{Class: oracle.ClassSafe}
	region := func(each ...results.Draw) *explore.Finding {
		return &explore.Finding{Faults: "client-pause", Timing: "work < TTL",
			Rates: []explore.Rate{{Runs: len(each), Draws: results.Draws{Runs: len(each), Each: each}}}}
	}
	tests := []struct {
		name          string
		region        *explore.Finding
		shown, reruns int // of OVERSOLD; reruns 0: no finding
	}{
		{"all struck", region(oversold(false), oversold(false), safe), 2, 3},
		{"one unstruck", region(oversold(false), oversold(true), safe), 1, 2},
		{"none struck", region(oversold(true), oversold(true)), 0, 0},
		{"no reruns", &explore.Finding{Faults: "none"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := regionFindings(tt.region)
			i := slices.IndexFunc(fs, func(f Finding) bool { return f.Class == oracle.ClassOversold })
			switch {
			case tt.reruns == 0 && len(fs) != 0:
				t.Errorf("want no finding, got %+v", fs)
			case tt.reruns > 0 && (i < 0 || fs[i].Shown != tt.shown || fs[i].Reruns != tt.reruns):
				t.Errorf("want OVERSOLD in %d of %d reruns, got %+v", tt.shown, tt.reruns, fs)
			}
		})
	}
}

// TestCellsLeaveOutUnstruckDraws: a cell's draw in which its fault never struck showed
// what it showed without that fault, so it is neither charged to the fault's claims nor
// excused by them: counts and rates are over the draws the fault struck in, and a cell
// whose fault never struck leaves its claims not exercised.
func TestCellsLeaveOutUnstruckDraws(t *testing.T) {
	broken := func(unstruck bool) results.Draw {
		return results.Draw{Class: oracle.ClassBroken, Findings: []string{"LOCK-BROKEN"}, Unstruck: unstruck}
	}
	cell := Cell{Fault: "evict", Draws: []results.Draw{broken(false), broken(false), broken(true),
		{Class: oracle.ClassNotExercised, Unstruck: true}, {Class: oracle.ClassSafe}}}
	if got := cell.count(oracle.ClassBroken); got != 2 {
		t.Errorf("count: want the 2 struck draws, got %d", got)
	}
	if got, want := cell.Judged(), 3; got != want {
		t.Errorf("judged: want %d, got %d", want, got)
	}
	if got, want := cell.Rate(2), results.Proportion(2, 3); got != want {
		t.Errorf("rate: want %s, got %s", want, got)
	}
	if got := standings(lockClaims, cell); !strings.Contains(got, "LOCK-BROKEN 2/3") || !strings.Contains(got, "the fault never struck in 2, whose classes are left out") {
		t.Errorf("standings: %s", got)
	}

	an := fixed()
	// crash-holder's draws never struck; one of them lost stock all the same.
	an.Record.Cells[3].Draws[0] = results.Draw{Class: oracle.ClassOversold, Findings: []string{"OVERSOLD"}, Unstruck: true}
	if seen := an.Record.Cells[3].Seen(an.Claims); len(seen) != 0 {
		t.Errorf("a cell whose fault never struck shows nothing, got %+v", seen)
	}
	if got := an.Worst(); got != "LOCK-BROKEN 15/20 (53%-89%) under evict" {
		t.Errorf("worst: %q", got)
	}
}

// TestWeight: sales on a Sentinel group or a Cluster take a share of the analysis's
// slots that lets at most four of them run at once, and at least one; any other sale one.
func TestWeight(t *testing.T) {
	for _, tt := range []struct {
		faults   string
		parallel int
		want     int64
	}{
		{"none", 16, 1},
		{"worker-crash", 16, 1},
		{"redis-restart:persist=aof-everysec", 16, 1},
		{"sentinel-kill", 16, 4},
		{"sentinel-partition", 8, 2},
		{"cluster-kill", 16, 4},
		{"sentinel-kill", 4, 1},
		{"sentinel-kill", 2, 1},
	} {
		a := &analysis{parallel: tt.parallel}
		if got := a.weight(results.Sale{Faults: tt.faults}); got != tt.want {
			t.Errorf("%s at %d at once: weight %d, want %d", tt.faults, tt.parallel, got, tt.want)
		}
	}
}
