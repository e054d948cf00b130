package gate

import (
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
