package bench

import (
	"cmp"
	"context"
	"fmt"

	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// JobOf is the job sale s describes, checked as the command line s.Args would be: its
// design built in or brought from its source, its preset with its settings and its
// fault plan. An error is a design that cannot be had or a setting the sale's checks
// refuse (a shrink or a draw went past what they take).
func JobOf(s *results.Sale) (Job, error) {
	var c catalog.Catalog
	if err := addSource(&c, s); err != nil {
		return nil, err
	}
	external := s.External()
	if s.Kind == results.QueueSale {
		return queueJob(&c, s, external)
	}
	sale, err := scenarios.FlashSaleOf(*s)
	if err != nil {
		return nil, err
	}
	if external {
		sale.KeyLease = scenarios.DefaultKeyLease
	}
	impl, err := c.Lock(s.Design)
	if err == nil {
		err = fitsExternal(external, sale.Faults, impl.LockNodes(), impl.Name)
	}
	if err == nil {
		err = cmp.Or(scenarios.Refused(impl.Name, impl.Outside, sale.Faults), sale.Takes(impl))
	}
	if err != nil {
		return nil, err
	}
	return LockJob{Sale: sale, Impl: impl}, nil
}

func queueJob(c *catalog.Catalog, s *results.Sale, external bool) (Job, error) {
	sale, err := scenarios.QueueSaleOf(*s)
	if err != nil {
		return nil, err
	}
	if external {
		sale.KeyLease = scenarios.DefaultKeyLease
	}
	impl, err := c.Queue(s.Design)
	switch {
	case err != nil:
	case external && impl.Own:
		err = fmt.Errorf("queue %s writes keys of its own outside the run's prefix, so it runs only on servers the harness starts", impl.Name)
	default:
		err = cmp.Or(fitsExternal(external, sale.Faults, 1, impl.Name), scenarios.Refused(impl.Name, impl.Outside, sale.Faults))
	}
	if err != nil {
		return nil, err
	}
	return QueueJob{Sale: sale, Impl: impl}, nil
}

// addSource adds to c the design of s that is not built in, from where it comes.
func addSource(c *catalog.Catalog, s *results.Sale) error {
	src := s.Source
	switch {
	case src == nil:
		return nil
	case src.File != "":
		return c.AddFile(src.File, s.Kind != results.QueueSale)
	case src.Go != "":
		c.Procs, c.Nodes = src.Procs, src.Nodes
		return c.AddGo(context.Background(), cmp.Or(src.Part, adapter.SupportsLock), s.Design+"="+src.Go)
	case src.Exec != "":
		c.Procs, c.Nodes = src.Procs, src.Nodes
		return c.AddExec(src.Part, s.Design+"="+src.Exec)
	}
	return nil
}

// SaleOf is job j as a value (scenarios.FlashSale.Value), with where its design comes
// from in c; nil for a job that is no sale of one design.
func SaleOf(c *catalog.Catalog, j Job) *results.Sale {
	var s results.Sale
	switch j := j.(type) {
	case LockJob:
		s = j.Sale.Value(j.Impl.Name)
	case QueueJob:
		s = j.Sale.Value(j.Impl.Name)
	default:
		return nil
	}
	s.Source = c.Source(s.Design)
	return &s
}
