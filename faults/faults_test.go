package faults

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want string // the plan's written form; "" when Parse must fail
		err  string
	}{
		{"none", "none", ""},                             // no faults
		{"", "none", ""},                                 // same
		{"client-pause", "client-pause", ""},             // defaults stay implicit
		{"redis-pause:for=3s", "redis-pause:for=3s", ""}, // a setting
		{"slow-work:nth=2+net-latency:latency=5ms:jitter=1ms", "slow-work:nth=2+net-latency:latency=5ms:jitter=1ms", ""}, // combined
		{"meteor", "", `unknown fault "meteor"`},                                     // not a fault
		{"client-pause+client-pause", "", "named twice"},                             // twice
		{"client-pause:nth=0", "", "at least 1"},                                     // no holder zero
		{"redis-pause:for=-1s", "", "must be positive"},                              // negative duration
		{"redis-pause:for", "", "not key=value"},                                     // malformed
		{"redis-pause:speed=3", "", "unknown setting"},                               // unknown key
		{"client-pause:p=0.01:dist=exp", "client-pause:p=0.01:dist=exp", ""},         // a pause rate, lengths drawn
		{"latency-spike", "latency-spike", ""},                                       // a rate of its own
		{"client-pause:p=0", "", "above 0"},                                          // no rate
		{"client-pause:p=1.5", "", "at most 1"},                                      // not a share
		{"client-pause:p=NaN", "", "above 0"},                                        // not a number
		{"redis-pause:p=0.1", "", "not at a rate"},                                   // a server fault strikes once
		{"slow-work:dist=normal", "", "unknown distribution"},                        // not one of ours
		{"redis-restart:persist=aof-always", "redis-restart:persist=aof-always", ""}, // a restart that keeps its AOF
		{"redis-restart:persist=aof", "", "unknown persistence mode"},                // not one of the modes
		{"redis-pause:persist=rdb", "", "only redis-restart"},                        // nothing else restarts
		{"rolling-restart:persist=rdb", "", "restarts them empty"},                   // as redsync#149's servers
		{"rolling-restart:for=300ms", "rolling-restart:for=300ms", ""},               // the time before each restart
		{"step-term:step=dequeued", "step-term:step=dequeued", ""},                   // rq/rq#2236's window
		{"worker-term:step=dequeued", "", "only step-term strikes at a step"},        // a step is an adapter's
		{"step-term:step=de queued", "", "letters, digits and dashes"},               // what a report can name
		{"server-errors:mode=readonly", "server-errors:mode=readonly", ""},           // a demoted master's
		{"server-errors:mode=loading", "server-errors:mode=loading", ""},             // a reloading server's
		{"server-errors:mode=busy", "", "unknown mode"},                              // not one
		{"redis-pause:mode=oom", "", "only server-errors answers in a mode"},         // a pause answers nothing
		{"redis-restart:servers=2:for=2s", "redis-restart:for=2s:servers=2", ""},     // a majority of three, kept down
		{"redis-pause:servers=3", "redis-pause:servers=3", ""},                       // three at once
		{"client-pause:servers=2", "", "strike several lock servers"},                // a client has no servers
		{"redis-restart:servers=0", "", "at least 1"},                                // none struck
		{"redis-restart:servers=2:persist=rdb", "", "only the first lock server"},    // the others run without
	}
	for _, tt := range tests {
		p, err := Parse(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q): want an error with %q, got %v", tt.in, tt.err, err)
			}
			continue
		}
		if err != nil || p.String() != tt.want {
			t.Errorf("Parse(%q): want %q, got %q, %v", tt.in, tt.want, p, err)
		}
	}
}

func TestNeeds(t *testing.T) {
	tests := []struct {
		plan string
		want Needs
	}{
		{"client-pause", Needs{}},                                                                   // the client alone
		{"redis-restart", Needs{SeparateStock: true, Owned: true}},                                  // acts on the lock server
		{"failover", Needs{SeparateStock: true, Replica: true, Owned: true}},                        // and its replica
		{"net-latency", Needs{Proxy: true}},                                                         // through toxiproxy
		{"net-timeout", Needs{SeparateStock: true, Proxy: true}},                                    // cuts the lock server only
		{"evict", Needs{Owned: true}},                                                               // reconfigures the server
		{"evict+net-latency", Needs{Owned: true, Proxy: true}},                                      // combined
		{"redis-restart:persist=rdb", Needs{SeparateStock: true, Owned: true, Persist: PersistRDB}}, // a server in that mode
		{"redis-restart:persist=none", Needs{SeparateStock: true, Owned: true}},                     // the usual server
		{"rolling-restart", Needs{SeparateStock: true, Owned: true, AllLocks: true}},                // every lock server
		{"redis-restart:servers=2", Needs{SeparateStock: true, Owned: true, AllLocks: true}},        // those it strikes come fresh
		{"redis-pause:servers=1", Needs{SeparateStock: true, Owned: true}},                          // the first alone
		{"server-errors:mode=loading", Needs{SeparateStock: true, Owned: true, Debug: true}},        // a server that takes DEBUG
		{"evict-lease+consumer-churn", Needs{}},                                                     // keys under the run's prefix
	}
	for _, tt := range tests {
		p, err := Parse(tt.plan)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Needs(); got != tt.want {
			t.Errorf("%s: want %+v, got %+v", tt.plan, tt.want, got)
		}
	}
}

func TestLasting(t *testing.T) {
	if exp, got := 1500*time.Millisecond, (Fault{}).lasting(time.Second); exp != got {
		t.Errorf("default: want %s, got %s", exp, got)
	}
	if exp, got := 3*time.Second, (Fault{For: 3 * time.Second}).lasting(time.Second); exp != got {
		t.Errorf("set: want %s, got %s", exp, got)
	}
}

// TestTable: every fault is in the table once, says what it does, applies to some sale,
// and has something that makes it happen at the moment it names.
func TestTable(t *testing.T) {
	seen := map[Kind]bool{}
	for _, s := range Specs() {
		switch {
		case seen[s.Kind]:
			t.Errorf("%s: twice in the table", s.Kind)
		case s.Summary == "":
			t.Errorf("%s: no summary", s.Kind)
		case s.Applies == 0:
			t.Errorf("%s: applies to no sale", s.Kind)
		case s.Fires == AtStart && s.start == nil, s.Fires == OnVictim && s.victim == nil && s.server == nil,
			s.Fires == OnCall && !s.rated, s.Fires == OnStep && s.Applies != Queues:
			t.Errorf("%s: nothing makes it happen", s.Kind)
		}
		seen[s.Kind] = true
	}
}

// TestKinds: a matrix shows a sale's faults on its own clients first, then those on its
// servers (or on one application instance of several), each list in the table's order;
// the default matrix leaves out cpu-starve, term-holder, rolling-restart, server-errors,
// app-pause, app-blackhole, reclaimers, the evictions, consumer-churn, worker-term and
// step-term, which designs document all the same.
func TestKinds(t *testing.T) {
	for _, tt := range []struct {
		a            Applies
		want, matrix []Kind
	}{
		{Locks, []Kind{SlowWork, ClientPause, CPUStarve, TermHolder, CrashAcquire, CrashHolder, AppPause, RedisPause, RedisRestart, RollingRestart, ServerErrors, Failover, ClockJump, NetLatency, NetTimeout, AppBlackhole, Evict},
			[]Kind{SlowWork, ClientPause, CrashAcquire, CrashHolder, RedisPause, RedisRestart, Failover, ClockJump, NetLatency, NetTimeout, Evict}},
		{Queues, []Kind{WorkerCrash, WorkerCrashLate, WorkerPause, Reclaimers, EvictLease, EvictJob, ConsumerChurn, WorkerTerm, StepTerm, RedisRestart}, []Kind{WorkerCrash, WorkerCrashLate, WorkerPause, RedisRestart}},
	} {
		if got := Kinds(tt.a); !slices.Equal(tt.want, got) {
			t.Errorf("%s: want %v, got %v", tt.a, tt.want, got)
		}
		if got := MatrixKinds(tt.a); !slices.Equal(tt.matrix, got) {
			t.Errorf("%s: want the default matrix %v, got %v", tt.a, tt.matrix, got)
		}
	}
}

// TestSummariesReadTheDefaults: a summary says the defaults the fault really has.
func TestSummariesReadTheDefaults(t *testing.T) {
	for _, tt := range []struct {
		k    Kind
		want string
	}{
		{SlowWork, "the 5th holder works 1.5x the TTL"},
		{WorkerCrash, "3 workers, from the one with the 5th task"},
		{NetLatency, "delayed 2ms ± 1ms"},
	} {
		if s, _ := Lookup(tt.k); !strings.Contains(s.Summary, tt.want) {
			t.Errorf("%s: want %q in %q", tt.k, tt.want, s.Summary)
		}
	}
	if exp, got := []string{"1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "102nd"},
		[]string{ordinal(1), ordinal(2), ordinal(3), ordinal(4), ordinal(11), ordinal(12), ordinal(13), ordinal(21), ordinal(102)}; !slices.Equal(exp, got) {
		t.Errorf("ordinals: want %v, got %v", exp, got)
	}
}

// TestAppliesTo: a plan for a sale holds only faults that apply to it.
func TestAppliesTo(t *testing.T) {
	for _, tt := range []struct {
		plan string
		a    Applies
		bad  Kind
	}{
		{"client-pause+redis-restart", Locks, ""},
		{"worker-crash+redis-restart", Queues, ""},
		{"worker-pause", Locks, WorkerPause},
		{"redis-restart+evict", Queues, Evict},
	} {
		p, _ := Parse(tt.plan)
		if bad, ok := p.AppliesTo(tt.a); bad != tt.bad || ok != (tt.bad == "") {
			t.Errorf("%s for %s: want %q, got %q, %v", tt.plan, tt.a, tt.bad, bad, ok)
		}
	}
}

// TestInjectorRefuses: server faults need servers the harness controls.
func TestInjectorRefuses(t *testing.T) {
	for _, plan := range []string{"redis-pause", "failover", "net-latency", "evict"} {
		p, _ := Parse(plan)
		if _, err := New(p, Servers{}, time.Second, "{x}", 1); err == nil {
			t.Errorf("%s without servers: want an error", plan)
		}
	}
}

// TestVictim: the Nth holder is the victim, and only it.
func TestVictim(t *testing.T) {
	p, _ := Parse("slow-work:nth=3:for=50ms+crash-holder:nth=4+cpu-starve:nth=5:for=50ms")
	in, err := New(p, Servers{}, time.Second, "{x}", 1)
	if err != nil {
		t.Fatal(err)
	}
	in.started = time.Now()
	for n := 1; n <= 6; n++ {
		v := in.Held(0, 0)
		switch n {
		case 3:
			if v.Until.IsZero() || v.Crash {
				t.Errorf("holder 3: want slow work, got %+v", v)
			}
		case 4:
			if !v.Crash {
				t.Errorf("holder 4: want a crash, got %+v", v)
			}
		case 5:
			if v.StarveUntil.IsZero() || v.Until.IsZero() || !v.FreezeUntil.IsZero() {
				t.Errorf("holder 5: want it starved, working on meanwhile, got %+v", v)
			}
		default:
			if v != (Victim{}) {
				t.Errorf("holder %d: want nothing, got %+v", n, v)
			}
		}
	}
	if len(in.Events()) != 3 {
		t.Errorf("want 3 events, got %+v", in.Events())
	}
}

// TestQueueVictims: the evictions and consumer-churn leave the striking to the sale,
// which alone knows the design's keys and group, and record nothing themselves; a task
// struck by two of them carries both; reapers in step are recorded once, at the first
// round that handed anything back.
func TestQueueVictims(t *testing.T) {
	p, _ := Parse("evict-lease:nth=2+consumer-churn:nth=2+evict-job:nth=3+reclaimers:nth=4")
	in, err := New(p, Servers{}, time.Second, "{x}", 1)
	if err != nil {
		t.Fatal(err)
	}
	in.started = time.Now()
	want := []Victim{{}, {Evict: LeaseKeys, Churn: true}, {Evict: JobKeys}, {Crash: true}, {}}
	for i, w := range want {
		if v := in.Delivered(); v != w {
			t.Errorf("task %d: want %+v, got %+v", i+1, w, v)
		}
	}
	if in.Reapers() != ReapersInStep {
		t.Errorf("want %d reapers under reclaimers, got %d", ReapersInStep, in.Reapers())
	}
	in.Reaped([]int{0, 0, 0, 0})
	in.Reaped([]int{1, 1, 0, 0})
	in.Reaped([]int{1, 1, 1, 1})
	var reaped []string
	for _, e := range in.Events() {
		if e.Fault == Reclaimers {
			reaped = append(reaped, e.Detail)
		}
	}
	if len(reaped) != 2 || reaped[1] != "4 reapers in step handed back [1 1 0 0] tasks (2 in all) in one round" {
		t.Errorf("want the victim's death and the first round that handed anything back, got %q", reaped)
	}
	if JobKeys.Fault() != EvictJob || LeaseKeys.Fault() != EvictLease {
		t.Error("a key class names the wrong fault")
	}
	alone, _ := New(nil, Servers{}, time.Second, "{x}", 1)
	if alone.Reapers() != 1 {
		t.Errorf("want one reaper without reclaimers, got %d", alone.Reapers())
	}
}

// TestRateDrawsBySeed: a fault at a rate strikes each holder with its probability, the
// same buyers under the same seed and others under another; its lengths are drawn
// around For with the distribution's mean.
func TestRateDrawsBySeed(t *testing.T) {
	plan := Plan{{Kind: ClientPause, P: 0.2, For: 100 * time.Millisecond, Dist: Exp}}
	victims := func(seed uint64) (hit []int, total time.Duration) {
		in, err := New(plan, Servers{}, time.Second, "{x}", seed)
		if err != nil {
			t.Fatal(err)
		}
		for b := range 5000 {
			if v := in.Held(b, 0); !v.Until.IsZero() {
				hit = append(hit, b)
				total += time.Until(v.Until)
			}
		}
		return hit, total
	}
	a, total := victims(1)
	b, _ := victims(1)
	c, _ := victims(2)
	if share := float64(len(a)) / 5000; share < 0.17 || share > 0.23 {
		t.Errorf("struck %.3f of holders, want about 0.2", share)
	}
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Errorf("the same seed must strike the same buyers, another seed others")
	}
	if mean := total / time.Duration(len(a)); mean < 80*time.Millisecond || mean > 120*time.Millisecond {
		t.Errorf("mean pause %s, want about 100ms", mean)
	}
	for _, d := range []Dist{Fixed, Exp, Pareto} {
		var sum time.Duration
		for k := range 20000 {
			sum += d.draw(time.Second, (float64(k)+0.5)/20000)
		}
		if mean := sum / 20000; mean < 850*time.Millisecond || mean > 1050*time.Millisecond {
			t.Errorf("%s: mean %s, want about 1s", d, mean)
		}
	}
}

// TestOnlyRates names the plans a sharded sale may take: rates on the buyers only.
func TestOnlyRates(t *testing.T) {
	for spec, want := range map[string]bool{
		"none": true, "client-pause:p=0.01": true, "latency-spike": true, "slow-work:p=0.1+latency-spike": true,
		"client-pause": false, "client-pause:p=0.01+slow-work": false, "net-latency": false, "redis-restart": false,
	} {
		p, err := Parse(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got := p.OnlyRates(); got != want {
			t.Errorf("%s: OnlyRates %v, want %v", spec, got, want)
		}
	}
}

// TestDisrupts: the errors a sale's clients meet are its faults' doing (and the sale goes
// on) under faults on the servers, the network or a whole application instance, whose
// stopped processes' calls come back late or with their own deadline's error; not under
// faults on one holder alone.
func TestDisrupts(t *testing.T) {
	for k, want := range map[Kind]bool{
		ClientPause: false, CrashHolder: false, TermHolder: false,
		RedisPause: true, NetTimeout: true, AppBlackhole: true, AppPause: true,
	} {
		if got := (Plan{{Kind: k}}).Needs().Disrupts(); got != want {
			t.Errorf("%s: Disrupts() = %v, want %v", k, got, want)
		}
	}
}
