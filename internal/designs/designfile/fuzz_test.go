package designfile

import "testing"

// FuzzDecode: any bytes are a design or one error naming where, never a panic; a design
// that reads has a name and its scripts.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"name": "x", "lock": {` + acquire + `,` + release + `}}`,
		`{"name": "q", "queue": {"enqueue": {"lua": "return 1"}, "dequeue": {"lua": "return 1", "args": ["worker"]}, "len": {"lua": "return 0"}}}`,
		`{"name": "x", "lock": {"acquire": {"lua": "x", "file": "y"}}}`, `{"name": 3}`, `{"name": "x"`, ``, `[]`, `null`,
		`{"name": "x", "lock": {"acquire": {"lua": "x", "keys": ["queue"]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decode("fuzz.json", b)
		if err != nil {
			return
		}
		if d.Name() == "" || (d.Lock == nil) == (d.Queue == nil) || len(d.scripts) == 0 {
			t.Fatalf("a design without a name or scripts: %+v", d)
		}
	})
}
