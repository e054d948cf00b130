// Package sweep varies one setting of a lock sale over a range (--vary
// SETTING=FROM..TO:N), a sale per value and design, for the report's plots of damage,
// sales/s and p99 against the setting.
package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// sweepSetting is a sale setting a sweep can vary: its flag's name, how its values read
// (a duration, a count or a share) and how one is written into a sale.
type sweepSetting struct {
	flag  string
	kind  string // "duration", "count" or "share"
	apply func(s *scenarios.FlashSale, x float64)
}

// sweepable are the settings a sweep varies.
var sweepable = []sweepSetting{
	{"ttl", "duration", func(s *scenarios.FlashSale, x float64) { s.TTL = seconds(x) }},
	{"think", "duration", func(s *scenarios.FlashSale, x float64) { s.Think = scenarios.Fixed(seconds(x)) }},
	{"retry-interval", "duration", func(s *scenarios.FlashSale, x float64) { s.Retry.Interval = seconds(x) }},
	{"pause-rate", "share", func(s *scenarios.FlashSale, x float64) { s.Faults = withPauseRate(s.Faults, x) }},
	{"buyers", "count", func(s *scenarios.FlashSale, x float64) { s.Buyers = int(x) }},
	{"conns", "count", func(s *scenarios.FlashSale, x float64) { s.Conns = int(x) }},
	{"apps", "count", func(s *scenarios.FlashSale, x float64) { s.Apps = int(x) }},
}

// Settings are the names of the settings a sweep can vary.
func Settings() []string {
	names := make([]string, len(sweepable))
	for i, s := range sweepable {
		names[i] = s.flag
	}
	return names
}

func seconds(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }

// withPauseRate is plan with its client pause at rate p (exponential lengths), added
// when the plan has none.
func withPauseRate(plan faults.Plan, p float64) faults.Plan {
	plan = slices.Clone(plan)
	for i := range plan {
		if plan[i].Kind == faults.ClientPause {
			plan[i].P = p
			if plan[i].Dist == "" {
				plan[i].Dist = faults.Exp
			}
			return plan
		}
	}
	return append(plan, faults.Fault{Kind: faults.ClientPause, P: p, Dist: faults.Exp})
}

// set writes value, as written, into s.
func (v sweepSetting) set(s *scenarios.FlashSale, value string) error {
	x, err := v.read(value)
	if err != nil {
		return err
	}
	v.apply(s, x)
	return nil
}

// read reads a value of the setting as a number: seconds for a duration.
func (v sweepSetting) read(s string) (float64, error) {
	switch v.kind {
	case "duration":
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("%q is not a positive duration", s)
		}
		return d.Seconds(), nil
	case "count":
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%q is not a count of at least 1", s)
		}
		return float64(n), nil
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || !(p > 0 && p <= 1) {
		return 0, fmt.Errorf("%q is not a share above 0 and at most 1", s)
	}
	return p, nil
}

// write writes x as a value of the setting.
func (v sweepSetting) write(x float64) string {
	switch v.kind {
	case "duration":
		return seconds(significant(x, 3)).Round(time.Microsecond).String()
	case "count":
		return strconv.Itoa(int(math.Round(x)))
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// significant rounds x to n significant digits: a log-spaced 271.442ms reads 271ms.
func significant(x float64, n int) float64 {
	if x == 0 {
		return 0
	}
	scale := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
}

// Variation is a parsed --vary: the setting and its points, in order.
type Variation struct {
	setting sweepSetting
	points  []results.SweepPoint
}

// maxPoints bounds a sweep: each point is a sale per design.
const maxPoints = 50

// Parse reads SETTING=FROM..TO:N or SETTING=A,B,C.
func Parse(s string) (Variation, error) {
	name, values, ok := strings.Cut(s, "=")
	if !ok {
		return Variation{}, fmt.Errorf("%q: want SETTING=FROM..TO:N or SETTING=A,B,C", s)
	}
	i := slices.IndexFunc(sweepable, func(v sweepSetting) bool { return v.flag == name })
	if i < 0 {
		return Variation{}, fmt.Errorf("unknown setting %q (settings: %s)", name, strings.Join(Settings(), ", "))
	}
	v := Variation{setting: sweepable[i]}
	var xs []float64
	if from, rest, ok := strings.Cut(values, ".."); ok {
		to, n, ok := strings.Cut(rest, ":")
		if !ok {
			return Variation{}, fmt.Errorf("%q: want FROM..TO:N", values)
		}
		lo, err := v.setting.read(from)
		if err != nil {
			return Variation{}, err
		}
		hi, err := v.setting.read(to)
		if err != nil {
			return Variation{}, err
		}
		count, err := strconv.Atoi(n)
		if err != nil || count < 2 || count > maxPoints || hi <= lo {
			return Variation{}, fmt.Errorf("%q: want FROM below TO and 2 to %d points", values, maxPoints)
		}
		for k := range count {
			xs = append(xs, lo*math.Pow(hi/lo, float64(k)/float64(count-1))) // lo > 0: every setting is positive
		}
	} else {
		for _, part := range catalog.Split(values) {
			x, err := v.setting.read(part)
			if err != nil {
				return Variation{}, err
			}
			xs = append(xs, x)
		}
		if len(xs) == 0 || len(xs) > maxPoints {
			return Variation{}, fmt.Errorf("%q: want 1 to %d values", values, maxPoints)
		}
	}
	for _, x := range xs {
		p := results.SweepPoint{Param: name, Value: v.setting.write(x)}
		if v.setting.kind == "duration" {
			p.Unit = "s"
		}
		p.X, _ = v.setting.read(p.Value) // as written: a count rounds
		if !slices.ContainsFunc(v.points, func(q results.SweepPoint) bool { return q.Value == p.Value }) {
			v.points = append(v.points, p)
		}
	}
	return v, nil
}

// Setting is the flag name of the setting v varies.
func (v Variation) Setting() string { return v.setting.flag }

// Jobs are base's lock jobs of preset scenario once per point of v, each named after
// its point and checked.
func (v Variation) Jobs(base []bench.Job, scenario string) ([]bench.Job, error) {
	var jobs []bench.Job
	for _, p := range v.points {
		for _, b := range base {
			j := b.(bench.LockJob)
			j.Sale.Name = fmt.Sprintf("%s %s=%s", scenario, v.setting.flag, p.Value)
			if err := v.setting.set(&j.Sale, p.Value); err != nil {
				return nil, fmt.Errorf("sweep: %s=%s: %w", v.setting.flag, p.Value, err)
			}
			if err := j.Sale.Validate(); err != nil {
				return nil, fmt.Errorf("sweep: %s=%s: %w", v.setting.flag, p.Value, err)
			}
			j.Sweep = &p
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}
