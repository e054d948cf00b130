package designfile

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/queueimpl"
)

// Value names what fills one of a script's KEYS or ARGV.
type Value string

// The values, each described once in values.
const (
	LockKey      Value = "lock"
	CounterKey   Value = "counter"
	QueueKey     Value = "queue"
	Processing   Value = "processing"
	Taken        Value = "taken"
	Token        Value = "token"
	TTLms        Value = "ttl_ms"
	TTLs         Value = "ttl_s"
	NowMs        Value = "now_ms"
	Entry        Value = "entry"
	OrderID      Value = "order"
	Seq          Value = "seq"
	Worker       Value = "worker"
	VisibilityMs Value = "visibility_ms"
)

// values says what each value is, for the README and for errors.
var values = map[Value]string{
	LockKey:      "the lock's key (lock scripts); the queue's own lock key, free for a design's use (queue scripts)",
	CounterKey:   "a second key beside the lock's, e.g. for a fencing counter",
	QueueKey:     "the queue's key",
	Processing:   "a key for the tasks taken and not yet acknowledged",
	Taken:        "a key for when each task was taken",
	Token:        "a value unique to this grant, kept by the lease for its release and renewals",
	TTLms:        "the lock's TTL in milliseconds",
	TTLs:         "the lock's TTL in whole seconds, rounded up",
	NowMs:        "the client's clock, Unix milliseconds",
	Entry:        `the order as one string, "seq:id": what dequeue must return`,
	OrderID:      "the order's id",
	Seq:          "the order's place in line",
	Worker:       "the worker's name",
	VisibilityMs: "the visibility timeout in milliseconds",
}

// role is one script a design may have: what fills its KEYS and ARGV, and whether the
// design needs it.
type role struct {
	name     string
	required bool
	keys     []Value
	args     []Value
}

var (
	lockKeys  = []Value{LockKey, CounterKey}
	queueKeys = []Value{QueueKey, Processing, Taken, LockKey}
)

// The scripts of each kind of design, in the order their errors are reported.
var (
	lockRoles = []role{
		{"acquire", true, lockKeys, []Value{Token, TTLms, TTLs, NowMs}},
		{"release", true, lockKeys, []Value{Token, NowMs}},
		{"renew", false, lockKeys, []Value{Token, TTLms, TTLs, NowMs}},
		{"held", false, lockKeys, []Value{Token, NowMs}},
	}
	queueRoles = []role{
		{"enqueue", true, queueKeys, []Value{Entry, OrderID, Seq, NowMs}},
		{"dequeue", true, queueKeys, []Value{Worker, NowMs, VisibilityMs}},
		{"ack", false, queueKeys, []Value{Entry, OrderID, Seq, Worker, NowMs}},
		{"reap", false, queueKeys, []Value{NowMs, VisibilityMs}},
		{"len", true, queueKeys, nil},
	}
)

// Script is one Lua script of a design, with what fills its KEYS and ARGV.
type Script struct {
	// Role is the script's part: acquire, release, renew, held; enqueue, dequeue, ack, reap, len.
	Role string
	// Origin names where the source came from, for errors: the design file's path and
	// the field, or the script's own file.
	Origin     string
	Keys, Args []Value
	script     *redis.Script
}

// call is what one call of a script is about; each value reads its part.
type call struct {
	lockKey, token string
	ttl            time.Duration
	keys           queueimpl.Keys
	order          queueimpl.Order
	worker         string
	visibility     time.Duration
}

func (c *call) value(v Value) any {
	switch v {
	case LockKey:
		if c.lockKey != "" {
			return c.lockKey
		}
		return c.keys.Lock
	case CounterKey:
		return c.lockKey + ":counter"
	case QueueKey:
		return c.keys.Queue
	case Processing:
		return c.keys.Processing
	case Taken:
		return c.keys.Taken
	case Token:
		return c.token
	case TTLms:
		return c.ttl.Milliseconds()
	case TTLs:
		return int64((c.ttl + time.Second - 1) / time.Second)
	case NowMs:
		return time.Now().UnixMilli()
	case Entry:
		return c.order.Entry()
	case OrderID:
		return c.order.ID
	case Seq:
		return c.order.Seq
	case Worker:
		return c.worker
	case VisibilityMs:
		return c.visibility.Milliseconds()
	}
	panic("designfile: unchecked value " + string(v)) // newScript checks every name
}

// run calls the script with KEYS and ARGV filled from c.
func (s *Script) run(ctx context.Context, rc redis.Scripter, c *call) (any, error) {
	keys := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		keys[i] = c.value(k).(string)
	}
	args := make([]any, len(s.Args))
	for i, a := range s.Args {
		args[i] = c.value(a)
	}
	v, err := s.script.Run(ctx, rc, keys, args...).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s script (%s): %w", s.Role, s.Origin, err)
	}
	return v, nil
}

// load puts the script in the server's script cache, where Redis compiles it: a script
// it rejects is an error naming where the script came from.
func (s *Script) load(ctx context.Context, c redis.Scripter) error {
	if err := s.script.Load(ctx, c).Err(); err != nil {
		return fmt.Errorf("%s script (%s): %w", s.Role, s.Origin, err)
	}
	return nil
}

// truthy reads a script's reply as yes or no: nil (Lua's false), 0, "" and "0" are no;
// anything else (1, "OK", a value) is yes.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case int64:
		return v != 0
	case string:
		return v != "" && v != "0"
	}
	return true
}

// checkValues says what is wrong with the names given for a script's keys or args.
func checkValues(field string, names []string, allowed []Value) ([]Value, error) {
	out := make([]Value, len(names))
	for i, n := range names {
		v := Value(n)
		if !slices.Contains(allowed, v) {
			return nil, fmt.Errorf("%s[%d]: %q is not one of %s", field, i, n, list(allowed))
		}
		out[i] = v
	}
	return out, nil
}

func list(vs []Value) string {
	if len(vs) == 0 {
		return "nothing (this script takes none)"
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Quote(string(v))
	}
	return strings.Join(s, ", ")
}
