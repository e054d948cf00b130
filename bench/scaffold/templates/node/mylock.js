#!/usr/bin/env node
'use strict';
// mylock behind stockbench's adapter protocol: one process of the pool the harness starts
// (stockbench.json's lock_execs), answering its requests on stdin and stdout.
//
// The lock: SET key token NX PX ttl to take it, a compare-and-delete to give it back, so
// that a holder whose lease ran out deletes nobody else's; a holder asks stillHeld right
// before it writes. Put your own lock's calls in tryLock, release and stillHeld. With --broken it is the example's broken lock instead: no expiry,
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

// stillHeld says whether the lock is still this holder's, asked right before the holder
// writes, as your library's docs tell its users to ask: on false the holder does not write.
async function stillHeld(redis, key, token) {
  return (await timed(redis.get(key))) === token;
}

// release gives the lock up; false when it was no longer this holder's.
async function release(redis, key, token) {
  return (await timed(redis.eval(RELEASE, { keys: [key], arguments: [token] }))) === 1;
}

const leases = new Map();
let serial = 0;

serve(['lock', 'held'], DOCUMENTED, async (req, redis) => {
  switch (req.op) {
    case 'try': {
      const token = await tryLock(redis, req.key, req.ttl_ms);
      if (token === null) return { granted: false };
      const lease = 'l' + ++serial;
      leases.set(lease, { key: req.key, token });
      return { granted: true, lease };
    }
    case 'held': {
      const held = leases.get(req.lease);
      return { held: held !== undefined && (await stillHeld(redis, held.key, held.token)) };
    }
    case 'release': {
      const held = leases.get(req.lease);
      leases.delete(req.lease);
      return { released: held !== undefined && (await release(redis, held.key, held.token)) };
    }
  }
  return { error: 'unknown op ' + req.op };
});
