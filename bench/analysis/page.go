package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Analysis is a page's two halves: what the library claims and what was measured.
type Analysis struct {
	Claims *Claims
	Record *Record
}

// Status is how a claim fared.
type Status string

// The statuses of a claim.
const (
	Held         Status = "held"
	Broken       Status = "broken"
	NotExercised Status = "not exercised" // none of its cells' faults struck
	// AdmitsOnly is a claim that forbids nothing (its never is empty): no sale could
	// break it, so it is not counted among the claims held.
	AdmitsOnly Status = "admits only"
)

// ClaimStatus is how claim cl fared in the cells: broken when a class it forbids was
// seen under one of its faults and no claim allowed it, not exercised when every draw
// of its faults' cells passed with the fault unfired.
func (an Analysis) ClaimStatus(cl Claim) Status {
	if len(cl.Never) == 0 {
		return AdmitsOnly
	}
	struck := false
	for _, cell := range an.Record.Cells {
		if !an.Claims.Covers(cl, cell.Fault) {
			continue
		}
		struck = struck || cell.Fault == faults.None || cell.Judged() > 0
		for _, s := range cell.Seen(an.Claims) {
			if s.Standing == Breaks && slices.Contains(s.Claims, cl.ID) {
				return Broken
			}
		}
	}
	for _, f := range an.Findings() {
		if f.Timing != "" && f.Standing == Breaks && f.Shown > 0 && slices.Contains(f.Claims, cl.ID) {
			return Broken // found exploring, and shown again in its reruns
		}
	}
	if !struck {
		return NotExercised
	}
	return Held
}

// Judged is a finding with its judgement by the claims and, for one that breaks a claim,
// its tracker lookup.
type Judged struct {
	Finding
	Judgement
	Lookup *Lookup
}

// Confirmation is how a finding stands against the rule that confirms one. It must
// break the library's own claim, and (a) the 95% interval of its rate, over its cell's
// draws and at least Reruns reruns of its smallest sale, must lie above its control's:
// the same sales without the fault (the library's no-fault cell's draws and as many
// reruns of the smallest sale without its fault); under no fault the rate must be
// above zero. And (b) a standalone reproduction, a program with no stockbench code,
// must show it. Shown counts the draws and reruns that showed it, Control the control's.
type Confirmation struct {
	Statistics bool // (a) holds
	Confirmed  bool // (a) and (b) hold
	Shown      string
	Control    string
	Why        string // why not, or what it rests on
}

// Confirmation judges f by the rule: (b) by the record's runs of the library's
// reproductions (DIR/repro), one of f's fault and class that exited 1.
func (an Analysis) Confirmation(f Judged) Confirmation {
	var c Confirmation
	switch {
	case f.Standing != Breaks:
		c.Why = "the library claims nothing here"
		return c
	case f.Timing != "":
		c.Why = "found exploring: no control of its own sale was measured"
		return c
	case f.Reruns < Reruns:
		c.Why = fmt.Sprintf("%d reruns of its smallest sale finished; the rule takes %d", f.Reruns, Reruns)
		return c
	}
	k, n := f.Shown, f.Reruns
	if cell, ok := an.cell(f.Faults); ok {
		k, n = k+cell.count(f.Class), n+cell.Judged()
	}
	c.Shown = results.Proportion(k, n)
	low, _ := results.Wilson(k, n)
	if f.Faults == faults.None {
		c.Statistics = low > 0 // the claim forbids it outright: its control is zero
	} else {
		none, ok := an.cell(faults.None)
		if !ok || f.ControlRuns < f.Reruns {
			c.Why = fmt.Sprintf("its control was not measured (a no-fault cell, and %d reruns of its smallest sale without the fault)", f.Reruns)
			return c
		}
		k0, n0 := f.ControlShown+none.count(f.Class), f.ControlRuns+none.Judged()
		c.Control = results.Proportion(k0, n0)
		_, high := results.Wilson(k0, n0)
		c.Statistics = low > high
	}
	rate := fmt.Sprintf("its rate, %s, is above its control's, %s", c.Shown, c.Control)
	if f.Faults == faults.None {
		rate = fmt.Sprintf("its rate, %s, is above zero under no fault", c.Shown)
	}
	repro, ok := an.reproOf(f.Finding)
	switch {
	case !c.Statistics && f.Faults == faults.None:
		c.Why = fmt.Sprintf("its rate, %s, is not above zero", c.Shown)
	case !c.Statistics:
		c.Why = fmt.Sprintf("its rate, %s, is not above its control's, %s", c.Shown, c.Control)
	case !ok:
		c.Why = rate + ", but no standalone reproduction shows it yet"
	case !repro.Shows():
		c.Why = fmt.Sprintf("%s, but its standalone reproduction, %s, did not show it (%s)", rate, repro.ID, repro.Outcome())
	default:
		c.Confirmed = true
		c.Why = fmt.Sprintf("%s, and its standalone reproduction, %s, shows it", rate, repro.ID)
	}
	return c
}

// cell is the record's cell of fault.
func (an Analysis) cell(fault string) (Cell, bool) {
	i := slices.IndexFunc(an.Record.Cells, func(c Cell) bool { return c.Fault == fault })
	if i < 0 {
		return Cell{}, false
	}
	return an.Record.Cells[i], true
}

// Findings are the record's findings that break a claim or the hold, judged by the
// claims as they read now, the cells' first.
func (an Analysis) Findings() []Judged {
	var out []Judged
	for _, f := range an.Record.Findings {
		j := an.Claims.Judge(an.plan(f), f.Class)
		if f.Timing == "" {
			j = an.Claims.JudgeCell(f.Faults, f.Class) // a cell's, judged as its cell
		}
		if !j.Standing.Finding() {
			continue
		}
		jd := Judged{Finding: f, Judgement: j}
		for i, l := range an.Claims.Lookups {
			if l.Class == string(f.Class) && slices.Contains(j.Claims, l.Claim) {
				jd.Lookup = &an.Claims.Lookups[i]
			}
		}
		out = append(out, jd)
	}
	return out
}

// plan is the faults a finding is judged under: its plan's, and for an exploration's
// whose holders' work reached their lease, the slowing that stands for.
func (an Analysis) plan(f Finding) []string {
	p := FaultsOf(f.Faults)
	if slow := Slowed(an.Record.Kind, f.Timing); slow != "" {
		p = append(slices.DeleteFunc(p, func(k string) bool { return k == faults.None }), slow)
	}
	return p
}

// Worst is the most frequent class of the cells that breaks a claim or the hold, the
// most severe first among equals: "OVERSOLD 20/20 (84%-100%) under clock-jump"; empty
// when none does.
func (an Analysis) Worst() string {
	var worst string
	var k, n, rank int
	for _, cell := range an.Record.Cells {
		judged := cell.Judged()
		for _, s := range cell.Seen(an.Claims) {
			r := severityOf(s.Class)
			if s.Standing.Finding() && (worst == "" || s.K*n > k*judged || s.K*n == k*judged && r > rank) {
				worst = fmt.Sprintf("%s %s under %s", s.Class, cell.Rate(s.K), cell.Fault)
				k, n, rank = s.K, judged, r
			}
		}
	}
	return worst
}

// Headline is the page's first line: claims held and broken, findings and those confirmed, the
// worst rate.
func (an Analysis) Headline() string {
	t := an.tally()
	fs := an.Findings()
	confirmed := an.confirmed(fs)
	s := fmt.Sprintf("%d of %d claims held, %d broken", t.held, t.couldFail(), t.broken)
	if t.unexercised > 0 {
		s += fmt.Sprintf(", %d not exercised", t.unexercised)
	}
	if t.admitsOnly > 0 {
		s += fmt.Sprintf(" (%d more admit%s only, forbidding nothing)", t.admitsOnly, map[bool]string{true: "s"}[t.admitsOnly == 1])
	}
	s += fmt.Sprintf("; %s, %d of them confirmed", plural(len(fs), "finding"), confirmed)
	if w := an.Worst(); w != "" {
		return s + "; worst: " + w
	}
	return s + "; nothing beyond what it claims"
}

// tally counts the claims by status.
type tally struct{ held, broken, unexercised, admitsOnly int }

// couldFail counts the claims a sale could have broken: those that forbid a class.
func (t tally) couldFail() int { return t.held + t.broken + t.unexercised }

// qualified lists what another claim admitted of what cl forbids, in cl's cells ("LOST
// under worker-term by kill-9"): a claim held only because another qualifies it says so,
// rather than reading as held outright.
func (an Analysis) qualified(cl Claim) []string {
	var out []string
	for _, cell := range an.Record.Cells {
		if !an.Claims.Covers(cl, cell.Fault) {
			continue
		}
		for _, s := range cell.Seen(an.Claims) {
			if s.Standing == Admitted && slices.Contains(cl.Never, string(s.Class)) {
				out = append(out, fmt.Sprintf("%s under %s by %s", s.Class, cell.Fault, strings.Join(s.Claims, ", ")))
			}
		}
	}
	return out
}

// confirmed counts the findings of fs the rule confirms.
func (an Analysis) confirmed(fs []Judged) int {
	n := 0
	for _, f := range fs {
		if an.Confirmation(f).Confirmed {
			n++
		}
	}
	return n
}

func (an Analysis) tally() (t tally) {
	for _, cl := range an.Claims.Claims {
		switch an.ClaimStatus(cl) {
		case Held:
			t.held++
		case Broken:
			t.broken++
		case AdmitsOnly:
			t.admitsOnly++
		default:
			t.unexercised++
		}
	}
	return t
}

// md is a page being written: p writes a line of it.
type md struct{ strings.Builder }

func (b *md) p(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }

// Page is the library's page, in Markdown: what it is and where it came from, what it
// claims, what each fault did, what a lock's library told its holders, the findings, what the exploration searched, and where
// the time went.
func (an Analysis) Page() string {
	var b md
	an.header(&b)
	an.claims(&b)
	an.cells(&b)
	an.word(&b)
	an.findings(&b)
	an.time(&b)
	return b.String()
}

// time is the table of where the analysis's time went, phase by phase (a record made
// before it was kept has none).
func (an Analysis) time(b *md) {
	r, p := an.Record, b.p
	if len(r.Time) == 0 {
		return
	}
	p("## Where the time went")
	p("")
	p("| phase | wall | sales | sales at once | the sales' own time |\n|---|---|---|---|---|")
	for _, t := range r.Time {
		p("| %s | %s | %d | %.1f | %s |", t.Phase, t.Wall.Round(time.Second), t.Sales, t.AtOnce(), t.Spent)
	}
	p("")
	p("A sale's own time: starting its servers or taking them from the pool (servers), the design's set-up with its adapter's processes, the faults' and the stock's (set-up), the sale itself (selling), and the final reads and oracles (judging).")
	p("")
}

// header is the page's title, headline and the table of where the release came from
// and how it was measured.
func (an Analysis) header(b *md) {
	c, r, p := an.Claims, an.Record, b.p
	p("# %s %s (%s), analysed", c.Title, c.Release, c.Language)
	p("")
	p("<!-- Generated by stockbench analyse from claims/%s.json and records/%s.json; make analyses regenerates it. -->", c.Library, c.Library)
	p("")
	p("**%s.**", an.Headline())
	p("")
	p("| | |\n|---|---|")
	p("| Release | %s, from %s |", c.Release, c.From)
	p("| Design | `%s` |", bench.ShellLine(c.Design))
	p("| Sale | `stockbench %s` |", bench.ShellLine(r.Sale.Args()))
	p("| Draws | %d per fault under %d faults; %d sales in all, in %s on %s |", cellRuns(r), len(r.Cells), r.Sales, r.Elapsed, r.Machine)
	if c.Tracker != "" {
		p("| Tracker | https://github.com/%s/issues |", c.Tracker)
	}
	p("| Measured | %s%s |", r.Date, map[bool]string{true: "", false: " (interrupted: what was measured until then)"}[r.Complete])
	p("")
	if c.Notes != "" {
		p("%s", c.Notes)
		p("")
	}
	for _, d := range c.Deployments {
		src := d.Source
		if d.URL != "" {
			src = fmt.Sprintf("[%s](%s)", d.Source, d.URL)
		}
		over := ""
		if d.Nodes > 1 {
			over = fmt.Sprintf(" over %d independent lock servers (servers=k: the first k of them struck at once)", d.Nodes)
		}
		if len(d.Settings) > 0 {
			over += " with " + d.settings()
		}
		p("Deployment **%s**: %s%s, as %s prescribes: %s", d.Name, strings.Join(d.Faults, ", "), over, src, quote(d.Quote))
		p("")
	}
}

// claims lists each claim: how it fared, its quote, source and mapping.
func (an Analysis) claims(b *md) {
	p := b.p
	p("## What it claims")
	p("")
	p("Each claim is quoted from the library as shipped, and mapped to the classes it forbids (never) and allows (admits) under the faults it speaks to. Where it says nothing of a fault, the library is held to no %s.", joinClasses(HeldTo))
	p("")
	for _, cl := range an.Claims.Claims {
		status := string(an.ClaimStatus(cl))
		if q := an.qualified(cl); len(q) > 0 {
			status += "; qualified: " + strings.Join(q, ", ")
		}
		p("- **%s** (%s). %s", cl.ID, status, quote(cl.Quote))
		src := cl.Source
		if cl.URL != "" {
			src = fmt.Sprintf("[%s](%s)", cl.Source, cl.URL)
		}
		in := ""
		if len(cl.Deployments) > 0 {
			in = " in deployment " + strings.Join(cl.Deployments, ", ") + " (where it speaks first)"
		}
		p("  - From %s. Under %s%s: %s.", src, strings.Join(cl.Faults, ", "), in, mapping(cl))
		if cl.Why != "" {
			p("  - %s", cl.Why)
		}
	}
	p("")
}

// cells is the table of each fault's classes, judged.
func (an Analysis) cells(b *md) {
	r, p := an.Record, b.p
	p("## What it did")
	p("")
	p("Each fault alone, %d draws; a class's rate is the draws that showed it, with its 95%% interval.", cellRuns(r))
	p("")
	p("| Fault | Classes | Against the claims |\n|---|---|---|")
	for _, cell := range r.Cells {
		p("| %s | %s | %s |", cell.Fault, cellLine(cell), standings(an.Claims, cell))
	}
	// A cell the claims file gained after its record was measured (a deployment added).
	named, _ := an.Claims.Cells(r.Kind)
	for _, f := range named {
		if !slices.ContainsFunc(r.Cells, func(c Cell) bool { return c.Fault == f }) {
			p("| %s | not measured | named by the claims file after this record was measured: `make analyses LIBS=%s` measures it |", f, an.Claims.Library)
		}
	}
}

// findings writes the cells' findings and the exploration's that break a claim in full,
// then what the exploration searched, with its findings that break the hold in a table.
func (an Analysis) findings(b *md) {
	r, p := an.Record, b.p
	var detail, hold []Judged
	for _, f := range an.Findings() {
		if f.Timing != "" && f.Standing == BreaksHold {
			hold = append(hold, f)
		} else {
			detail = append(detail, f)
		}
	}
	p("")
	p("## Findings")
	p("")
	if len(detail) == 0 {
		p("None: every class the cells showed is one a claim admits or one nobody claimed either way, and the exploration broke no claim.")
		p("")
	}
	for i, f := range detail {
		an.finding(b, i+1, f)
	}
	for _, r := range an.Record.Repros {
		if !slices.ContainsFunc(detail, func(f Judged) bool { return f.Timing == "" && f.Faults == r.Faults && f.Class == r.Class }) {
			p("A standalone reproduction of %s under %s, which these cells did not find, [%s/%s](%s/%s/) (`%s`, run %s): %s.\n",
				r.Class, r.Faults, ReproDir, r.ID, ReproDir, r.ID, r.Command, r.Date, r.Outcome())
		}
	}
	if stale := an.unsettled(); len(stale) > 0 {
		p("Measured before the claims forbade them, so not shrunk or rerun yet (make analyses LIBS=%s):", an.Claims.Library)
		p("")
		for _, l := range stale {
			p("- %s", l)
		}
		p("")
	}
	if x := r.Exploration; x != nil {
		p("## What the exploration searched")
		p("")
		p("Sizes, timings and faults together, for what the cells leave open: %d draws, %d sales in %s (seed %d) over %s. A sale whose holders' work reaches their lease is judged as under %s; a rerun whose planned fault never struck is left out of its finding's rate.",
			x.Draws, x.Sales, x.Budget, x.Seed, strings.Join(x.Faults, ", "), cmp.Or(Slowed(r.Kind, "work >= "), "slow-work"))
		if len(x.NeverStruck) > 0 {
			p("Never struck: %s.", strings.Join(x.NeverStruck, ", "))
		}
		if !x.Complete {
			p("Interrupted: what was found until then.")
		}
		if len(hold) > 0 {
			p("")
			p("What it found that no claim speaks to, held to no %s (none confirmed):", joinClasses(HeldTo))
			p("")
			p("| Faults | Timing | Class | Reruns | Rerun |\n|---|---|---|---|---|")
			for _, f := range hold {
				p("| %s | %s | %s | %s | `stockbench %s --runs %d` |", planWords(f.Faults), f.Timing, f.Class, results.Proportion(f.Shown, f.Reruns), bench.ShellLine(f.Smallest.Args()), Reruns)
			}
		}
		p("")
	}
}

// finding writes finding n: its standing, rate, smallest sale, reruns, tracker and
// timeline, and for one that breaks the library's claim unknown to its tracker, a
// draft report.
func (an Analysis) finding(b *md, n int, f Judged) {
	p := b.p
	where := "under " + f.Faults
	if f.Timing != "" {
		where = fmt.Sprintf("found exploring, under %s, %s", planWords(f.Faults), f.Timing)
	}
	p("### %d. %s %s: %s", n, f.Class, where, an.standingWords(f.Judgement, f.Faults))
	p("")
	if f.Timing == "" {
		for _, cell := range an.Record.Cells {
			if cell.Fault == f.Faults {
				for _, s := range cell.Seen(an.Claims) {
					if s.Class == f.Class {
						p("- In the cell: %s of the draws.", cell.Rate(s.K))
					}
				}
			}
		}
	}
	shrunk := "shrunk"
	if !f.Shrunk {
		shrunk = "the shrink's time ran out here"
	}
	p("- Smallest sale: %s buyers, a stock of %s (%s, %d sales).", f.Smallest.Get("buyers"), f.Smallest.Get("stock"), shrunk, f.ShrinkSales)
	p("- Reruns: %s showed it again%s. %s", results.Proportion(f.Shown, f.Reruns), controlWords(f.Finding), an.bugWords(f))
	p("- Rerun: `stockbench %s --runs %d`", bench.ShellLine(f.Smallest.Args()), Reruns)
	if f.Standing == Breaks {
		p("- Tracker: %s", lookupWords(an.Claims.Tracker, f.Lookup))
	}
	p("")
	p("```\n%s\n```", strings.Join(f.Timeline, "\n"))
	p("")
	repro, reproduced := an.reproOf(f.Finding)
	if reproduced {
		p("Its standalone reproduction, [%s/%s](%s/%s/) (`%s`, run %s in %s): %s. Its report: [%s/%s.md](%s/%s.md).\n",
			ReproDir, repro.ID, ReproDir, repro.ID, repro.Command, repro.Date, repro.Elapsed, repro.Outcome(), ReportsDir, repro.ID, ReportsDir, repro.ID)
		p("```\n%s\n```\n", strings.Join(repro.Output, "\n"))
	}
	if an.Confirmation(f).Statistics && !reproduced && (f.Lookup == nil || f.Lookup.Known == "") {
		p("<details><summary>Draft report for %s</summary>\n", an.Claims.Tracker)
		p("**%s %s: %s under %s**\n", an.Claims.Title, an.Claims.Release, f.Class, f.Faults)
		for _, id := range f.Claims {
			for _, cl := range an.Claims.Claims {
				if cl.ID == id {
					p("The docs say (%s): %s\n", cl.Source, quote(cl.Quote))
				}
			}
		}
		p("Under %s, a sale of %s buyers and a stock of %s showed %s in %d of %d reruns. To rerun it: `stockbench %s --runs %d`. What happened, on the sale's clock:\n",
			f.Faults, f.Smallest.Get("buyers"), f.Smallest.Get("stock"), f.Class, f.Shown, f.Reruns, bench.ShellLine(f.Smallest.Args()), Reruns)
		p("```\n%s\n```\n</details>\n", strings.Join(f.Timeline, "\n"))
	}
}

// unsettled are the cells' findings, as the claims read now, that the record has no
// shrink and reruns of: a claim's mapping changed after the measurement.
func (an Analysis) unsettled() []string {
	var out []string
	for _, cell := range an.Record.Cells {
		s, ok := cell.Target(an.Claims)
		if !ok || slices.ContainsFunc(an.Record.Findings, func(f Finding) bool { return f.Timing == "" && f.Faults == cell.Fault && f.Class == s.Class }) {
			continue
		}
		out = append(out, fmt.Sprintf("%s under %s, %s of the draws: %s", s.Class, cell.Fault, cell.Rate(s.K), an.standingWords(s.Judgement, cell.Fault)))
	}
	return out
}

// standingWords say how a finding stands against the claims.
func (an Analysis) standingWords(j Judgement, plan string) string {
	if j.Standing == Breaks {
		return "breaks the claim " + joinIDs(j.Claims)
	}
	return fmt.Sprintf("the library says nothing of this under %s; it breaks the hold (no %s)", plan, joinClasses(HeldTo))
}

// bugWords say whether the rule confirms the finding, and why not when it does not.
func (an Analysis) bugWords(f Judged) string {
	c := an.Confirmation(f)
	if c.Confirmed {
		return fmt.Sprintf("**Confirmed**: it breaks the library's own claim; %s.", c.Why)
	}
	if c.Statistics {
		return fmt.Sprintf("**Above its control**: %s.", c.Why)
	}
	return fmt.Sprintf("Not confirmed: %s.", c.Why)
}

// controlWords say what the reruns without the fault showed, when they ran.
func controlWords(f Finding) string {
	if f.ControlRuns == 0 {
		return ""
	}
	return fmt.Sprintf(", %s without the fault", results.Proportion(f.ControlShown, f.ControlRuns))
}

func lookupWords(tracker string, l *Lookup) string {
	switch {
	case l == nil:
		return "not looked up yet"
	case l.Known != "":
		repo, num, _ := strings.Cut(l.Known, "#")
		return fmt.Sprintf("known: [%s](https://github.com/%s/issues/%s) %s", l.Known, repo, num, quote(l.Title))
	}
	return fmt.Sprintf("not found in %s's tracker on %s (searched: %s)", tracker, l.Searched, quote(l.Query))
}

// standings say, for a cell, how each class seen stands.
func standings(c *Claims, cell Cell) string {
	var parts []string
	for _, s := range cell.Seen(c) {
		w := string(s.Standing)
		if len(s.Claims) > 0 {
			w += " (" + joinIDs(s.Claims) + ")"
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", s.Class, cell.Rate(s.K), w))
	}
	if n := cell.NotExercised(); n > 0 {
		w := fmt.Sprintf("the fault never struck in %d", n)
		if slices.ContainsFunc(cell.Draws, func(d results.Draw) bool { return unstruck(d) && d.Class != oracle.ClassNotExercised }) {
			w += ", whose classes are left out"
		}
		parts = append(parts, w)
	}
	return cmp.Or(strings.Join(parts, "; "), "nothing found")
}

// Summary is docs/analyses/README.md: one row per library.
func Summary(all []Analysis) string {
	var b strings.Builder
	b.WriteString("# Libraries analysed\n\n<!-- Generated by stockbench analyse; make analyses regenerates it. -->\n\n")
	b.WriteString("Each library at the release people run, measured against what its own docs claim: every fault alone over many draws, each finding shrunk, rerun and looked up in the library's tracker. A finding is confirmed only when it breaks the library's own claim, the 95% interval of its rate (its cell's draws and at least 20 reruns of its smallest sale) lies above its control's (the same without the fault), and a standalone reproduction shows it.\n\n")
	for _, kind := range []results.SaleKind{results.LockSale, results.QueueSale} {
		if len(ofKind(all, kind)) == 0 {
			continue
		}
		var t md
		comparisonTable(&t, all, kind)
		fmt.Fprintf(&b, "## The %s libraries compared\n\nWhat a flash sale must add to each: [%s](%s).\n\n%s\n", kindWords[kind], comparisons[kind], comparisons[kind], t.String())
	}
	b.WriteString("## Each library\n\n")
	b.WriteString("Claims held / broken counts the claims that forbid something, which a sale could break; a claim that only admits classes is counted apart (+n admit only).\n\n")
	b.WriteString("| Library | Language | Release, from | Claims held / broken | Findings (confirmed) | Worst rate | Measured |\n|---|---|---|---|---|---|---|\n")
	slices.SortFunc(all, summaryOrder)
	for _, an := range all {
		t := an.tally()
		claims := fmt.Sprintf("%d / %d of %d", t.held, t.broken, t.couldFail())
		if t.admitsOnly > 0 {
			claims += fmt.Sprintf(" (+%d admit only)", t.admitsOnly)
		}
		fs := an.Findings()
		confirmed := an.confirmed(fs)
		fmt.Fprintf(&b, "| [%s](%s.md) | %s | %s, from %s | %s | %d (%d) | %s | %s |\n", an.Claims.Title, an.Claims.Library, an.Claims.Language,
			an.Claims.Release, an.Claims.From, claims, len(fs), confirmed, cmp.Or(an.Worst(), "none"), an.Record.Date)
	}
	return b.String()
}

func cellRuns(r *Record) int {
	n := 0
	for _, c := range r.Cells {
		n = max(n, len(c.Draws)+c.Unfinished)
	}
	return n
}

// plural is n things: "1 finding", "3 findings".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func quote(s string) string { return "“" + strings.TrimSpace(s) + "”" }

// mapping says what a claim forbids and admits: "never LOCK-BROKEN; admits OVERLAP".
func mapping(cl Claim) string {
	var parts []string
	if len(cl.Never) > 0 {
		parts = append(parts, "never "+strings.Join(cl.Never, ", "))
	}
	if len(cl.Admits) > 0 {
		parts = append(parts, "admits "+strings.Join(cl.Admits, ", "))
	}
	return strings.Join(parts, "; ")
}

func joinClasses(cs []oracle.Class) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// planWords is an exploration's fault plan as the page says it.
func planWords(plan string) string { return cmp.Or(plan, "no fault") }
