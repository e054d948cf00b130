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
// A buyer of a lock design waiting for the lock is a state machine, not a goroutine: an
// entry among the waiters (a heap by when it tries next, see waiters) and a ledger entry.
// When its time comes, the executor of its application instance (one goroutine per
// connection, see executor) runs its try; a buyer that did not get the lock asks whether
// stock is left and goes back among the waiters, and one that got it becomes a holder,
// with a goroutine of its own for the critical section, where faults pause, slow or kill
// it and straight-line code reads best. Holders are few; waiters cost about 150 bytes
// each, and a million of them wait within 200 MB.
//
// Buyers reach Redis through FlashSale.Apps application instances, each with its own
// pool and copy of the design. A holder's calls queue behind the tries of its instance's
// waiters, first come first served, as in go-redis's pool: the sale counts how long each
// holder waited for a connection, and a lock lost to that wait is put down to it in the
// record (results.LostLocks), apart from one lost to slow work or a pause.
//
// A buyer of a design whose purchase is one call (lua) has nothing to wait for but a
// connection, so it is a state machine of one step: an index that one worker per
// connection takes in turn (see feed). It costs a ledger entry and no goroutine (a
// million buyers take about 170 MB), and no hand-over between goroutines, which is what
// lets the lua sale keep pace with redis-benchmark. A queue sale's orders are sent the
// same way.
//
// A sale too big for one load generator runs as shards (Sale.Shard): each process takes
// every n-th buyer of the one arrival schedule, the shards start together at a moment read
// from Redis, and [Merge] joins their records into the sale's, judged on the union.
//
// A design need not be registered to be run: build a [lockimpl.Impl] or [queueimpl.Impl]
// around your own Locker, Purchaser or Queue and pass it to Run, on a [Redis] of your own
// ([Single] wraps one client). What it documents it earns (Impl.Documented) judges its
// sales: a record says whether each earned one of those classes.
//
// Importing scenarios compiles about 210 packages, not the 150 once hoped for: go-redis
// alone brings 189, most of them the standard library's networking and crypto, which no
// program that talks to Redis avoids. What comes on top (the designs with redsync and
// redislock, the faults, the oracles with porcupine, hdrhistogram) is about 20; the
// container engine's client, the report's plotting and asynq stay out.
// deps_test.go holds both counts under a budget.
package scenarios
