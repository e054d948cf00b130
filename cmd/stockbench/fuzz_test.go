package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// FuzzRunFlags: any command line for run is one job, checked, or one usage error,
// never a panic; a job's sale validates and has a memory estimate.
func FuzzRunFlags(f *testing.F) {
	for _, s := range []string{
		"--lock lua", "--lock token --fault client-pause:nth=2 --ttl 1s --think longtail:1ms,1500ms,0.01",
		"--queue stream --workers 8 --visibility 300ms --fulfil idempotent --rate 100",
		"--lock lua --rate 1e9 --ramp-to 1 --warmup 1h", "--lock set-nx-ex --buyers 0", "--lock lua --timeout -1s",
		"--lock lua --think uniform:3ms-1ms", "--queue list --fault redis-restart:nth=1:count=2", "--lock lua --conns -1",
		"--lock token --ttl 9223372036854775807ns", "--lock lua --rate NaN", "--lock --queue", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		_, jobs, _, err := runJobs(strings.Fields(line), io.Discard)
		if err != nil {
			if !strings.HasPrefix(err.Error(), bench.ErrUsage.Error()+": ") {
				t.Fatalf("%q: an error that is not the user's: %v", line, err)
			}
			return
		}
		for _, j := range jobs {
			switch j := j.(type) {
			case bench.LockJob:
				if err := j.Sale.Validate(); err != nil {
					t.Fatalf("%q: the job does not validate: %v", line, err)
				}
			case bench.QueueJob:
				if err := j.Sale.Validate(); err != nil {
					t.Fatalf("%q: the job does not validate: %v", line, err)
				}
			}
			if fp := j.Footprint(true); fp.Bytes <= 0 {
				t.Fatalf("%q: a footprint of %d bytes", line, fp.Bytes)
			}
		}
	})
}
