//go:build long

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpeedJobsRunHere runs the templates' lock-file-speed jobs, GitHub's and GitLab's,
// in a repository init wrote, pushed to an origin as its base branch: the design timed
// against itself passes, with the table in GitHub's step summary; GitHub's job with the
// change's release made slower (a Lua loop, run on every release) fails on its row. The
// jobs' sales are made smaller (300 buyers), for the suite's time.
func TestSpeedJobsRunHere(t *testing.T) {
	t.Parallel()
	pushed := func(dir string) {
		origin := filepath.Join(filepath.Dir(dir), "origin.git")
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "mylock"},
			{"clone", "-q", "--bare", ".", origin}, {"remote", "add", "origin", origin}, {"fetch", "-q", "origin"}} {
			cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	env := []string{"GITHUB_BASE_REF=main", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main"}
	for ci, scripts := range map[string]func(*testing.T, string) []string{"github": githubScripts, "gitlab": gitlabScripts} {
		t.Run(ci, func(t *testing.T) {
			t.Parallel()
			steps := scripts(t, "lock-file-speed")
			for i, st := range steps { // the job's commands on a smaller sale, for the suite's time
				steps[i] = strings.ReplaceAll(st, "--buyers 2000 --stock 2000", "--buyers 300 --stock 300")
			}
			dir, summary := runJob(t, "lock-file", steps, pushed, env...)
			if ci == "github" && !strings.Contains(summary, "| flash-sale/mylock/none |") {
				t.Errorf("the step summary has no row of mylock: %q", summary)
			}
			if ci != "github" {
				return // the slower change once, through GitHub's job
			}
			lock := filepath.Join(dir, "locks", "mylock.json")
			b, err := os.ReadFile(lock)
			if err != nil {
				t.Fatal(err)
			}
			slower := strings.Replace(string(b), `"lua": "if redis.call('GET'`, `"lua": "for i = 1, 3000000 do end if redis.call('GET'`, 1)
			if slower == string(b) {
				t.Fatal("init's release script changed: update the test's slower change")
			}
			os.WriteFile(lock, []byte(slower), 0o644)
			os.RemoveAll(filepath.Join(filepath.Dir(dir), "base")) // the job's first run added it
			exec.Command("git", "-C", dir, "worktree", "prune").Run()
			var out []byte
			for _, s := range steps {
				if out, err = runScript(dir, s, filepath.Join(t.TempDir(), "summary.md"), append(env, "GOBIN="+t.TempDir())...); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(string(out), "| flash-sale/mylock/none |") || !strings.Contains(string(out), "**slower**") {
				t.Errorf("a slower release: %v, want the job failed on mylock's row:\n%s", err, out)
			}
		})
	}
}
