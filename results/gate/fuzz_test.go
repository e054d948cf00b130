package gate

import (
	"math"
	"testing"
)

// FuzzGateRules: any bytes are gate rules or one error, never a panic; rules that read
// are valid.
func FuzzGateRules(f *testing.F) {
	for _, s := range []string{`{}`, `{"max_throughput_drop": 0.5, "ignore": ["*/redlock/*"]}`, `{"max_p99_rise": -1}`,
		`{"ignore": ["["]}`, `{"nope": 1}`, `{} {}`, `{"min_samples": 1e400}`, `{"max_p99_rise": 1e308}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRules(b)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded rules do not validate: %v", err)
		}
	})
}

// FuzzThreshold: any text is a threshold or one error, never a panic; one that reads
// reads the same again from its own text, and its bound is a finite number.
func FuzzThreshold(f *testing.F) {
	for _, s := range []string{"oversold == 0", "p99 < 50ms", "sales_per_sec >= 0.5 * lua", "p999<=1.5s", "lost != 3",
		"oversold", "== 0", "p99 < -1h", "sold > 1e400", "x * y >= 2", "sales_per_sec >= 0.5 * * lua", "p50 < 0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			return
		}
		if math.IsNaN(th.Value) || math.IsInf(th.Value, 0) {
			t.Fatalf("%q: bound %v", s, th.Value)
		}
		again, err := ParseThreshold(th.Text)
		if err != nil || again != th {
			t.Fatalf("%q reads as %+v, its text %q as %+v (%v)", s, th, th.Text, again, err)
		}
	})
}
