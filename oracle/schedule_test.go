package oracle

import (
	"slices"
	"testing"
	"time"
)

func TestCheckSchedule(t *testing.T) {
	fire := func(wave, by int, units int64, at time.Duration) Fire {
		return Fire{Wave: wave, Scheduler: by, Units: units, At: at * time.Millisecond}
	}
	ok := &Final{Horizon: time.Second}
	for _, c := range []struct {
		name      string
		waves     int
		due       int
		stock     int64
		fires     []Fire
		final     *Final
		class     Class
		cell      string
		findings  []string
		explained string
	}{
		{name: "every wave once", waves: 3, due: 3, stock: 6,
			fires: []Fire{fire(0, 1, 2, 0), fire(1, 2, 2, 250), fire(2, 3, 2, 500)},
			final: &Final{Stock: 6, Horizon: time.Second}, class: ClassSafe, cell: "SAFE"},
		{name: "a wave fired twice oversells its units", waves: 3, due: 3, stock: 6,
			fires: []Fire{fire(0, 1, 2, 0), fire(1, 2, 2, 250), fire(1, 1, 2, 600), fire(2, 3, 2, 500)},
			final: &Final{Stock: 8, Horizon: time.Second}, class: ClassOversold, cell: "OVERSOLD 2",
			findings:  []string{"OVERSOLD 2", "FIRED-TWICE 1"},
			explained: "wave 2 fired 2 times: by scheduler 2 at 250ms, by scheduler 1 at 600ms"},
		{name: "a wave of no units fired twice is a duplicate", waves: 3, due: 3, stock: 1,
			fires: []Fire{fire(0, 1, 1, 0), fire(1, 2, 0, 250), fire(1, 3, 0, 260), fire(2, 1, 0, 500)},
			final: &Final{Stock: 1, Horizon: time.Second}, class: ClassDuplicated, cell: "DUPLICATED 1",
			findings: []string{"FIRED-TWICE 1"}, explained: "wave 2 fired 2 times: by scheduler 2 at 250ms, by scheduler 3 at 260ms"},
		{name: "a wave due that nobody fired is stuck", waves: 3, due: 3, stock: 3,
			fires: []Fire{fire(0, 1, 1, 0)}, final: &Final{Stock: 1, Horizon: time.Second},
			class: ClassStuck, cell: "STUCK", findings: []string{"MISSED 2"}},
		{name: "waves not yet due when the sale stopped are not missed", waves: 3, due: 1, stock: 3,
			fires: []Fire{fire(0, 1, 1, 0)}, final: &Final{Stock: 1, Horizon: time.Second}, class: ClassSafe, cell: "SAFE"},
		{name: "a counter that disagrees with the log lost writes", waves: 1, due: 1, stock: 2,
			fires: []Fire{fire(0, 1, 2, 0)}, final: &Final{Stock: 0, Horizon: time.Second}, class: ClassLost, cell: "LOST 2"},
		{name: "unread", waves: 1, due: 1, stock: 1, fires: []Fire{fire(0, 1, 1, 0)}, class: ClassUnknown, cell: "UNKNOWN"},
		{name: "a lock left for good", waves: 1, due: 1, stock: 1, fires: []Fire{fire(0, 1, 1, 0)},
			final: &Final{Stock: 1, LockTTL: -1, Horizon: ok.Horizon}, class: ClassStuck, cell: "STUCK", findings: []string{"STUCK"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := CheckSchedule(3, c.waves, c.due, c.stock, c.fires, nil, c.final)
			v := r.Outcome()
			if v.Class != c.class || v.Cell() != c.cell {
				t.Errorf("got %s (%s), want %s", v.Cell(), v, c.cell)
			}
			if c.findings != nil && !slices.Equal(v.Findings, c.findings) {
				t.Errorf("findings %q, want %q", v.Findings, c.findings)
			}
			if got := r.Schedule.Explain(); c.explained != "" && (len(got) != 1 || got[0] != c.explained) {
				t.Errorf("explained %q, want %q", got, c.explained)
			}
		})
	}
}

func TestFireRoundTrip(t *testing.T) {
	f := Fire{Wave: 4, Scheduler: 2, Units: 5, At: 1234567 * time.Nanosecond}
	got, err := ParseFire(f.String())
	if err != nil || got != f {
		t.Fatalf("ParseFire(%q) = %+v, %v", f, got, err)
	}
	for _, bad := range []string{"", "1/2/3", "a/b/c/d", "1/2/3/4/5x"} {
		if _, err := ParseFire(bad); err == nil {
			t.Errorf("ParseFire(%q): want an error", bad)
		}
	}
}
