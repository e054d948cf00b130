package report

import (
	"cmp"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// htmlViolations is a run's worst violations, each drawn as a timeline of its holds.
type htmlViolations struct {
	Anchor, Name, Cell, Verdict, Rerun, Repeats string
	// Notes say what the timelines alone do not: which waves of a drop fired twice.
	Notes     []string
	Timelines []htmlTimeline
}

type htmlTimeline struct {
	Title string
	SVG   template.HTML
}

// violationsOf is the timelines of every run that kept violations.
func violationsOf(runs []results.Run) []htmlViolations {
	var out []htmlViolations
	for i := range runs {
		r := &runs[i]
		notes := r.Oracle.Schedule.Explain()
		if len(r.Oracle.Violations) == 0 && len(notes) == 0 && (r.Queue == nil || len(r.Queue.Tasks) == 0) {
			continue
		}
		hv := htmlViolations{Anchor: violationAnchor(r), Name: r.Subject() + " / " + r.Label() + " / " + r.FaultPlan(),
			Cell: r.Verdict.Cell(), Verdict: r.Verdict.String(), Notes: notes}
		if len(r.Rerun) > 0 {
			hv.Rerun = "stockbench " + strings.Join(r.Rerun, " ")
		}
		if rep := r.Repeats; rep != nil {
			hv.Repeats = fmt.Sprintf("%d of %d reruns earned %s", rep.Same, rep.Times, r.Verdict.Class)
		}
		who := "buyer"
		if r.Params.Waves > 0 {
			who = "scheduler"
		}
		for _, v := range r.Oracle.Violations {
			title := fmt.Sprintf("%s: %s %d came in at %s while %s %d held the lock; together %s",
				v.Class, who, v.Second.Buyer, ms(v.At), who, v.First.Buyer, ms(v.For))
			hv.Timelines = append(hv.Timelines, htmlTimeline{Title: title, SVG: timelineSVG(v, r.Events, who)})
		}
		if q := r.Queue; q != nil {
			lease, _ := time.ParseDuration(r.Params.Visibility)
			for _, v := range q.Tasks {
				what := cmp.Or(string(v.Class), "LEASE-OVERLAP")
				title := fmt.Sprintf("%s: task %s delivered %d times, its order applied or refused %d times", what, v.Task, len(v.Takes), v.Applied)
				hv.Timelines = append(hv.Timelines, htmlTimeline{Title: title, SVG: taskSVG(v, lease, r.Events)})
			}
		}
		out = append(out, hv)
	}
	return out
}

// violationAnchor is the id of a run's timelines in the page.
func violationAnchor(r *results.Run) string {
	return "violations-" + fileSafe(r.Subject()+"-"+r.Label()+"-"+r.FaultPlan())
}

func ms(d time.Duration) string { return results.FormatDuration(d) }

// The drawing's geometry, in px.
const (
	tlWidth, tlLeft, tlRight = 1000, 90, 20
	tlRow, tlTop             = 46, 26
)

// axis is a drawing's time scale and frame, shared by the holds' and the tasks' timelines.
type axis struct {
	lo, hi time.Duration
	rows   int
	b      strings.Builder
}

// newAxis frames the span from..to, padded, for rows rows.
func newAxis(from, to time.Duration, rows int) *axis {
	span := max(to-from, time.Millisecond)
	a := &axis{lo: max(from-span/20, 0), hi: to + span/20, rows: rows}
	fmt.Fprintf(&a.b, `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="100%%" role="img" font-family="sans-serif" font-size="11">`, tlWidth, a.height())
	return a
}

func (a *axis) height() int { return tlTop + tlRow*a.rows + 30 }

func (a *axis) x(t time.Duration) float64 {
	return tlLeft + float64(t-a.lo)/float64(a.hi-a.lo)*(tlWidth-tlLeft-tlRight)
}

// y is the middle of row i.
func (a *axis) y(i int) float64 { return float64(tlTop + tlRow*i + 10) }

// faults shades each fault from when it struck until it was over, with its name.
func (a *axis) faults(events []faults.Event) {
	for _, e := range events {
		from := cmp.Or(e.Began, e.At)
		if e.At < a.lo || from > a.hi {
			continue
		}
		from, to := max(from, a.lo), min(e.At, a.hi)
		label := template.HTMLEscapeString(string(e.Fault))
		if to > from {
			fmt.Fprintf(&a.b, `<rect x="%.1f" y="12" width="%.1f" height="%d" fill="#999" fill-opacity="0.2"><title>%s: %s</title></rect>`,
				a.x(from), a.x(to)-a.x(from), a.height()-42, label, template.HTMLEscapeString(e.Detail))
		}
		// What the fault did is the marker's tooltip, for a fault of one moment too (an
		// eviction, a death): the timeline then says which keys went, and whose task.
		what := label + ": " + template.HTMLEscapeString(e.Detail)
		fmt.Fprintf(&a.b, `<line x1="%.1f" x2="%.1f" y1="12" y2="%d" stroke="#777" stroke-dasharray="2,2"><title>%s</title></line><text x="%.1f" y="10" fill="#555"><title>%s</title>%s</text>`,
			a.x(from), a.x(from), a.height()-30, what, a.x(from)+2, what, label)
	}
}

// bar draws a span of row i in color, with a tooltip.
func (a *axis) bar(i int, from, to time.Duration, color, title string) {
	fmt.Fprintf(&a.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="12" fill="%s"><title>%s</title></rect>`,
		a.x(from), a.y(i)-6, max(a.x(to)-a.x(from), 0), color, template.HTMLEscapeString(title))
}

// line draws a thin span of row i.
func (a *axis) line(i int, from, to time.Duration, color, title string) {
	fmt.Fprintf(&a.b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"><title>%s</title></line>`,
		a.x(from), a.x(to), a.y(i), a.y(i), color, template.HTMLEscapeString(title))
}

// end marks a moment of row i with a dashed red tick: a lease's end.
func (a *axis) end(i int, at time.Duration, title string) {
	fmt.Fprintf(&a.b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="4,2"><title>%s</title></line>`,
		a.x(at), a.x(at), a.y(i)-12, a.y(i)+12, template.HTMLEscapeString(title))
}

// mark writes text under row i at at.
func (a *axis) mark(i int, at time.Duration, text, color, title string) {
	fmt.Fprintf(&a.b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-weight="bold" fill="%s"><title>%s</title>%s</text>`,
		a.x(at), a.y(i)+22, color, template.HTMLEscapeString(title), template.HTMLEscapeString(text))
}

// label names row i.
func (a *axis) label(i int, text string) {
	fmt.Fprintf(&a.b, `<text x="4" y="%.1f">%s</text>`, a.y(i)+4, template.HTMLEscapeString(text))
}

// svg closes the drawing with its time axis.
func (a *axis) svg() template.HTML {
	ay := a.height() - 22
	fmt.Fprintf(&a.b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`, tlLeft, tlWidth-tlRight, ay, ay)
	for k := 0; k <= 5; k++ {
		t := a.lo + (a.hi-a.lo)*time.Duration(k)/5
		fmt.Fprintf(&a.b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#333"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`,
			a.x(t), a.x(t), ay, ay+4, a.x(t), ay+16, ms(t))
	}
	a.b.WriteString(`</svg>`)
	return template.HTML(a.b.String())
}

// timelineSVG draws two holds on one time axis: each acquire from its send to its reply,
// the span it was surely inside its lease (green) and the rest of the hold (orange),
// where its lease ran out (a dashed line), the stock read (R) and write (W), the release
// (a thin line to its reply; a cross where the holder died), the overlap shaded red, and
// the faults shaded grey from when they struck to when they were over. Its rows are
// named who (buyer, or a drop's scheduler) and number.
func timelineSVG(v oracle.Violation, events []faults.Event, who string) template.HTML {
	holds := []oracle.Hold{v.First, v.Second}
	lo, hi := v.First.Sent, v.First.Sent
	for _, h := range holds {
		lo = min(lo, h.Sent)
		hi = max(hi, h.Leave, h.Released, h.Lease)
	}
	a := newAxis(lo, hi, len(holds))
	fmt.Fprintf(&a.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#d62728" fill-opacity="0.15"><title>both held the lock: %s</title></rect>`,
		a.x(v.At), tlTop-8, max(a.x(v.At+v.For)-a.x(v.At), 1), tlRow*len(holds), ms(v.For))
	a.faults(events)
	for i, h := range holds {
		a.label(i, fmt.Sprintf("%s %d", who, h.Buyer))
		a.line(i, h.Sent, h.Enter, "#1f77b4", fmt.Sprintf("acquire sent %s, answered %s", ms(h.Sent), ms(h.Enter)))
		sure := max(h.Sure(), h.Enter)
		a.bar(i, h.Enter, sure, "#2ca02c", fmt.Sprintf("surely inside its lease: %s to %s", ms(h.Enter), ms(sure)))
		if h.Leave > sure {
			a.bar(i, sure, h.Leave, "#ff7f0e", fmt.Sprintf("held past its lease: %s to %s", ms(sure), ms(h.Leave)))
		}
		a.end(i, h.Lease, "lease ends "+ms(h.Lease))
		if h.Read > 0 {
			a.mark(i, h.Read, "R", "#000", "stock read answered "+ms(h.Read))
		}
		if h.Wrote > 0 {
			a.mark(i, h.Wrote, "W", "#000", "stock write answered "+ms(h.Wrote))
		}
		switch {
		case h.Died:
			a.mark(i, h.Leave, "✕", "#d62728", "the holder died "+ms(h.Leave))
		case h.Released > 0:
			gone := ""
			if h.Expired {
				gone = ": the lock was already gone"
			}
			a.line(i, h.Leave, h.Released, "#555", fmt.Sprintf("release sent %s, answered %s%s", ms(h.Leave), ms(h.Released), gone))
		}
	}
	return a.svg()
}

// takeResults names what a worker made of a delivery.
var takeResults = map[oracle.TakeResult]string{oracle.TakeFailed: "failed", oracle.TakeFulfilled: "applied",
	oracle.TakeRefused: "refused", oracle.TakeRepeat: "found done", oracle.TakeCrashed: "worker died"}

// taskSVG draws every delivery of a task on one time axis: the dequeue from its call to
// its return (blue), the work until the fulfil returned (green), where the delivery's
// lease (the visibility timeout) ran out, and what became of it.
func taskSVG(v oracle.TaskViolation, lease time.Duration, events []faults.Event) template.HTML {
	if len(v.Takes) == 0 {
		return ""
	}
	lo, hi := v.Takes[0].Begin, v.Takes[0].End
	for _, t := range v.Takes {
		lo, hi = min(lo, t.Begin), max(hi, t.End, t.Fulfilled)
		if lease > 0 {
			hi = max(hi, t.Begin+lease)
		}
	}
	a := newAxis(lo, hi, len(v.Takes))
	a.faults(events)
	for i, t := range v.Takes {
		a.label(i, fmt.Sprintf("delivery %d", i+1))
		a.line(i, t.Begin, t.End, "#1f77b4", fmt.Sprintf("dequeue called %s, returned %s", ms(t.Begin), ms(t.End)))
		done := t.Fulfilled
		if done == 0 {
			done = t.End
		}
		a.bar(i, t.End, done, "#2ca02c", fmt.Sprintf("worked %s to %s", ms(t.End), ms(done)))
		if lease > 0 {
			a.end(i, t.Begin+lease, "lease (visibility timeout) ends "+ms(t.Begin+lease))
		}
		color := "#000"
		if t.Result == oracle.TakeCrashed || t.Result == oracle.TakeFailed {
			color = "#d62728"
		}
		a.mark(i, done, takeResults[t.Result], color, takeResults[t.Result]+" at "+ms(done))
	}
	return a.svg()
}
