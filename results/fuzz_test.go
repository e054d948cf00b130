package results_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/gate"
	"github.com/stockbench/stockbench/results/report"
)

// FuzzDecode: any bytes are a results file or one error, never a panic; a file that
// decodes is gated against itself, tabled and summarised without one, and a run that
// finished gates clean against itself.
func FuzzDecode(f *testing.F) {
	run := `{"scenario":"fault-sale","impl":"lua","kind":"lock","params":{"faults":"slow-work"},"complete":true,` +
		`"verdict":"SAFE","class":"SAFE","cell":"SAFE","oracle":{"bought":3,"initial_stock":3},` +
		`"latency":{"purchase":{"count":3,"p99_us":100,"hdr":"not base64"}},"not_exercised":["slow-work"]}`
	for _, s := range []string{
		`{"schema_version":1,"id":"x","runs":[` + run + `]}`,
		`{"schema_version":1,"id":"x","runs":[]}`,
		`{"schema_version":1,"id":"x","runs":null}`,
		`{"schema_version":1,"id":"x","runs":[{"scenario":"s"}]}`,
		`{"schema_version":1,"id":"x","runs":[` + run + `,` + run + `],"complete":false,"incomplete_reason":"x"}`,
		`{"schema_version":1,"id":"x","runs":[{"scenario":"q","impl":"list","kind":"queue","params":{"fulfil":"naive"},"complete":false,"verdict":"UNKNOWN","class":"UNKNOWN","cell":"UNKNOWN","oracle":{},"queue":{"final_unknown":true}}]}`,
		`[]`, `null`, `{"schema_version":"1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := results.Decode(b)
		if err != nil {
			return
		}
		res := gate.Compare(file, file, gate.Defaults)
		for i := range file.Runs {
			file.Runs[i].FillFairness()
		}
		report.WriteReport(io.Discard, file.Runs, 0)
		report.WriteReport(io.Discard, file.Runs, 60)
		report.Summary(file, nil)
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(file); err != nil {
			t.Fatalf("a decoded file does not encode: %v", err)
		}
		if _, err := results.Decode(buf.Bytes()); err != nil {
			t.Fatalf("a decoded file, encoded, does not decode: %v", err)
		}
		_ = res
	})
}
