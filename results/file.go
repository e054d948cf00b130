package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stockbench/stockbench/internal/redact"
)

// SchemaVersion is the version of results.json. It changes when a field changes meaning or
// goes away; added fields do not change it.
const SchemaVersion = 1

// File is results.json: one invocation of the harness and every scenario it ran.
type File struct {
	SchemaVersion int       `json:"schema_version"`
	Tool          string    `json:"tool"`
	Args          []string  `json:"args"`
	ID            string    `json:"id"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	// Complete is false when the run was interrupted or failed before every scenario ran
	// to its end; Incomplete then says why.
	Complete   bool   `json:"complete"`
	Incomplete string `json:"incomplete_reason,omitempty"`
	Target     Target `json:"target"`
	Host       Host   `json:"host"`
	Runs       []Run  `json:"runs"`
	// Verdicts is the matrix of cells, scenario -> lock -> fault plan -> cell, as the
	// terminal and summary.md show it; Runs has the detail.
	Verdicts map[string]map[string]map[string]string `json:"verdicts"`
	// Checks are the thresholds of a run file (stockbench check), each applied to a run,
	// and the regressions against its baseline; empty for other runs.
	Checks []Check `json:"checks,omitempty"`
	// Exploration, in the record of an exploration's findings, is what it concluded.
	Exploration *Exploration `json:"exploration,omitempty"`
	// Plots is which files of its plots the run's report writes under plots/ (--plots:
	// png, svg, both or none); empty: png, what report.html embeds. stockbench report
	// writes the same again.
	Plots string `json:"plots,omitempty"`
}

// NewFile starts a run record: its schema, the tool that writes it and how it was called
// (args with their passwords already masked), its id, when it started (now), where Redis
// was and this host. The header is written here only.
func NewFile(tool string, args []string, id string, target Target) *File {
	return &File{SchemaVersion: SchemaVersion, Tool: tool, Args: args, ID: id, StartedAt: time.Now().UTC(), Target: target, Host: ThisHost()}
}

// Check is one threshold applied to one run, or one regression against a baseline.
type Check struct {
	// Run names the run by its Key (scenario, design and fault plan), or what else the
	// check is of ("baseline ID" for a regression, a bug and its release for repro).
	Run       string `json:"run"`
	Threshold string `json:"threshold"`
	Held      bool   `json:"held"`
	// Selector is the key of the run file's thresholds the threshold came from ("*",
	// "token/none"), so that a broken one can be pointed at in the file.
	Selector string `json:"selector,omitempty"`
	// Got is the figure the threshold read (milliseconds for a latency); Reference the
	// same figure of the reference design, for a ratio.
	Got       *float64 `json:"got,omitempty"`
	Reference *float64 `json:"reference,omitempty"`
	// Unit is the figures' unit, "ms" for latencies; none for counts and rates.
	Unit string `json:"unit,omitempty"`
	// Why says why the threshold could not hold whatever the figure: the sale did not
	// finish, or there was nothing to compare with.
	Why string `json:"why,omitempty"`
}

// Broken is the checks that did not hold, each as its line.
func Broken(checks []Check) []string {
	var out []string
	for _, c := range checks {
		if !c.Held {
			out = append(out, c.String())
		}
	}
	return out
}

// String is the check as one line: what, where, and the numbers.
func (c Check) String() string {
	s := c.Run + ": " + c.Threshold
	switch {
	case c.Why != "":
		return s + ": " + c.Why
	case c.Got == nil:
		return s
	}
	s += ": got " + strconv.FormatFloat(*c.Got, 'g', 6, 64) + c.Unit
	if c.Reference != nil {
		s += ", reference " + strconv.FormatFloat(*c.Reference, 'g', 6, 64) + c.Unit
		if *c.Reference != 0 {
			s += fmt.Sprintf(" (%.2fx)", *c.Got / *c.Reference)
		}
	}
	return s
}

// Target describes the Redis a run talked to.
type Target struct {
	// Kind is how the server was obtained: container, process or external.
	Kind string `json:"kind"`
	// Addr is the host:port clients dial (the first seed for a cluster).
	Addr string `json:"addr"`
	// Detail says what runs there: an image and container id, a binary, a URL.
	Detail string `json:"detail"`
	// Why says why this kind was chosen over the others, when it was chosen for the user.
	Why string `json:"why,omitempty"`
	// Owned is true when the harness started the server and stopped it.
	Owned bool `json:"owned"`
	// Cluster is true for a Redis Cluster.
	Cluster bool `json:"cluster,omitempty"`
	// Version is the server's redis_version.
	Version     string `json:"version,omitempty"`
	PID         int    `json:"pid,omitempty"`
	ContainerID string `json:"container_id,omitempty"`
}

// String is the one line a report prints about the target.
func (t Target) String() string {
	s := fmt.Sprintf("%s %s at %s", t.Kind, t.Detail, t.Addr)
	if t.Version != "" {
		s += ", redis " + t.Version
	}
	if t.Why != "" {
		s += " (" + t.Why + ")"
	}
	return s
}

// Host describes the machine that generated the load.
type Host struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	CPUs int    `json:"cpus"`
	// Procs is how many CPUs the buyers' goroutines ran on (GOMAXPROCS).
	Procs     int    `json:"procs,omitempty"`
	GoVersion string `json:"go_version"`
	// CPUModel is the CPUs' model name, "" where it cannot be read: with CPUs, what a
	// speed recorded here is comparable with.
	CPUModel string `json:"cpu_model,omitempty"`
}

// ThisHost describes the machine the caller runs on, with GOMAXPROCS as it is now.
func ThisHost() Host {
	return Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Procs: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(), CPUModel: cpuModel()}
}

// cpuModel reads the model name of the machine's first CPU once, from Linux's
// /proc/cpuinfo ("" elsewhere).
var cpuModel = sync.OnceValue(func() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
})

// Read loads a results.json, refusing one of another schema version, one without runs,
// and one whose runs lack what reports and gates read.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	f, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("results: %s: %w", path, err)
	}
	return f, nil
}

// ReadRun reads a run's record: the results.json in run directory d, or d itself when
// it is a results file.
func ReadRun(d string) (*File, error) {
	path := d
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		path = filepath.Join(d, "results.json")
	} else if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such run directory or results file", d)
	}
	return Read(path)
}

// runIDPattern matches the names of run directories: their UTC start time, then a
// random part, so the newest sorts last.
var runIDPattern = regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]+$`)

// Newest is the newest run directory under runs that holds a results.json, "" when
// there is none.
func Newest(runs string) string {
	matches, _ := filepath.Glob(filepath.Join(runs, "*", "results.json"))
	sort.Strings(matches)
	for i := len(matches) - 1; i >= 0; i-- {
		if runIDPattern.MatchString(filepath.Base(filepath.Dir(matches[i]))) {
			return filepath.Dir(matches[i])
		}
	}
	return ""
}

// ReadRunOrNewest reads the run dir names, or, when dir is empty, the newest run under
// runs (Newest); flag is the command's flag that names one, for the error when there is
// none.
func ReadRunOrNewest(dir, runs, flag string) (*File, string, error) {
	if dir == "" {
		if dir = Newest(runs); dir == "" {
			return nil, "", fmt.Errorf("no run under %s; run one, or name it with %s", runs, flag)
		}
	}
	f, err := ReadRun(dir)
	return f, dir, err
}

// Decode reads a results.json from b, as Read does.
func Decode(b []byte) (*File, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("not a results file: %w", err)
	}
	if f.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("schema_version %d; this stockbench reads %d", f.SchemaVersion, SchemaVersion)
	}
	if err := checkFields(b); err != nil {
		return nil, err
	}
	if len(f.Runs) == 0 {
		why := ""
		if f.Incomplete != "" {
			why = " (" + f.Incomplete + ")"
		}
		return nil, fmt.Errorf("no runs%s: nothing to report or gate", why)
	}
	return &f, nil
}

// Fields every results file and every run in it must hold, not null: what the report,
// the matrices and the gates read.
var (
	fileFields = []string{"schema_version", "id", "runs"}
	runFields  = []string{"scenario", "impl", "params", "complete", "verdict", "class", "cell", "oracle"}
)

// checkFields refuses a file that decodes but lacks a required field, or holds null in
// one: Go would read those as zeros, and a gate would pass on nothing.
func checkFields(b []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return fmt.Errorf("not a results file: %w", err)
	}
	if err := present(top, fileFields); err != nil {
		return err
	}
	var runs []map[string]json.RawMessage
	if err := json.Unmarshal(top["runs"], &runs); err != nil {
		return fmt.Errorf("runs: %w", err)
	}
	for i, r := range runs {
		if r == nil {
			return fmt.Errorf("run %d is null", i)
		}
		if err := present(r, runFields); err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
	}
	return nil
}

func present(obj map[string]json.RawMessage, fields []string) error {
	for _, name := range fields {
		v, ok := obj[name]
		if !ok {
			return fmt.Errorf("%q is missing", name)
		}
		if string(bytes.TrimSpace(v)) == "null" {
			return fmt.Errorf("%q is null", name)
		}
	}
	return nil
}

// writeJSON writes f to path through a temporary file, so that a reader (or a crash)
// never sees half a file. The texts that may quote what the user typed or what a
// server said are masked first (see package redact).
func writeJSON(path string, f *File) error {
	f.redact()
	f.Verdicts = verdicts(f.Runs)
	for i := range f.Runs {
		f.Runs[i].FillFairness()
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("results: encode: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("results: write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(fmt.Errorf("results: rename %s: %w", tmp, err), os.Remove(tmp))
	}
	return nil
}

// redact masks passwords in f's texts; the report reads the same texts afterwards.
func (f *File) redact() {
	redact.Strings(f.Args)
	f.Incomplete, f.Target.Detail = redact.String(f.Incomplete), redact.String(f.Target.Detail)
	for i := range f.Runs {
		r := &f.Runs[i]
		r.Error, r.FirstError = redact.String(r.Error), redact.String(r.FirstError)
		for j := range r.Events {
			r.Events[j].Detail, r.Events[j].Err = redact.String(r.Events[j].Detail), redact.String(r.Events[j].Err)
		}
	}
}

// verdicts arranges the runs' cells by scenario, lock and fault plan.
func verdicts(runs []Run) map[string]map[string]map[string]string {
	v := make(map[string]map[string]map[string]string)
	for _, m := range Matrices(runs) {
		v[m.Scenario] = make(map[string]map[string]string)
		for _, l := range m.Locks {
			v[m.Scenario][l] = make(map[string]string)
			for _, f := range m.Faults {
				if c := m.Cell(l, f); c != "-" {
					v[m.Scenario][l][f] = c
				}
			}
		}
	}
	return v
}

// Slim returns a copy of f without what only plots read (histograms, timelines, fault
// events): what a committed gate baseline needs, at a tenth of the size.
func Slim(f *File) *File {
	s := *f
	s.Runs = make([]Run, len(f.Runs))
	for i, r := range f.Runs {
		r.Sales, r.Backlog, r.Events, r.Linearizability = nil, nil, nil, nil
		lat := make(map[string]Latency, len(r.Latency))
		for k, l := range r.Latency {
			l.Hist = ""
			lat[k] = l
		}
		r.Latency = lat
		s.Runs[i] = r
	}
	return &s
}

// WriteFile writes f to path as results.json does, through a temporary file.
func WriteFile(path string, f *File) error { return writeJSON(path, f) }
