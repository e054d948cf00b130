package report

import (
	"testing"
	"time"

	"gonum.org/v1/plot/vg/draw"

	"github.com/stockbench/stockbench/results"
)

// BenchmarkRenderPNG draws a small run's figures both ways in each iteration, as a report
// draws them (pooled rasters drawn on in place, the fastest compression) and as vgimg's
// own canvas does (a raster and gg's copy of it per figure, the default compression),
// and reports the ratio of their times measured side by side: below 1, the report's way
// is faster on this machine, whatever else runs on it.
func BenchmarkRenderPNG(b *testing.B) {
	figs := Figures([]results.Run{tinyRun(b, "lua", "", 200, time.Millisecond), tinyRun(b, "token", "", 200, 2*time.Millisecond)})
	vgimg := func(f *Figure) ([]byte, error) {
		c, err := draw.NewFormattedCanvas(f.w, f.h, "png")
		if err != nil {
			return nil, err
		}
		return f.drawOn(c)
	}
	var pooled, plain time.Duration
	for b.Loop() {
		for i := range figs {
			if figs[i].plot == nil {
				continue
			}
			began := time.Now()
			if _, err := figs[i].renderPNG(); err != nil {
				b.Fatal(err)
			}
			pooled += time.Since(began)
			began = time.Now()
			if _, err := vgimg(&figs[i]); err != nil {
				b.Fatal(err)
			}
			plain += time.Since(began)
		}
	}
	b.ReportMetric(float64(pooled)/float64(plain), "pooled/vgimg")
}
