package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/oracle"
)

const commandstats = `# Commandstats
cmdstat_get:calls=120,usec=300,usec_per_call=2.50,rejected_calls=0,failed_calls=0
cmdstat_set:calls=7,usec=20,usec_per_call=2.86,rejected_calls=0,failed_calls=0
cmdstat_info:calls=3,usec=90,usec_per_call=30.00,rejected_calls=0,failed_calls=0
cmdstat_client|setname:calls=2,usec=1,usec_per_call=0.50,rejected_calls=0,failed_calls=0
`

const cpu = `# CPU
used_cpu_sys:1.250000
used_cpu_user:0.500000
used_cpu_sys_children:9.000000
used_cpu_user_children:9.000000
`

func TestParseServerStats(t *testing.T) {
	got := ParseServerStats(commandstats + cpu)
	want := map[string]int64{"get": 120, "set": 7, "info": 3, "client|setname": 2}
	if len(got.Calls) != len(want) {
		t.Fatalf("want %v, got %v", want, got.Calls)
	}
	for k, v := range want {
		if got.Calls[k] != v {
			t.Errorf("%s: want %d, got %d", k, v, got.Calls[k])
		}
	}
	if want := 1750 * time.Millisecond; got.CPU != want {
		t.Errorf("cpu: want %s (the server's own, not its children's), got %s", want, got.CPU)
	}
}

func TestNewCommands(t *testing.T) {
	tests := []struct {
		name          string
		before, after ServerStats
		total         int64
		perSale       float64
		cpuPerSaleUs  float64
		ownPings      int64
	}{
		{"a sale",
			ServerStats{Calls: map[string]int64{"get": 10, "info": 1}, CPU: time.Second},
			ServerStats{Calls: map[string]int64{"get": 110, "set": 50, "info": 2}, CPU: time.Second + 5*time.Millisecond},
			150, 3, 100, 0},
		{"a restart between the two",
			ServerStats{Calls: map[string]int64{"get": 500}, CPU: time.Second},
			ServerStats{Calls: map[string]int64{"get": 100}, CPU: 10 * time.Millisecond},
			0, 0, 0, 0},
		{"the harness's 7 pings left out, the design's 50 kept",
			ServerStats{Calls: map[string]int64{"ping": 3}},
			ServerStats{Calls: map[string]int64{"ping": 60, "get": 100}},
			150, 3, 0, 7},
		{"pings not counted by the harness: all left out",
			ServerStats{Calls: map[string]int64{"ping": 3}},
			ServerStats{Calls: map[string]int64{"ping": 60, "get": 100}},
			100, 2, 0, PingsUnknown},
	}
	for _, tt := range tests {
		c := NewCommands(tt.before, tt.after, 50, tt.ownPings)
		if c.Total != tt.total || c.PerSale != tt.perSale || c.CPUPerSaleUs != tt.cpuPerSaleUs {
			t.Errorf("%s: total %d, per sale %v, cpu per sale %vµs; want %d, %v, %vµs",
				tt.name, c.Total, c.PerSale, c.CPUPerSaleUs, tt.total, tt.perSale, tt.cpuPerSaleUs)
		}
		if _, ok := c.ByName["info"]; ok {
			t.Errorf("%s: the harness's own INFO must not count", tt.name)
		}
	}
}

func TestNewTries(t *testing.T) {
	if got := NewTries([]int32{0, 0}); got != nil {
		t.Errorf("nobody tried: want nil, got %+v", got)
	}
	tries := make([]int32, 0, 101)
	for i := range 100 {
		tries = append(tries, int32(i%10+1)) // 1..10, ten of each
	}
	tries = append(tries, 0) // never tried: left out
	got := NewTries(tries)
	if got.Buyers != 100 || got.Mean != 5.5 || got.P50 != 6 || got.P99 != 10 || got.Max != 10 {
		t.Errorf("got %+v, want 100 buyers, mean 5.5, p50 6, p99 10, max 10", got)
	}
}

func TestRecorder(t *testing.T) {
	r := NewRecorder(4)
	for i := range 1000 {
		r.Record(i, Purchase, time.Duration(i+1)*time.Millisecond)
	}
	r.Record(0, Acquire, -time.Second) // clamped to 0
	r.Record(0, Acquire, 10*time.Hour) // clamped to the top of the range
	h := r.Histogram(Purchase)
	if exp, got := int64(1000), h.TotalCount(); exp != got {
		t.Fatalf("count: want %d, got %d", exp, got)
	}
	if p50 := h.ValueAtQuantile(50); p50 < 499_000 || p50 > 501_000 {
		t.Errorf("p50: want about 500ms in µs, got %d", p50)
	}
	if exp, got := int64(2), r.Histogram(Acquire).TotalCount(); exp != got {
		t.Errorf("out-of-range values: want %d recorded, got %d", exp, got)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	r := NewRecorder(4)
	if n := testing.AllocsPerRun(1000, func() { r.Record(3, Critical, 1234*time.Microsecond) }); n != 0 {
		t.Errorf("Record allocates %v times per call", n)
	}
}

func BenchmarkRecord(b *testing.B) {
	r := NewRecorder(8)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Record(i, Purchase, time.Duration(i%5000)*time.Microsecond)
			i++
		}
	})
}

func TestSummarizeRoundTrip(t *testing.T) {
	r := NewRecorder(1)
	for i := range 100 {
		r.Record(0, Purchase, time.Duration(i)*time.Millisecond)
	}
	l, err := Summarize(r.Histogram(Purchase))
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.Histogram()
	if err != nil {
		t.Fatal(err)
	}
	if exp, got := l.Count, h.TotalCount(); exp != got {
		t.Errorf("decoded count: want %d, got %d", exp, got)
	}
	if exp, got := l.P99Us, h.ValueAtQuantile(99); exp != got {
		t.Errorf("decoded p99: want %d, got %d", exp, got)
	}
}

func TestReadRejects(t *testing.T) {
	run := `{"scenario":"s","impl":"lua","params":{},"complete":true,"verdict":"SAFE","class":"SAFE","cell":"SAFE","oracle":{}}`
	tests := []struct {
		name, body, want string
	}{
		{"old schema", `{"schema_version": 0, "runs": []}`, "schema_version 0"},
		{"not json", `not json`, "not a results file"},
		// A gate against a file with no runs would pass on nothing.
		{"runs missing", `{"schema_version": 1, "id": "x"}`, `"runs" is missing`},
		{"runs null", `{"schema_version": 1, "id": "x", "runs": null}`, `"runs" is null`},
		{"no runs", `{"schema_version": 1, "id": "x", "runs": [], "incomplete_reason": "lua could not start"}`, "no runs (lua could not start)"},
		{"run null", `{"schema_version": 1, "id": "x", "runs": [null]}`, "run 0 is null"},
		{"params missing", `{"schema_version": 1, "id": "x", "runs": [` + strings.Replace(run, `"params":{},`, "", 1) + `]}`, `run 0: "params" is missing`},
		{"oracle null", `{"schema_version": 1, "id": "x", "runs": [` + strings.Replace(run, `"oracle":{}`, `"oracle":null`, 1) + `]}`, `run 0: "oracle" is null`},
		{"runs not a list", `{"schema_version": 1, "id": "x", "runs": {}}`, "not a results file"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".json")
			os.WriteFile(path, []byte(tt.body), 0o644)
			_, err := Read(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("want an error with %q, got %v", tt.want, err)
			}
		})
	}
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"schema_version": 1, "id": "x", "runs": [`+run+`]}`), 0o644)
	if _, err := Read(good); err != nil {
		t.Errorf("a whole file: %v", err)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Microsecond: "850µs", 1234 * time.Microsecond: "1.23ms",
		45600 * time.Microsecond: "45.6ms", 999 * time.Millisecond: "999ms", 1200 * time.Millisecond: "1.20s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%s): want %s, got %s", d, want, got)
		}
	}
}

func TestTimelineAndFairness(t *testing.T) {
	var at []time.Duration
	for i := range 100 {
		at = append(at, time.Duration(100-i)*10*time.Millisecond) // unsorted on purpose
	}
	tl := Timeline(at)
	if last := tl[len(tl)-1]; last.N != 100 || last.At < time.Second {
		t.Errorf("timeline ends at %v with %d sales, want 100 by 1s", last.At, last.N)
	}
	for _, r := range Rates(tl)[1:] {
		if r.N < 90 || r.N > 110 {
			t.Errorf("a steady 100 sales/s shows %d at %v", r.N, r.At)
		}
	}
	even, skewed := NewRecorder(1), NewRecorder(1)
	for i := range 100 {
		even.Record(0, Purchase, 10*time.Millisecond)
		d := time.Millisecond
		if i == 0 {
			d = time.Second
		}
		skewed.Record(0, Purchase, d)
	}
	for name, tc := range map[string]struct {
		r        *Recorder
		min, max float64
	}{"even": {even, 0.99, 1.0}, "one buyer waited all": {skewed, 0.0, 0.1}} {
		l, _ := Summarize(tc.r.Histogram(Purchase))
		f, err := FairnessOf(Purchase, l)
		if err != nil {
			t.Fatal(err)
		}
		if f.Jain < tc.min || f.Jain > tc.max {
			t.Errorf("%s: Jain %.3f, want in [%v, %v]", name, f.Jain, tc.min, tc.max)
		}
	}
}

// TestOutputProgress: a run directory is made on first write, holds results.json with
// the verdict matrix, and is never made over an existing one.
func TestOutputProgress(t *testing.T) {
	out := NewOutput(t.TempDir(), "run1")
	if _, err := os.Stat(out.Dir); !os.IsNotExist(err) {
		t.Fatalf("NewOutput made the directory: %v", err)
	}
	rep := oracle.Report{Bought: 10, InitialStock: 10}
	f := &File{SchemaVersion: SchemaVersion, ID: "test", Incomplete: "interrupted", Runs: []Run{
		{Scenario: "flash-sale", Impl: "set-nx-ex", Complete: true, Verdict: rep.Outcome(), Oracle: rep},
	}}
	if err := out.Progress(f); err != nil {
		t.Fatal(err)
	}
	back, err := Read(filepath.Join(out.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if back.Complete || back.Incomplete != "interrupted" || len(back.Runs) != 1 {
		t.Errorf("round trip lost the incomplete mark or runs: %+v", back)
	}
	if exp, got := "SAFE", back.Verdicts["flash-sale"]["set-nx-ex"]["none"]; exp != got {
		t.Errorf("verdicts matrix: want %q, got %q in %v", exp, got, back.Verdicts)
	}
	if _, err := Create(filepath.Dir(out.Dir), "run1"); err == nil {
		t.Error("Create must refuse an existing run directory")
	}
}

// A cell whose reruns did not all earn its class says so.
func TestMatrixMarksUnsteadyCells(t *testing.T) {
	steady := Run{Scenario: "s", Impl: "a", Verdict: oracle.Verdict{Class: oracle.ClassSafe}, Complete: true}
	unsteady := Run{Scenario: "s", Impl: "b", Verdict: oracle.Verdict{Class: oracle.ClassOversold, Count: 1}, Complete: true}
	steady.Repeats = &Repeats{Times: 3, Same: 3}
	unsteady.Repeats = &Repeats{Times: 10, Same: 7}
	m := Matrices([]Run{steady, unsteady})[0]
	if got := m.Cell("a", "none") + " | " + m.Cell("b", "none"); got != "SAFE | OVERSOLD 1~" {
		t.Errorf("want the unsteady cell marked ~, got %q", got)
	}
}

// TestVerdictViews: a run's verdict is stored once and written as its views; reading the
// committed baseline and writing it again gives every run the verdict line, class, cell
// and findings it had.
func TestVerdictViews(t *testing.T) {
	b, err := os.ReadFile("../baseline/results.json")
	if err != nil {
		t.Fatal(err)
	}
	type views struct {
		Verdict  string   `json:"verdict"`
		Class    string   `json:"class"`
		Cell     string   `json:"cell"`
		Findings []string `json:"findings"`
	}
	var raw struct{ Runs []views }
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ Runs []views }
	if err := json.Unmarshal(again, &back); err != nil {
		t.Fatal(err)
	}
	if len(raw.Runs) == 0 || len(back.Runs) != len(raw.Runs) {
		t.Fatalf("runs: %d read, %d written", len(raw.Runs), len(back.Runs))
	}
	for i, want := range raw.Runs {
		if got := back.Runs[i]; !reflect.DeepEqual(got, want) {
			t.Errorf("run %d: wrote %+v, read %+v", i, got, want)
		}
	}
}

// TestSaleArgs: a sale's command line brings its design back from where it came: a
// file, an adapter's command with its pool and servers, or a Go library by --lock-go or
// --queue-go
// (built again on the machine that reruns it), never the path of a build.
func TestSaleArgs(t *testing.T) {
	for _, c := range []struct {
		src  *DesignSource
		want string
	}{
		{nil, "run --scenario flash-sale --lock d --fault none --buyers 4"},
		{&DesignSource{File: "examples/locks/mine.json"}, "run --scenario flash-sale --lock d --lock-file examples/locks/mine.json --fault none --buyers 4"},
		{&DesignSource{Exec: "php mine.php", Part: "lock", Procs: 8}, "run --scenario flash-sale --lock d --lock-exec d=php mine.php --adapter-procs 8 --fault none --buyers 4"},
		{&DesignSource{Exec: "/home/u/.cache/stockbench/go-adapters/redislock-lock-v0.9.4-0a1b2c3d4e5f --refresh", Go: "github.com/bsm/redislock@v0.9.4 --refresh", Part: "lock", Nodes: 3},
			"run --scenario flash-sale --lock d --lock-go d=github.com/bsm/redislock@v0.9.4 --refresh --adapter-nodes 3 --fault none --buyers 4"},
		{&DesignSource{Exec: "/home/u/.cache/stockbench/go-adapters/asynq-queue-v0.26.0-0a1b2c3d4e5f", Go: "github.com/hibiken/asynq@v0.26.0", Part: "queue"},
			"run --scenario flash-sale --lock d --queue-go d=github.com/hibiken/asynq@v0.26.0 --fault none --buyers 4"},
		{&DesignSource{Exec: "/old/record/redsync-lock", Go: "github.com/go-redsync/redsync/v4@v4.12.1"}, // a record from before Part was kept
			"run --scenario flash-sale --lock d --lock-go d=github.com/go-redsync/redsync/v4@v4.12.1 --fault none --buyers 4"},
	} {
		s := Sale{Scenario: "flash-sale", Design: "d", Faults: "none", Source: c.src, Settings: []Setting{{"buyers", "4"}}}
		if got := strings.Join(s.Args(), " "); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}
