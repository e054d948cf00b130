// Package adapter runs lock and queue designs written in any language as pools of
// processes that speak line-delimited JSON on their stdin and stdout
// (adapters/PROTOCOL.md), and makes the sale's faults happen to those processes: a pause
// is SIGSTOP, a crash SIGKILL.
package adapter

// Version is the newest protocol version this harness speaks; it speaks every one
// before it too. Hello's protocol field stays 1, which version 1 adapters check for;
// its versions field lists them all, and an adapter answers with the one it speaks.
const Version = 3

// versions are the versions hello offers.
var versions = []int{1, 2, 3}

// What an adapter may say it supports, in hello's reply.
const (
	SupportsLock     = "lock"     // try and release
	SupportsRenew    = "renew"    // renew, sent every TTL/3 while a lease is held
	SupportsHeld     = "held"     // held: the library's own "do I still hold it?", asked right before the write
	SupportsHalf     = "half"     // try with half: only the first command of the acquire
	SupportsNodes    = "nodes"    // a lock over several servers (Redlock's), hello's redis.nodes
	SupportsSentinel = "sentinel" // the library's own client follows hello's redis.sentinel, not the front
	SupportsMs       = "ms"       // ttl_ms kept to the millisecond (PX, PEXPIRE): sub-second TTLs are shorter leases
	SupportsBuy      = "buy"      // a whole purchase, instead of lock
	SupportsQueue    = "queue"    // enqueue, dequeue and len
	SupportsAck      = "ack"      // ack: a task stays with its process until acknowledged
	SupportsWake     = "wake"     // wake: a stalled process answers as it runs again, before its task's work
)

// request is every request, each op using its own fields.
type request struct {
	ID       int64  `json:"id,omitempty"`
	Op       string `json:"op"`
	Protocol int    `json:"protocol,omitempty"`
	Versions []int  `json:"versions,omitempty"`
	Redis    *Redis `json:"redis,omitempty"`
	Keys     *Keys  `json:"keys,omitempty"`
	Key      string `json:"key,omitempty"`
	TTLms    int64  `json:"ttl_ms,omitempty"`
	Half     bool   `json:"half,omitempty"`
	Lease    string `json:"lease,omitempty"`
	Buyer    string `json:"buyer,omitempty"`
	// Queues.
	Order        string `json:"order,omitempty"`
	Seq          *int64 `json:"seq,omitempty"` // a pointer: the first order's seq is 0
	Worker       string `json:"worker,omitempty"`
	WaitMs       int64  `json:"wait_ms,omitempty"`
	Task         string `json:"task,omitempty"`
	VisibilityMs int64  `json:"visibility_ms,omitempty"`
	// TermGraceMs is the grace a deploy's SIGTERM gives (term-holder, worker-term), by
	// which a process that drains may size its own shutdown timeout.
	TermGraceMs int64 `json:"term_grace_ms,omitempty"`
	// Steps, in a queue's hello, are the steps of its library's own worker loop that a
	// fault strikes at (step-term): the adapter reports each as its worker reaches it,
	// and stays there StepHoldMs.
	Steps      []string `json:"steps,omitempty"`
	StepHoldMs int64    `json:"step_hold_ms,omitempty"`
}

// reply is every reply.
type reply struct {
	ID       int64    `json:"id"`
	OK       bool     `json:"ok"`
	Error    string   `json:"error"`
	Supports []string `json:"supports"`
	// Hello's, in version 2: the version the adapter speaks, and the verdict classes it
	// documents by fault ("none" for no fault), for a queue with either fulfil unless
	// DocumentedIdempotent says otherwise for an idempotent one.
	Protocol             int                 `json:"protocol"`
	Documented           map[string][]string `json:"documented"`
	DocumentedIdempotent map[string][]string `json:"documented_idempotent"`
	Granted              bool                `json:"granted"`
	Lease                string              `json:"lease"`
	Token                *int64              `json:"token"`
	Released             bool                `json:"released"`
	Renewed              bool                `json:"renewed"`
	Held                 bool                `json:"held"`
	Sold                 bool                `json:"sold"`
	Left                 int64               `json:"left"`
	Reason               string              `json:"reason"`
	Order                string              `json:"order"`
	Seq                  int64               `json:"seq"`
	Task                 string              `json:"task"`
	Empty                bool                `json:"empty"`
	Len                  *int64              `json:"len"`
	// Step, on a line without an id, is a report: the process's worker has reached that
	// step (hello's steps), with the order it holds in Order.
	Step string `json:"step"`
	// Steps, in hello's answer, are the steps the adapter can report.
	Steps []string `json:"steps"`
	// LeaseKeys and JobKeys, in a queue's hello answer, name its library's keys (under
	// the sale's keys' hash tag) that record who holds a task until when, and the
	// tasks' own records: the keys evict-lease and evict-job evict.
	LeaseKeys []string `json:"lease_keys"`
	JobKeys   []string `json:"job_keys"`
	// RedeliveryMs, in a queue's hello answer, is the longest its library takes to hand
	// a dead worker's task on by its own clock, where that is longer than the visibility
	// timeout (asynq's recoverer): a sale waits that long for a task before it calls it
	// lost.
	RedeliveryMs int64 `json:"redelivery_ms"`
}

// Redis is where the adapter's processes connect. Addr is always set: a loopback
// address whose connections go the way the harness's own go (see front), or under a
// cluster its first seed. Sentinel or Cluster is set too when the sale's Redis is a
// Sentinel group or a cluster, for an adapter whose client follows it itself; Nodes
// when the adapter's lock takes several servers.
type Redis struct {
	Addr     string    `json:"addr"`
	Username string    `json:"username,omitempty"`
	Password string    `json:"password,omitempty"`
	DB       int       `json:"db,omitempty"`
	Sentinel *Sentinel `json:"sentinel,omitempty"`
	Cluster  []string  `json:"cluster,omitempty"`
	// Nodes, for a lock over several servers (an adapter that supports nodes, run with
	// --adapter-nodes), is every lock server's address, Addr first, each a front.
	Nodes []string `json:"nodes,omitempty"`
}

// Sentinel is a Sentinel group: its sentinels' addresses and the master's name.
type Sentinel struct {
	Addrs  []string `json:"addrs"`
	Master string   `json:"master"`
}

// Keys are the sale's keys, for the adapter's own use: a lock's, or a queue's.
type Keys struct {
	Lock       string `json:"lock,omitempty"`
	Stock      string `json:"stock,omitempty"`
	Orders     string `json:"orders,omitempty"`
	Queue      string `json:"queue,omitempty"`
	Processing string `json:"processing,omitempty"`
	Taken      string `json:"taken,omitempty"`
	QLock      string `json:"qlock,omitempty"`
}
