#!/usr/bin/env node
'use strict';
// mylock behind stockbench's adapter protocol: one process of the pool the harness starts
// (stockbench.json's lock_execs), answering its requests on stdin and stdout.
//
// The lock: SET key token NX PX ttl to take it, a compare-and-delete to give it back, so
// that a holder whose lease ran out deletes nobody else's. Put your own lock's calls in
// tryLock and release. With --broken it is the example's broken lock instead: no expiry,
// so a holder that dies keeps it for ever (stockbench check stockbench-broken.json shows
// the sale stuck).
const crypto = require('crypto');
const { serve, timed } = require('./protocol');

const BROKEN = process.argv.includes('--broken');
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

// What you claim the lock earns, by fault (stockbench list names the faults); the run
// file's thresholds are what check holds it to.
const DOCUMENTED = { none: ['SAFE'], 'crash-holder': ['SAFE'] };

// tryLock is one attempt: the token when granted, else null.
async function tryLock(redis, key, ttlMs) {
  const token = crypto.randomBytes(16).toString('hex');
  const options = BROKEN ? { NX: true } : { NX: true, PX: ttlMs };
  return (await timed(redis.set(key, token, options))) === 'OK' ? token : null;
}

// release gives the lock up; false when it was no longer this holder's.
async function release(redis, key, token) {
  return (await timed(redis.eval(RELEASE, { keys: [key], arguments: [token] }))) === 1;
}

const leases = new Map();
let serial = 0;

serve(['lock'], DOCUMENTED, async (req, redis) => {
  switch (req.op) {
    case 'try': {
      const token = await tryLock(redis, req.key, req.ttl_ms);
      if (token === null) return { granted: false };
      const lease = 'l' + ++serial;
      leases.set(lease, { key: req.key, token });
      return { granted: true, lease };
    }
    case 'release': {
      const held = leases.get(req.lease);
      leases.delete(req.lease);
      return { released: held !== undefined && (await release(redis, held.key, held.token)) };
    }
  }
  return { error: 'unknown op ' + req.op };
});
