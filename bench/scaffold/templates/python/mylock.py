#!/usr/bin/env python3
"""mylock behind stockbench's adapter protocol: one process of the pool the harness
starts (stockbench.json's lock_execs), answering its requests on stdin and stdout.

The lock: SET key token NX PX ttl to take it, a compare-and-delete to give it back, so
that a holder whose lease ran out deletes nobody else's. Put your own lock's calls in
try_lock and release. With --broken it is the example's broken lock instead: no expiry,
so a holder that dies keeps it for ever (stockbench check stockbench-broken.json shows
the sale stuck).
"""
import json
import secrets
import sys

try:
    from redis.exceptions import RedisError

    from stockbench_protocol import hello, ready, requests, say
except ImportError as err:  # redis-py is not installed for this python3: say so at hello
    sys.stdin.readline()
    print(json.dumps({"ok": False, "error": "%s for %s: pip install redis (or apt-get install python3-redis)" % (err, sys.executable)}), flush=True)
    sys.exit(2)

BROKEN = "--broken" in sys.argv
RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"

# What you claim the lock earns, by fault (stockbench list names the faults); the run
# file's thresholds are what check holds it to.
DOCUMENTED = {"none": ["SAFE"], "crash-holder": ["SAFE"]}


def try_lock(client, key, ttl_ms):
    """One attempt: the token when granted, else None."""
    token = secrets.token_hex(16)
    if BROKEN:
        return token if client.set(key, token, nx=True) else None
    return token if client.set(key, token, nx=True, px=ttl_ms) else None


def release(client, key, token):
    """Gives the lock up; False when it was no longer this holder's."""
    return client.eval(RELEASE, 1, key, token) == 1


def still_held(client, key, token):
    """Whether the lock is still this holder's, asked right before the holder writes, as
    your library's docs tell its users to ask (redis-py's owned(), say): on False the
    holder does not write."""
    return client.get(key) == token.encode()


def main():
    first, client = hello()
    if client is None:
        return 1
    ready(["lock", "held"], DOCUMENTED)
    leases, serial = {}, 0
    for req in requests():
        rid, op = req.get("id", 0), req.get("op")
        try:
            if op == "try":
                token = try_lock(client, req["key"], req["ttl_ms"])
                if token is None:
                    say({"id": rid, "granted": False})
                    continue
                serial += 1
                leases["l%d" % serial] = (req["key"], token)
                say({"id": rid, "granted": True, "lease": "l%d" % serial})
            elif op == "held":
                held = leases.get(req["lease"])
                say({"id": rid, "held": held is not None and still_held(client, *held)})
            elif op == "release":
                held = leases.pop(req["lease"], None)
                say({"id": rid, "released": held is not None and release(client, *held)})
            else:
                say({"id": rid, "error": "unknown op %s" % op})
        except RedisError as e:
            say({"id": rid, "error": str(e)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
