// Package scenarios runs the sales stockbench measures, through any lock or queue design,
// on any Redis, under a fault plan, and records what every buyer and worker saw.
//
// Every sale has one lifecycle (set up, warm the connections, start the faults, run the
// buyers under a watch of the servers, read the outcome, clean up, judge), written once;
// a [FlashSale] (buyers race through a lock design for a stock counter) and a [QueueSale]
// (buyers enqueue orders, workers fulfil them) supply only their own steps. Both share
// [Sale]: who buys, how much there is, over how many connections, arriving as a [Pacer]
// says, under which faults.
//
// A buyer of a lock design is a goroutine, started at once (closed load) or at its
// arrival time (open load): it waits on the lock, sleeps between tries and may be paused
// or killed by a fault, and a goroutine keeps that straight-line code. Its Redis calls
// run on an executor of one goroutine per connection, and the buyer waits for them on a
// channel: a goroutine parked inside go-redis's pool queue kept about 8 KB of stack, one
// parked on the executor's queue stays within the 2 KB it started with. The price is
// about 4.5 KB per waiting buyer, where a state machine would need a few hundred bytes;
// 200,000 waiting buyers take about 0.9 GB.
//
// A buyer of a design whose purchase is one call (lua) has nothing to wait for but a
// connection, so it is a state machine of one step: an index that one worker per
// connection takes in turn (see feed). It costs a ledger entry and no goroutine (a
// million buyers take about 170 MB), and no hand-over between goroutines, which is what
// lets the lua sale keep pace with redis-benchmark. A queue sale's orders are sent the
// same way.
//
// A design need not be registered to be run: build a [lockimpl.Impl] or [queueimpl.Impl]
// around your own Locker, Purchaser or Queue and pass it to Run, on a [Redis] of your own
// ([Single] wraps one client).
package scenarios
