package servers

import (
	"context"
	"errors"
	"fmt"

	"github.com/stockbench/stockbench/internal/redact"
)

// Auto starts Redis in a container when a Docker engine answers and has (or can pull) the
// image, and otherwise as a local process; Info.Why says which and why.
type Auto struct {
	Container Container
	Process   Process
}

var _ Provider = Auto{}

// Start implements [Provider].
func (a Auto) Start(ctx context.Context) (*Target, error) {
	t, cerr := a.Container.Start(ctx)
	if cerr == nil {
		t.Info.Why = "auto: a Docker engine answered"
		return t, nil
	}
	if ctx.Err() != nil {
		return nil, cerr
	}
	t, perr := a.Process.Start(ctx)
	if perr != nil {
		return nil, errors.Join(cerr, perr)
	}
	t.Info.Why = fmt.Sprintf("auto: %v", cerr)
	return t, nil
}

// RedactURL hides a password in u so that it never reaches a log or a result file, and
// from every text redact.String is given later.
func RedactURL(u string) string { return redact.URL(u) }
