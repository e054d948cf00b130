package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
)

// Setting is one setting of a sale, by the name a flag, a run file's settings and a sale
// value (results.Sale) give it: what it means and how its value is read into a sale.
// The command's flags, the run file and the explorer's draws all read sales through
// this table.
type Setting struct {
	Name  string
	Usage string
	// Flag: the command's sale flags bind it (run's --fulfil and every command's --seed
	// are bound apart, as they mean more than one sale's setting).
	Flag bool
	// set reads v into whichever of the sales is not nil; a setting of the other kind
	// of sale leaves it as it is.
	set func(s *Sale, l *FlashSale, q *QueueSale, v string) error
}

// Settings is every setting, the flags' order.
var Settings = []Setting{
	sale("buyers", "`n` buyers, each buying at most once", Positive(strconv.Atoi), func(s *Sale, n int) { s.Buyers = n }),
	sale("stock", "`units` on sale", int64Of, func(s *Sale, n int64) { s.Stock = n }),
	sale("conns", "`n` connections: the pool shared by all buyers", Positive(strconv.Atoi), func(s *Sale, n int) { s.Conns = n }),
	sale("rate", "open load: buyers (or orders) arriving per second, at this `rate`, latency counted from each intended arrival (0: every buyer at once)", float, func(s *Sale, r float64) { s.Rate = r }),
	sale("ramp-to", "with --rate: the arrival `rate` reached by the last buyer, linearly", float, func(s *Sale, r float64) { s.RampTo = r }),
	sale("warmup", "leave buyers arriving in the sale's first `duration` out of the latency figures", time.ParseDuration, func(s *Sale, d time.Duration) { s.Warmup = d }),

	lock("apps", "`n` application instances the buyers come through, each with its own pool of --conns connections", Positive(strconv.Atoi), func(s *FlashSale, n int) { s.Apps = n }),
	lock("serve", "`n` buyers each application instance serves at once (its workers); the others wait in its queue without touching Redis, until a place frees or their --timeout passes (0: no limit)", NonNegative(strconv.Atoi), func(s *FlashSale, n int) { s.Serve = n }),
	lock("critical", "the critical `section`, what a lock holder does: read-think-write or atomic", text, func(s *FlashSale, c string) { s.Critical = Critical(c) }),
	lock("think", "holder's work between read and write, its `think` time: 2ms, uniform:1ms-3ms, longtail:1ms,1500ms,0.01", ParseThink, func(s *FlashSale, t Think) { s.Think = t }),
	lock("ttl", "lock TTL, a `duration` (EX-based locks round up to whole seconds)", Positive(time.ParseDuration), func(s *FlashSale, d time.Duration) { s.TTL = d }),
	lock("retry-interval", "the `duration` a buyer sleeps between its tries for the lock", Positive(time.ParseDuration), func(s *FlashSale, d time.Duration) { s.Retry.Interval = d }),
	lock("timeout", "how long (a `duration`) a buyer tries for the lock before giving up", Positive(time.ParseDuration), func(s *FlashSale, d time.Duration) { s.Retry.Timeout = d }),
	lock("waves", "make the sale a scheduled drop of --stock in `n` waves, fired by --buyers scheduler instances through the lock design, their scheduler lock (0: a sale of buyers)", NonNegative(strconv.Atoi), func(s *FlashSale, n int) { s.Drop.Waves = n }),
	lock("wave-every", "with --waves: the `duration` between two waves", Positive(time.ParseDuration), func(s *FlashSale, d time.Duration) { s.Drop.Every = d }),

	queue("workers", "`n` queue workers taking and fulfilling orders", Positive(strconv.Atoi), func(s *QueueSale, n int) { s.Workers = n }),
	queue("visibility", "how long (a `duration`) a taken task stays with its worker before a re-delivering queue hands it on", Positive(time.ParseDuration), func(s *QueueSale, d time.Duration) { s.Visibility = d }),
	queue("work", "a worker's time on a task before fulfilling it, a `duration`", time.ParseDuration, func(s *QueueSale, d time.Duration) { s.Work = d }),

	{Name: "seed", Usage: "seed for think-time draws, the faults' victims and rates", set: func(s *Sale, _ *FlashSale, _ *QueueSale, v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		s.Seed = n
		return err
	}},
	{Name: "check-linearizable", Usage: "also check the purchases for linearizability with porcupine", set: func(_ *Sale, l *FlashSale, _ *QueueSale, v string) error {
		b, err := strconv.ParseBool(v)
		if l != nil {
			l.CheckLinearizable = b
		}
		return err
	}},
	{Name: "fulfil", Usage: "how workers apply an order: naive or idempotent", set: func(_ *Sale, _ *FlashSale, q *QueueSale, v string) error {
		if !slices.Contains(Fulfils, Fulfil(v)) {
			return fmt.Errorf("unknown fulfil %q (fulfils: naive, idempotent)", v)
		}
		if q != nil {
			q.Fulfil = Fulfil(v)
		}
		return nil
	}},
}

// Check reads v as the setting's value into no sale: whether it would be taken.
func (st Setting) Check(v string) error {
	return st.set(new(Sale), new(FlashSale), new(QueueSale), v)
}

// SetLock reads setting name's value v into s: a usage error for an unknown name or a
// bad value; a queue sale's setting leaves s as it is.
func SetLock(s *FlashSale, name, v string) error { return set(&s.Sale, s, nil, name, v) }

// SetQueue reads setting name's value v into s, as SetLock.
func SetQueue(s *QueueSale, name, v string) error { return set(&s.Sale, nil, s, name, v) }

func set(s *Sale, l *FlashSale, q *QueueSale, name, v string) error {
	i := slices.IndexFunc(Settings, func(x Setting) bool { return x.Name == name })
	if i < 0 {
		return fmt.Errorf("unknown setting %q", name)
	}
	if err := Settings[i].set(s, l, q, v); err != nil {
		return fmt.Errorf("%s=%s: %w", name, v, err)
	}
	return nil
}

func sale[T any](name, usage string, parse func(string) (T, error), apply func(*Sale, T)) Setting {
	return Setting{Name: name, Usage: usage, Flag: true, set: func(s *Sale, _ *FlashSale, _ *QueueSale, v string) error {
		x, err := parse(v)
		if err == nil {
			apply(s, x)
		}
		return err
	}}
}

func lock[T any](name, usage string, parse func(string) (T, error), apply func(*FlashSale, T)) Setting {
	return Setting{Name: name, Usage: usage, Flag: true, set: func(_ *Sale, l *FlashSale, _ *QueueSale, v string) error {
		x, err := parse(v)
		if err == nil && l != nil {
			apply(l, x)
		}
		return err
	}}
}

func queue[T any](name, usage string, parse func(string) (T, error), apply func(*QueueSale, T)) Setting {
	return Setting{Name: name, Usage: usage, Flag: true, set: func(_ *Sale, _ *FlashSale, q *QueueSale, v string) error {
		x, err := parse(v)
		if err == nil && q != nil {
			apply(q, x)
		}
		return err
	}}
}

// The settings' parsers.
var (
	text    = func(s string) (string, error) { return s, nil }
	float   = func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
	int64Of = func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
)

// NonNegative refuses what parse reads as below zero.
func NonNegative[T int | time.Duration](parse func(string) (T, error)) func(string) (T, error) {
	return func(s string) (T, error) {
		v, err := parse(s)
		if err == nil && v < 0 {
			err = errors.New("must not be negative")
		}
		return v, err
	}
}

// Positive refuses what parse reads as zero or less: a setting's parser, and a flag's.
func Positive[T int | time.Duration](parse func(string) (T, error)) func(string) (T, error) {
	return func(s string) (T, error) {
		v, err := parse(s)
		if err == nil && v <= 0 {
			err = errors.New("must be positive")
		}
		return v, err
	}
}

// Value is the sale s of design as a value (results.Sale): every setting spelled out,
// its preset's too, so that the record says what the sale was and a shrink or the
// explorer can change one setting of it. What only a preset sets (a retry's jitter, a
// fault's rates) comes back with its scenario. Where the design comes from and where
// Redis is are the caller's to add.
func (s FlashSale) Value(design string) results.Sale {
	s = s.WithDefaults()
	v := results.Sale{Kind: results.LockSale, Scenario: s.Name, Design: design, Faults: s.Faults.String()}
	spell(&v, s.Sale)
	v.Set("critical", string(s.Critical))
	v.Set("think", s.Think.String())
	v.Set("ttl", s.TTL.String())
	v.Set("retry-interval", s.Retry.Interval.String())
	v.Set("timeout", s.Retry.Limit().String())
	if s.Apps != s.defaultApps() { // left to its default, it follows the faults a caller puts in
		v.Set("apps", strconv.Itoa(s.Apps))
	}
	if s.Serve > 0 {
		v.Set("serve", strconv.Itoa(s.Serve))
	}
	if s.CheckLinearizable {
		v.Set("check-linearizable", "true")
	}
	if s.Drop.On() {
		v.Set("waves", strconv.Itoa(s.Drop.Waves))
		v.Set("wave-every", s.Drop.Every.String())
	}
	return v
}

// Value is the queue sale s of design as a value, as FlashSale.Value.
func (s QueueSale) Value(design string) results.Sale {
	s = s.WithDefaults()
	v := results.Sale{Kind: results.QueueSale, Scenario: s.Name, Design: design, Faults: s.Faults.String()}
	v.Set("fulfil", string(s.Fulfil))
	spell(&v, s.Sale)
	v.Set("workers", strconv.Itoa(s.Workers))
	v.Set("visibility", s.Visibility.String())
	v.Set("work", s.Work.String())
	return v
}

// spell spells out the settings every kind of sale has.
func spell(v *results.Sale, s Sale) {
	v.Set("buyers", strconv.Itoa(s.Buyers))
	v.Set("stock", strconv.FormatInt(s.Stock, 10))
	v.Set("conns", strconv.Itoa(s.Conns))
	v.Set("seed", strconv.FormatUint(s.Seed, 10))
	if s.Rate > 0 {
		v.Set("rate", strconv.FormatFloat(s.Rate, 'g', -1, 64))
	}
	if s.RampTo > 0 {
		v.Set("ramp-to", strconv.FormatFloat(s.RampTo, 'g', -1, 64))
	}
	if s.Warmup > 0 {
		v.Set("warmup", s.Warmup.String())
	}
}

// FlashSaleOf is the flash sale v describes: its preset with its settings and faults,
// checked.
func FlashSaleOf(v results.Sale) (FlashSale, error) {
	s, err := Lookup(v.Scenario)
	if err != nil {
		return s, err
	}
	for _, x := range v.Settings {
		if err := SetLock(&s, x.Name, x.Value); err != nil {
			return s, fmt.Errorf("--%s: %w", x.Name, err)
		}
	}
	if s.Faults, err = faults.Parse(v.Faults); err != nil {
		return s, err
	}
	return s, s.Validate()
}

// QueueSaleOf is the queue sale v describes, as FlashSaleOf is a flash sale.
func QueueSaleOf(v results.Sale) (QueueSale, error) {
	s, err := LookupQueue(v.Scenario)
	if err != nil {
		return s, err
	}
	for _, x := range v.Settings {
		if err := SetQueue(&s, x.Name, x.Value); err != nil {
			return s, fmt.Errorf("--%s: %w", x.Name, err)
		}
	}
	if s.Faults, err = faults.Parse(v.Faults); err != nil {
		return s, err
	}
	return s, s.Validate()
}
