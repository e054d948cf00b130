#!/usr/bin/env node
'use strict';
// The lock most Node services hand-roll on node-redis, behind the adapter protocol
// (adapters/PROTOCOL.md): SET key token NX PX ttl to take it, and a Lua compare-and-delete
// to give it back, so that a holder whose lease ran out deletes nobody else's. It is the
// token design's algorithm, and is held to what token documents. It does not answer
// the protocol's "held" question: node-redis is a client, not a lock library, so there is
// no library of its own to ask whether the lock is still held; its holders write as the
// token design's do (late, after their lease ran out under a fault).
const crypto = require('crypto');
const { serve, timed } = require('./protocol');

const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

const LATE_WRITE = ['OVERSOLD', 'LOST'];
// What the lock earns in stockbench's sales, by fault: what token documents. Safe while
// its holders live inside the TTL; a late write whenever the key goes from under a live
// holder, who then writes.
// A deploy's SIGTERM stops Node at once (no handler), holding the lock: a dead holder.
const DOCUMENTED = { none: ['SAFE'], 'crash-acquire': ['SAFE'], 'crash-holder': ['SAFE'], 'term-holder': ['SAFE'], 'net-latency': ['SAFE'] };
for (const fault of ['slow-work', 'cpu-starve', 'client-pause', 'redis-pause', 'redis-restart', 'rolling-restart', 'server-errors', 'failover', 'clock-jump', 'net-timeout', 'evict',
  'app-pause', 'app-blackhole']) {
  DOCUMENTED[fault] = LATE_WRITE;
}
// Eviction takes the key from a holder inside its lease: the second holder's write may
// land first, both inside their leases and the stock intact.
DOCUMENTED.evict = [...LATE_WRITE, 'LOCK-BROKEN'];

const leases = new Map();
let serial = 0;

serve(['lock', 'ms'], DOCUMENTED, async (req, redis) => {
  switch (req.op) {
    case 'try': {
      const token = crypto.randomBytes(16).toString('hex');
      if ((await timed(redis.set(req.key, token, { NX: true, PX: req.ttl_ms }))) !== 'OK') {
        return { granted: false };
      }
      const lease = 'l' + ++serial;
      leases.set(lease, { key: req.key, token });
      return { granted: true, lease };
    }
    case 'release': {
      const held = leases.get(req.lease);
      leases.delete(req.lease);
      if (!held) return { released: false };
      const n = await timed(redis.eval(RELEASE, { keys: [held.key], arguments: [held.token] }));
      return { released: n === 1 };
    }
  }
  return { error: 'unknown op ' + req.op };
});
