package results

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency summarises one phase's histogram, in microseconds. Hist is the whole histogram
// (HdrHistogram V2 compressed, base64), so results from several runs or load generators
// merge without loss.
type Latency struct {
	Count  int64   `json:"count"`
	MeanUs float64 `json:"mean_us"`
	P50Us  int64   `json:"p50_us"`
	P90Us  int64   `json:"p90_us"`
	P99Us  int64   `json:"p99_us"`
	P999Us int64   `json:"p999_us"`
	MaxUs  int64   `json:"max_us"`
	Hist   string  `json:"hdr"`
}

// Summarize returns h's summary with h encoded inside it.
func Summarize(h *hdrhistogram.Histogram) (Latency, error) {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return Latency{}, fmt.Errorf("results: encode histogram: %w", err)
	}
	return Latency{
		Count: h.TotalCount(), MeanUs: h.Mean(),
		P50Us: h.ValueAtQuantile(50), P90Us: h.ValueAtQuantile(90), P99Us: h.ValueAtQuantile(99),
		P999Us: h.ValueAtQuantile(99.9), MaxUs: h.Max(), Hist: string(enc),
	}, nil
}

// Histogram decodes the histogram kept in l.
func (l Latency) Histogram() (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(l.Hist))
	if err != nil {
		return nil, fmt.Errorf("results: decode histogram: %w", err)
	}
	return h, nil
}
