package analysis

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
)

// A standalone reproduction shows a finding without stockbench: a program in the
// library's own language that uses the library and a redis-server it starts itself,
// prints what it measured, and exits 1 when it shows the break (0 when it does not).
// Each lives in DIR/repro/LIBRARY-N/ beside the pages, named by its manifest
// (repro.json), with the report a maintainer would want in DIR/reports/LIBRARY-N.md.
// An analysis runs every reproduction of its library and keeps what each printed in
// the record; a finding is confirmed only where one of them showed it.
const (
	ReproDir      = "repro"
	ReportsDir    = "reports"
	reproManifest = "repro.json"
	// DefaultReproTimeout bounds a reproduction whose manifest sets none.
	DefaultReproTimeout = 2 * time.Minute
	// reproLines is how much of a reproduction's output the record keeps: its last
	// lines, each cut at reproWidth bytes.
	reproLines, reproWidth = 40, 300
)

// Repro is a reproduction's manifest: the finding it shows and how to run it.
type Repro struct {
	// Faults and Class name the finding, as the page does: the cell's fault ("none"
	// for none) and the class it showed.
	Faults string       `json:"faults"`
	Class  oracle.Class `json:"class"`
	// Command is the program and its arguments, run in the reproduction's directory;
	// a program named with a slash is found from there, any other on the PATH.
	Command []string `json:"command"`
	// Timeout bounds a run (a Go duration); default DefaultReproTimeout.
	Timeout string `json:"timeout,omitempty"`
	// ID is the directory's name, LIBRARY-N; Dir its path. Neither is in the file.
	ID  string `json:"-"`
	Dir string `json:"-"`
}

// ReproRun is one run of a reproduction: what it printed and how it exited.
type ReproRun struct {
	ID      string        `json:"id"`
	Faults  string        `json:"faults"`
	Class   oracle.Class  `json:"class"`
	Command string        `json:"command"`
	Date    string        `json:"date"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Exit is the program's exit status: 1 it showed the break, 0 it did not; -1 it
	// was stopped at its timeout, or could not start.
	Exit   int      `json:"exit"`
	Output []string `json:"output"`
}

// Shows reports whether the run showed the break.
func (r ReproRun) Shows() bool { return r.Exit == 1 }

// Outcome says in words how the run ended.
func (r ReproRun) Outcome() string {
	switch r.Exit {
	case 1:
		return "exit 1: it shows the break"
	case 0:
		return "exit 0: it did not show the break"
	case -1:
		return "it did not finish (stopped at its timeout, or did not start)"
	}
	return fmt.Sprintf("exit %d: it failed to run", r.Exit)
}

// Repros reads the reproductions of library in dir (DIR/repro/LIBRARY-N), each checked
// before anything runs: its manifest there and whole, its command given and found, its
// fault and class known, its report in DIR/reports. None is no error.
func Repros(dir, library string) ([]Repro, error) {
	if dir == "" {
		return nil, nil
	}
	paths, err := filepath.Glob(filepath.Join(dir, ReproDir, library+"-*"))
	if err != nil {
		return nil, err
	}
	var out []Repro
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			continue
		}
		r, err := readRepro(p)
		if err != nil {
			return nil, fmt.Errorf("analyse: reproduction %s: %w", p, err)
		}
		if _, err := os.Stat(filepath.Join(dir, ReportsDir, r.ID+".md")); err != nil {
			return nil, fmt.Errorf("analyse: reproduction %s: no report at %s", p, filepath.Join(dir, ReportsDir, r.ID+".md"))
		}
		out = append(out, r)
	}
	return out, nil
}

func readRepro(dir string) (Repro, error) {
	r := Repro{ID: filepath.Base(dir), Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, reproManifest))
	if err != nil {
		return r, fmt.Errorf("no %s naming its command", reproManifest)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("%s: %w", reproManifest, err)
	}
	r.ID, r.Dir = filepath.Base(dir), dir
	switch {
	case len(r.Command) == 0 || r.Command[0] == "":
		return r, fmt.Errorf("%s names no command", reproManifest)
	case r.Faults != faults.None && !known(r.Faults):
		return r, fmt.Errorf("%s: unknown fault %q", reproManifest, r.Faults)
	case !slices.Contains(oracle.Classes(), r.Class) || r.Class == oracle.ClassSafe:
		return r, fmt.Errorf("%s: %q is no class of finding", reproManifest, r.Class)
	}
	if _, err := r.timeout(); err != nil {
		return r, err
	}
	prog := r.Command[0]
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(dir, prog)
		}
		_, err = os.Stat(prog)
	} else {
		_, err = exec.LookPath(prog)
	}
	if err != nil {
		return r, fmt.Errorf("its command %q is not there: %w", r.Command[0], err)
	}
	return r, nil
}

// known reports whether fault names a cell's fault plan: a fault alone, or a
// deployment's, with its settings and its servers.
func known(fault string) bool {
	plan, _ := CellPlan(fault)
	_, err := faults.Parse(plan)
	return err == nil
}

func (r Repro) timeout() (time.Duration, error) {
	if r.Timeout == "" {
		return DefaultReproTimeout, nil
	}
	d, err := time.ParseDuration(r.Timeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: timeout: want a positive duration, got %q", reproManifest, r.Timeout)
	}
	return d, nil
}

// Run runs the reproduction in its directory, in a process group of its own so that
// the servers it started go with it when its time is up, and keeps the end of what it
// printed.
func (r Repro) Run(ctx context.Context) ReproRun {
	d, _ := r.timeout()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Command[0], r.Command[1:]...)
	cmd.Dir = r.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	began := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it started and left behind
	}
	run := ReproRun{ID: r.ID, Faults: r.Faults, Class: r.Class, Command: strings.Join(r.Command, " "),
		Date: began.UTC().Format(time.DateOnly), Elapsed: time.Since(began).Round(time.Millisecond), Output: lastLines(out.Bytes())}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		run.Exit = -1
		run.Output = append(run.Output, fmt.Sprintf("(stopped after %s)", d))
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		run.Exit = exit.ExitCode()
	default:
		run.Exit = -1
		run.Output = append(run.Output, err.Error())
	}
	return run
}

// lastLines are the last reproLines lines of b, each cut at reproWidth bytes.
func lastLines(b []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		if len(line) > reproWidth {
			line = line[:reproWidth] + "..."
		}
		lines = append(lines, line)
	}
	if len(lines) > reproLines {
		lines = append([]string{fmt.Sprintf("(%d lines before these)", len(lines)-reproLines)}, lines[len(lines)-reproLines:]...)
	}
	return lines
}

// reproOf is the record's run of a reproduction of f, a cell's finding; one that
// showed it first.
func (an Analysis) reproOf(f Finding) (ReproRun, bool) {
	var found *ReproRun
	for i, r := range an.Record.Repros {
		if f.Timing == "" && r.Faults == f.Faults && r.Class == f.Class && (found == nil || r.Shows() && !found.Shows()) {
			found = &an.Record.Repros[i]
		}
	}
	if found == nil {
		return ReproRun{}, false
	}
	return *found, true
}

// ownGroup runs cmd in a process group of its own, killed whole when its context ends.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
