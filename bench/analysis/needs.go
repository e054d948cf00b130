package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// A remedy is what a flash sale adds to a library for the classes it showed under some
// faults: a remedy applies to a record of its kind where a draw of a cell of one of its
// faults (any, when none are named) showed one of its classes.
type remedy struct {
	kind    results.SaleKind
	what    string
	classes []oracle.Class
	faults  []faults.Kind
}

var (
	// twoHolders are what a second holder costs when the first one writes: an OVERLAP
	// whose stale holder was told no and withdrew cost nothing in these sales.
	twoHolders = []oracle.Class{oracle.ClassOversold, oracle.ClassLost, oracle.ClassBroken}
	workerDies = []faults.Kind{faults.WorkerCrash, faults.WorkerCrashLate, faults.WorkerTerm, faults.WorkerPause}
)

// remedies, each described once; a library's list keeps this order.
var remedies = []remedy{
	{results.LockSale, "a fencing token: the stock written only while the lock's token (or a number that grows with each acquire) is still the current one, checked by Redis in the same script as the write, so that a holder whose lock went writes nothing",
		twoHolders, nil},
	{results.LockSale, "persistence that keeps the lock keys across a restart (appendonly yes, appendfsync always), or the restart delayed past the longest TTL, as the Redis docs' distributed-locks page prescribes",
		twoHolders, []faults.Kind{faults.RedisRestart, faults.RollingRestart}},
	{results.LockSale, "a failover loses the lock keys its replica had not received: the fencing token above, or WAIT for the replica after each acquire",
		twoHolders, []faults.Kind{faults.Failover}},
	{results.LockSale, "maxmemory-policy noeviction on the server that holds the locks (or a server of their own)",
		twoHolders, []faults.Kind{faults.Evict}},
	{results.LockSale, "the servers' clocks slewed, never stepped",
		twoHolders, []faults.Kind{faults.ClockJump}},
	{results.LockSale, "a lock left with no live holder, or stock left unsold while buyers gave up: a TTL, and a patience, that the sale can wait out",
		[]oracle.Class{oracle.ClassStuck}, nil},
	{results.QueueSale, "an idempotent handler: each order applied once, by a unique constraint on its id where it is written",
		[]oracle.Class{oracle.ClassDuplicated}, nil},
	{results.QueueSale, "a reliable fetch: each job kept in Redis until its worker acknowledges it, and handed to another worker when that one is gone",
		[]oracle.Class{oracle.ClassLost}, workerDies},
	{results.QueueSale, "persistence on the queue's server (appendonly yes, appendfsync always): a server restarted empty loses every job it held",
		[]oracle.Class{oracle.ClassLost}, []faults.Kind{faults.RedisRestart, faults.RollingRestart, faults.Failover}},
	{results.QueueSale, "no reliance on the order jobs were pushed in: a sequence number the handler checks, where order matters",
		[]oracle.Class{oracle.ClassReordered}, nil},
	{results.QueueSale, "jobs left waiting at the end: a worker count and timeouts that drain the queue within the sale",
		[]oracle.Class{oracle.ClassStuck}, nil},
}

// Need is a remedy a library's record calls for, and the classes and faults that did.
type Need struct {
	What    string
	Because string // "OVERLAP under client-pause, app-pause; OVERSOLD under evict"
}

// Needs are the remedies the record's cells call for, in the remedies' order.
func (an Analysis) Needs() []Need {
	var out []Need
	for _, r := range remedies {
		if r.kind != an.Record.Kind {
			continue
		}
		var because []string
		for _, class := range r.classes {
			var under []string
			for _, cell := range an.Record.Cells {
				if (r.faults == nil || slices.Contains(r.faults, faults.Kind(FaultsOf(cell.Fault)[0]))) && cell.count(class) > 0 {
					under = append(under, cell.Fault)
				}
			}
			if len(under) > 0 {
				because = append(because, fmt.Sprintf("%s under %s", class, strings.Join(under, ", ")))
			}
		}
		if len(because) > 0 {
			out = append(out, Need{r.what, strings.Join(because, "; ")})
		}
	}
	return out
}
