//go:build long

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"sigs.k8s.io/yaml"
)

// The CI templates of examples/ci, and the route of stockbench init each job's
// repository starts from.
var (
	githubWorkflow = filepath.Join("..", "..", "examples", "ci", "github", "stockbench.yml")
	gitlabCI       = filepath.Join("..", "..", "examples", "ci", "gitlab", ".gitlab-ci.yml")
	jobRoutes      = map[string][]string{"lock-file": {"--lock-file"}, "adapter": {"--adapter", "python"}, "go-kit": {"--go"}}
)

// TestWorkflowLints: actionlint, with shellcheck on the scripts, finds nothing in the
// GitHub Actions workflow, and finds the mistake in a copy with one (so that its silence
// means something).
func TestWorkflowLints(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		if os.Getenv("STOCKBENCH_REQUIRE_CI_TOOLS") != "" {
			t.Fatal("no shellcheck and STOCKBENCH_REQUIRE_CI_TOOLS is set: apt-get install shellcheck")
		}
		t.Log("no shellcheck on PATH: actionlint lints the workflow without it (apt-get install shellcheck)")
	}
	lint := func(path string) []*actionlint.Error {
		t.Helper()
		l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		errs, err := l.LintFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return errs
	}
	for _, e := range lint(githubWorkflow) {
		t.Error(e)
	}
	b, err := os.ReadFile(githubWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "stockbench.yml")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(b), "runs-on: ubuntu-latest", "runs-on: ubuntu-latest\n    step: []", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := lint(bad); len(errs) == 0 {
		t.Error("actionlint found nothing in a job with an unknown key")
	}
}

// githubScripts are the run scripts of a job of the workflow, in order.
func githubScripts(t *testing.T, job string) []string {
	t.Helper()
	b, err := os.ReadFile(githubWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	wf, errs := actionlint.Parse(b)
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	j, ok := wf.Jobs[job]
	if !ok {
		t.Fatalf("the workflow has no job %s", job)
	}
	var scripts []string
	for _, s := range j.Steps {
		if run, ok := s.Exec.(*actionlint.ExecRun); ok {
			scripts = append(scripts, run.Run.Value)
		}
	}
	return scripts
}

// gitlabScripts are a job's before_script and script lines, its extends' first.
func gitlabScripts(t *testing.T, job string) []string {
	t.Helper()
	b, err := os.ReadFile(gitlabCI)
	if err != nil {
		t.Fatal(err)
	}
	type gitlabJob struct {
		Extends      string   `json:"extends"`
		BeforeScript []string `json:"before_script"`
		Script       []string `json:"script"`
	}
	var jobs map[string]gitlabJob // every top-level key of the file is a job
	if err := yaml.Unmarshal(b, &jobs); err != nil {
		t.Fatal(err)
	}
	j, ok := jobs[job]
	if !ok {
		t.Fatalf("the GitLab file has no job %s", job)
	}
	before := j.BeforeScript
	if base, ok := jobs[j.Extends]; ok && before == nil {
		before = base.BeforeScript
	}
	return append(append([]string(nil), before...), j.Script...)
}

// runJob runs a job's scripts here, in a directory stockbench init wrote for the job's
// route, as the runner would: bash -e, the command built for these tests first on PATH
// in place of its go install, and without the lines that install Debian's packages
// (make test installed them). It returns the directory and the step summary.
// prepare, when set, readies the directory first (the kit's go.mod reaching this
// checkout); env is added to the scripts' environment.
func runJob(t *testing.T, job string, scripts []string, prepare func(dir string), env ...string) (dir, summary string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "repo")
	if code, stdout, stderr := stockbench(t, append([]string{"init", "--dir", dir}, jobRoutes[job]...)...); code != 0 {
		t.Fatalf("init for %s: exit %d:\n%s\n%s", job, code, stdout, stderr)
	}
	if prepare != nil {
		prepare(dir)
	}
	summary = filepath.Join(t.TempDir(), "step-summary.md")
	env = append(env, "GOBIN="+t.TempDir()) // where the job's go install puts what it installs
	for _, s := range scripts {
		if out, err := runScript(dir, s, summary, env...); err != nil {
			t.Fatalf("%s: %q: %v\n%s", job, s, err, out)
		}
	}
	b, _ := os.ReadFile(summary)
	return dir, string(b)
}

// runScript runs one of a job's scripts in dir as the runner would (see runJob), with
// summary as its step summary; env holds GOBIN.
func runScript(dir, script, summary string, env ...string) ([]byte, error) {
	var kept []string
	for _, line := range strings.Split(script, "\n") {
		if strings.Contains(line, "apt-get") || strings.Contains(line, "go install github.com/stockbench/stockbench/") {
			continue
		}
		kept = append(kept, line)
	}
	cmd := exec.Command("bash", "-e", "-c", strings.Join(kept, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+summary)
	cmd.Env = append(cmd.Env, env...)
	for _, e := range env {
		if gobin, ok := strings.CutPrefix(e, "GOBIN="); ok {
			cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(binary)+":"+gobin+":/usr/bin:"+os.Getenv("PATH"))
		}
	}
	return cmd.CombinedOutput()
}

// TestWorkflowsRunHere runs the commands of the templates' lock-file and adapter jobs,
// GitHub's and GitLab's, here: each check passes on init's lock, writes a JUnit file
// that junitparser reads with every case passed, and GitHub's fills the step summary.
// The kit's job is TestWorkflowKitRunsHere's, in the long suite.
func TestWorkflowsRunHere(t *testing.T) {
	t.Parallel()
	for _, job := range []string{"lock-file", "adapter"} {
		for ci, scripts := range map[string]func(*testing.T, string) []string{"github": githubScripts, "gitlab": gitlabScripts} {
			t.Run(ci+"/"+job, func(t *testing.T) {
				t.Parallel()
				dir, summary := runJob(t, job, scripts(t, job), nil)
				lines := readJUnit(t, filepath.Join(dir, "stockbench-junit.xml"))
				for _, l := range lines[:len(lines)-1] {
					if !strings.Contains(l, "\tpassed\t") {
						t.Errorf("want every case passed, got %s", l)
					}
				}
				if ci == "github" && !strings.Contains(summary, "# stockbench run ") {
					t.Errorf("the step summary has no verdict table: %q", summary)
				}
			})
		}
	}
}
