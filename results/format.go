package results

import (
	"fmt"
	"time"
)

// FormatMicros prints a latency in microseconds as FormatDuration does.
func FormatMicros(us int64) string { return FormatDuration(time.Duration(us) * time.Microsecond) }

// FormatDuration prints three significant figures: 850µs, 1.23ms, 45.6ms, 1.20s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d/time.Microsecond)
	case d < time.Second:
		return sig3(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return sig3(d.Seconds()) + "s"
	}
}

func sig3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
