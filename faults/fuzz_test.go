package faults

import "testing"

// FuzzParse: any text is a plan or one error, never a panic; a plan reads back from its
// written form as the same plan, and every setting it holds is in range.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"none", "", "client-pause", "redis-pause:for=3s", "slow-work:nth=2+net-latency:latency=5ms:jitter=1ms",
		"worker-crash:count=5:nth=1", "client-pause:nth=0", "redis-pause:for=-1s", "a+b", "+", ":", "slow-work:nth=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := Parse(spec)
		if err != nil {
			return
		}
		back, err := Parse(p.String())
		if err != nil || back.String() != p.String() {
			t.Fatalf("%q parsed as %q, which reads back as %q, %v", spec, p, back, err)
		}
		for _, f := range p {
			if f.Nth < 0 || f.Count < 0 || f.For < 0 || f.Latency < 0 || f.Jitter < 0 {
				t.Fatalf("%q: a setting out of range: %+v", spec, f)
			}
		}
		if _, ok := p.AppliesTo(Locks | Queues); !ok {
			t.Fatalf("%q: a fault that applies to no sale", spec)
		}
	})
}
