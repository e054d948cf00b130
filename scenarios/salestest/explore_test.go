package salestest_test

import (
	"fmt"
	"testing"
)

// recorder is a test whose failures are kept, to be read, rather than failing it.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
