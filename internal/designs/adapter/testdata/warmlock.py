"""A token lock behind protocol 3, for the tests: SET NX PX token, release a
compare-and-delete, and after bye the next hello, in the same process, with the next
sale's server and keys. Each lease names the process (its pid) that granted it."""
import json
import os
import sys
import uuid

import redis

RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


def say(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()


def sale(hello):
    """Serves one sale; True once bye came, False once stdin ended."""
    host, port = hello["redis"]["addr"].rsplit(":", 1)
    r = redis.Redis(host=host, port=int(port), socket_timeout=2)
    release = r.register_script(RELEASE)
    version = 3 if 3 in hello.get("versions", []) else 2
    say({"ok": True, "protocol": version, "supports": ["lock", "ms"], "documented": {"none": ["SAFE"], "crash-holder": ["SAFE"]}})
    leases = {}
    try:
        for line in sys.stdin:
            req = json.loads(line)
            rid, op = req["id"], req["op"]
            if op == "bye" and version == 3:
                say({"id": rid, "ok": True})
                return True
            if op == "try":
                token = "%d-%s" % (os.getpid(), uuid.uuid4().hex)
                if r.set(req["key"], token, nx=True, px=req["ttl_ms"]):
                    leases[token] = req["key"]
                    say({"id": rid, "granted": True, "lease": token})
                else:
                    say({"id": rid, "granted": False})
            elif op == "release":
                say({"id": rid, "released": bool(release(keys=[leases.pop(req["lease"])], args=[req["lease"]]))})
        return False
    finally:
        r.close()


for line in sys.stdin:
    if not sale(json.loads(line)):
        break
