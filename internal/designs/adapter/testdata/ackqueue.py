"""A queue with acknowledgement behind the adapter protocol, for the tests: LPUSH;
RPOPLPUSH to a processing list; ack LREMs it. A task stays with the process that handed
it out until its ack, so a worker's crash is the kill of that process.

It dies at once on SIGTERM, as a Python process does by default; with --graceful it
finishes the task it holds, answers its ack, and exits."""
import json
import os
import signal
import sys

import redis


def say(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()


sys.stderr.write("started\n")  # the test counts the processes started
sys.stderr.flush()
hello = json.loads(sys.stdin.readline())
host, port = hello["redis"]["addr"].rsplit(":", 1)
r = redis.Redis(host=host, port=int(port), socket_timeout=2)
keys = hello["keys"]
say({"ok": True, "supports": ["queue", "ack"]})
held = {}
stopping = []
if "--graceful" in sys.argv:
    def drain(signum, frame):
        if not held:
            os._exit(0)
        stopping.append(signum)
    signal.signal(signal.SIGTERM, drain)
for line in sys.stdin:
    req = json.loads(line)
    rid, op = req["id"], req["op"]
    if op == "enqueue":
        r.lpush(keys["queue"], "%d:%s" % (req["seq"], req["order"]))
        say({"id": rid, "ok": True})
    elif op == "dequeue":
        e = r.rpoplpush(keys["queue"], keys["processing"])
        if e is None:
            say({"id": rid, "empty": True})
            continue
        seq, order = e.decode().split(":", 1)
        held["t" + order] = e
        say({"id": rid, "order": order, "seq": int(seq), "task": "t" + order})
    elif op == "ack":
        r.lrem(keys["processing"], 1, held.pop(req["task"]))
        say({"id": rid, "ok": True})
        if stopping and not held:
            os._exit(0)
    elif op == "len":
        say({"id": rid, "len": r.llen(keys["queue"]) + r.llen(keys["processing"])})
