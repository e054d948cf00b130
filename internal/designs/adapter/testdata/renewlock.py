"""A token lock that supports renew, behind the adapter protocol, for the tests: SET NX PX
token; renew is a compare-and-PEXPIRE; release a compare-and-delete. The harness renews
it every TTL/3 while it is held, as a watchdog would. With --fence it renews nothing and
hands out a fencing token with each grant instead (INCR of the key beside the lock's),
which the harness's stock store checks. With --graceful it handles SIGTERM as a service
that drains does: it finishes what it holds, releases, and only then exits. With --held it
supports held, answered as redis-py's owned() is (GET, against its token); with
--held-never it answers held with false whatever Redis holds."""
import json
import signal
import sys
import uuid

import redis

RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


def say(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()


hello = json.loads(sys.stdin.readline())
host, port = hello["redis"]["addr"].rsplit(":", 1)
r = redis.Redis(host=host, port=int(port), socket_timeout=2)
renew, release = r.register_script(RENEW), r.register_script(RELEASE)
fence = "--fence" in sys.argv
supports = ["lock"] if fence else ["lock", "renew"]
held_never = "--held-never" in sys.argv
if "--held" in sys.argv or held_never:
    supports.append("held")
say({"ok": True, "supports": supports})
leases = {}
stopping = False
if "--graceful" in sys.argv:
    def drain(*_):
        global stopping
        stopping = True
        if not leases:
            sys.exit(0)
    signal.signal(signal.SIGTERM, drain)
for line in sys.stdin:
    req = json.loads(line)
    rid, op = req["id"], req["op"]
    if op == "try":
        token = uuid.uuid4().hex
        if r.set(req["key"], token, nx=True, px=req["ttl_ms"]):
            leases[token] = req["key"]
            reply = {"id": rid, "granted": True, "lease": token}
            if fence:
                reply["token"] = r.incr(req["key"] + ":counter")
            say(reply)
        else:
            say({"id": rid, "granted": False})
    elif op == "renew":
        say({"id": rid, "renewed": bool(renew(keys=[leases[req["lease"]]], args=[req["lease"], req["ttl_ms"]]))})
    elif op == "held":
        key = leases.get(req["lease"])
        say({"id": rid, "held": not held_never and key is not None and r.get(key) == req["lease"].encode()})
    elif op == "release":
        say({"id": rid, "released": bool(release(keys=[leases.pop(req["lease"])], args=[req["lease"]]))})
        if stopping and not leases:
            sys.exit(0)
