package repro

import (
	"errors"
	"slices"
	"testing"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/trackrecord"
)

// TestReproSales: names pick their bugs, --all every bug, --quick leaves out the slow
// ones, and a fixed release's sale follows its bug's; a command line the run refuses
// stops them all.
func TestReproSales(t *testing.T) {
	accept := func([]string) (bench.Options, []bench.Job, error) { return bench.Options{}, nil, nil }
	var all, quick []string
	for _, e := range trackrecord.All() {
		all = append(all, e.Name)
		if e.Fixed != nil {
			all = append(all, e.Name+" fixed")
		}
		if !e.Slow {
			quick = append(quick, e.Name)
			if e.Fixed != nil {
				quick = append(quick, e.Name+" fixed")
			}
		}
	}
	if len(quick) == len(all) {
		t.Fatal("want a slow bug in the record, for --quick to leave out")
	}
	for name, tc := range map[string]struct {
		cfg  Config
		want []string
	}{
		"one name":    {Config{Names: []string{"rq-2236"}}, []string{"rq-2236"}},
		"a fixed one": {Config{Names: []string{"redsync-149"}}, []string{"redsync-149", "redsync-149 fixed"}},
		"--all":       {Config{All: true}, all},
		"--quick":     {Config{All: true, Quick: true}, quick},
	} {
		t.Run(name, func(t *testing.T) {
			tc.cfg.Read, tc.cfg.Out = accept, t.TempDir()
			sales, err := reproSales(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range sales {
				n := s.entry.Name
				if s.fixed {
					n += " fixed"
				}
				got = append(got, n)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	refuse := func([]string) (bench.Options, []bench.Job, error) { return bench.Options{}, nil, errors.New("no") }
	if _, err := reproSales(Config{All: true, Read: refuse}); err == nil {
		t.Error("want a refused command line to stop the record")
	}
	if _, err := reproSales(Config{Names: []string{"no-such-bug"}, Read: accept}); err == nil {
		t.Error("want an unknown name refused")
	}
}
