package bench

import (
	"github.com/stockbench/stockbench/results"
)

// MaxRuns bounds Options.Runs.
const MaxRuns = 1000

// draw is the k-th run of a job with seeds of its own (Options.Runs): the first keeps
// the job's seed, the others draw theirs from it (results.DrawSeed).
type draw struct {
	Job
	k int
}

// reseeded is job j with seed s: its think times, its fault's victims and rates.
func reseeded(j Job, s uint64) Job {
	switch j := j.(type) {
	case LockJob:
		j.Sale.Seed = s
		return j
	case QueueJob:
		j.Sale.Seed = s
		return j
	}
	return j
}

// seedOf is job j's seed.
func seedOf(j Job) uint64 {
	switch j := j.(type) {
	case LockJob:
		return j.Sale.Seed
	case QueueJob:
		return j.Sale.Seed
	}
	return 0
}

// expand is each job runs times over, as draws with seeds of their own, a job's draws
// one after the other.
func expand(jobs []Job, runs int) []Job {
	if runs <= 1 {
		return jobs
	}
	out := make([]Job, 0, len(jobs)*runs)
	for _, j := range jobs {
		for k := range runs {
			out = append(out, draw{reseeded(j, results.DrawSeed(seedOf(j), k)), k})
		}
	}
	return out
}

// unwrap is the job a draw is of.
func unwrap(j Job) Job {
	if d, ok := j.(draw); ok {
		return d.Job
	}
	return j
}

// fold is the record of draws ran (in expand's order, nil where one did not run): each
// job's worst finished draw, which its rerun command reproduces, with what every draw
// earned (results.Draws). A job none of whose draws finished keeps its first that
// ended.
func fold(ran []*results.Run, runs int) []results.Run {
	var out []results.Run
	for i := 0; i < len(ran); i += runs {
		var worst *results.Run
		tally := &results.Draws{}
		for _, r := range ran[i:min(i+runs, len(ran))] {
			switch {
			case r == nil:
				continue
			case r.Complete:
				tally.Add(r)
			}
			if worst == nil || worse(r, worst) {
				worst = r
			}
		}
		if worst == nil {
			continue
		}
		rec := *worst
		rec.Draws = tally
		out = append(out, rec)
	}
	return out
}

// worse reports whether draw a stands for its sale before b: a finished draw before
// one cut short, then the more severe class, then the more damage.
func worse(a, b *results.Run) bool {
	if a.Complete != b.Complete {
		return a.Complete
	}
	return a.Verdict.Worse(b.Verdict)
}
