package docs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"

	// The command registers asynq; the tables list it as the command does.
	_ "github.com/stockbench/stockbench/queueimpl/asynq"
)

// markdown writes a table with heads and rows, its cells' pipes escaped.
func markdown(heads []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(esc, " | "))
	}
	line(heads)
	b.WriteString("|" + strings.Repeat("---|", len(heads)) + "\n")
	for _, r := range rows {
		line(r)
	}
	return b.String()
}

func code(s string) string { return "`" + s + "`" }

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// lockTable is docs/designs.md's table of the built-in lock designs: how each works, and
// what it is.
func lockTable() string {
	var rows [][]string
	for _, impl := range lockimpl.All() {
		release, renews := yes(impl.OwnerRelease), yes(impl.Renews)
		if impl.NewPurchaser != nil || impl.Name == "none" {
			release, renews = "no lock", "no lock"
		}
		rows = append(rows, []string{code(impl.Name), impl.Summary, release, renews, fmt.Sprint(impl.LockNodes())})
	}
	return markdown([]string{"name", "how", "owner-checked release", "renews", "lock servers"}, rows)
}

// queueTable is docs/designs.md's table of the built-in queue designs.
func queueTable() string {
	var rows [][]string
	for _, impl := range queueimpl.All() {
		rows = append(rows, []string{code(impl.Name), impl.Summary, impl.Guarantee})
	}
	return markdown([]string{"name", "how", "guarantee"}, rows)
}

// classes writes a documented cell: the classes a verdict may fall in, "-" where nothing
// is documented.
func classes(want []oracle.Class) string {
	if want == nil {
		return "-"
	}
	s := make([]string, len(want))
	for i, c := range want {
		s[i] = string(c)
	}
	return strings.Join(s, " or ")
}

// verdictTable is a table of documented verdicts, a row per design and a column per
// fault (none first).
func verdictTable(first string, kinds []faults.Kind, rows []string, documented func(row int) faults.Verdicts) string {
	heads := []string{first, faults.None}
	for _, k := range kinds {
		heads = append(heads, string(k))
	}
	var out [][]string
	for i, name := range rows {
		v := documented(i)
		row := []string{code(name), classes(v.None)}
		for _, k := range kinds {
			row = append(row, classes(v.Under[k]))
		}
		out = append(out, row)
	}
	return markdown(heads, out)
}

// lockVerdicts is every built-in lock design's documented verdict with no fault and
// under each lock fault of the table.
func lockVerdicts() string {
	impls := lockimpl.All()
	names := make([]string, len(impls))
	for i, impl := range impls {
		names[i] = impl.Name
	}
	return verdictTable("design \\ fault", faults.Kinds(faults.Locks), names, func(i int) faults.Verdicts { return impls[i].Documented })
}

// dropVerdicts is each lock design's documented verdict as a scheduled drop's scheduler
// lock, for those that document one.
func dropVerdicts() string {
	var impls []lockimpl.Impl
	for _, impl := range lockimpl.All() {
		if impl.DropDocumented.Documented() {
			impls = append(impls, impl)
		}
	}
	names := make([]string, len(impls))
	var kinds []faults.Kind
	for i, impl := range impls {
		names[i] = impl.Name
		for k := range impl.DropDocumented.Under {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	order := faults.Kinds(faults.Locks)
	slices.SortFunc(kinds, func(a, b faults.Kind) int { return slices.Index(order, a) - slices.Index(order, b) })
	return verdictTable("design \\ fault", kinds, names, func(i int) faults.Verdicts { return impls[i].DropDocumented })
}

// queueVerdicts is every built-in queue design's documented verdict, with a naive and
// with an idempotent fulfil.
func queueVerdicts() string {
	impls := queueimpl.All()
	var names []string
	var docs []faults.Verdicts
	for _, impl := range impls {
		names = append(names, impl.Name+" (naive)", impl.Name+" (idempotent)")
		docs = append(docs, impl.Documented.Naive, impl.Documented.Idempotent)
	}
	return verdictTable("design (fulfil) \\ fault", faults.Kinds(faults.Queues), names, func(i int) faults.Verdicts { return docs[i] })
}

// faultTable is docs/faults.md's table of every fault: whose sales it breaks, when it
// strikes, its settings with their defaults, which of them a shrink makes smaller, and
// whether the default matrix runs it.
func faultTable() string {
	when := map[faults.Hook]string{faults.AtStart: "the whole sale", faults.OnAcquire: "the nth buyer, as it takes the lock",
		faults.OnVictim: "the nth holder (task)", faults.OnCall: "a share of the calls", faults.OnStep: "the nth time a worker reaches a step"}
	var rows [][]string
	for _, s := range faults.Specs() {
		var settings, shrinks []string
		for _, k := range s.Knobs() {
			set := k.Key + "=" + k.Default
			if len(k.Choices) > 0 {
				set = k.Key + "=" + strings.Join(k.Choices, "|") + " (default " + k.Default + ")"
			}
			settings = append(settings, set)
			if k.Shrinks {
				shrinks = append(shrinks, k.Key)
			}
		}
		where := "default"
		switch {
		case s.Infra():
			where = "`--infra`"
		case !slices.Contains(faults.MatrixKinds(s.Applies), s.Kind):
			where = "by name"
		}
		rows = append(rows, []string{code(string(s.Kind)), s.Applies.String(), when[s.Fires],
			cmp.Or(strings.Join(settings, ", "), "-"), cmp.Or(strings.Join(shrinks, ", "), "-"), where})
	}
	return markdown([]string{"fault", "sales", "strikes", "settings (default)", "a shrink reduces", "matrix"}, rows)
}
