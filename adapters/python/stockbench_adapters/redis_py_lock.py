"""redis-py's own redis.lock.Lock behind the adapter protocol (adapters/PROTOCOL.md).

A real library's lock, as a Python service would hold it: SET key token NX PX timeout,
and a release that deletes the key only while it still holds the token (a Lua script).
Right before its write a holder asks the library whether it still holds the lock (held),
as its docs offer: owned(), "Returns True if this key is locked by this lock, otherwise
False" (redis/lock.py, redis-py 4.3.4), a GET against its token.
Each try is one attempt (acquire(blocking=False)), so that the harness's retry loop paces
every design alike: with redis-py's defaults, blocking=True and blocking_timeout=None, a
buyer would wait for the lock for ever, polling every 0.1 s. thread_local=True (the
default) keeps the token in a thread-local; one process serves one request at a time
here, so it changes nothing, as it changes nothing in a worker process of a WSGI server.
"""
import sys

from redis.exceptions import LockError, RedisError

from .protocol import another, hello, ready, requests, say

# What the lock earns in stockbench's sales, by fault, its holders asking owned() before
# each write. Safe while its holders live inside the TTL. Where the key goes from under
# a live holder (a pause past the TTL, of the holder or of the server; the server's
# restart, failover, clock jump or eviction; a network that carries nothing past the
# TTL), the next holder gets in while the first still holds in its own view. Asked
# then, the first one's owned() says no, and it withdraws without writing: OVERLAP,
# nothing lost or oversold; LOCK-BROKEN where the key went inside the first one's lease
# after its owned() had said yes, the write already on its way.
# (Without the question, the token design's late write: OVERSOLD or LOST.)
OUTLIVED = ["OVERLAP"]
KEY_LOST = ["OVERLAP", "LOCK-BROKEN"]
DOCUMENTED = {fault: OUTLIVED for fault in ("slow-work", "cpu-starve", "client-pause", "redis-pause", "server-errors", "net-timeout",
                                           "app-pause", "app-blackhole")}
DOCUMENTED.update({fault: KEY_LOST for fault in ("redis-restart", "rolling-restart", "failover", "clock-jump", "evict")})
# A deploy's SIGTERM stops the process at once (Python's default), holding the lock: as
# a crashed holder, nothing written, the lock expiring after its TTL.
DOCUMENTED.update({fault: ["SAFE"] for fault in ("none", "crash-acquire", "crash-holder", "term-holder", "net-latency")})


def main():
    """Serves sale after sale (protocol 3): each from its hello to its bye."""
    while True:
        first, client = hello()
        if client is None:
            return 0 if another() else 1
        try:
            serve(client)
        finally:
            client.close()
        if not another():
            return 0


def serve(client):
    """One sale: its requests until bye or stdin's end."""
    ready(["lock", "ms", "held", "sentinel"], DOCUMENTED, again=True)  # ms: redis-py sends its timeout as PX milliseconds
    leases, serial = {}, 0
    for req in requests():
        rid, op = req.get("id", 0), req.get("op")
        try:
            if op == "try":
                lock = client.lock(req["key"], timeout=req["ttl_ms"] / 1000.0)
                if not lock.acquire(blocking=False):
                    say({"id": rid, "granted": False})
                    continue
                serial += 1
                leases["l%d" % serial] = lock
                say({"id": rid, "granted": True, "lease": "l%d" % serial})
            elif op == "held":
                lock = leases.get(req["lease"])
                say({"id": rid, "held": lock is not None and lock.owned()})
            elif op == "release":
                lock = leases.pop(req["lease"], None)
                try:
                    lock.release()
                    say({"id": rid, "released": True})
                except (LockError, AttributeError):  # not held any more, or no such lease
                    say({"id": rid, "released": False})
            else:
                say({"id": rid, "error": "unknown op %s" % op})
        except RedisError as e:
            say({"id": rid, "error": str(e)})
