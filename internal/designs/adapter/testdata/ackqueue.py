"""A queue with acknowledgement behind the adapter protocol, for the tests: LPUSH;
RPOPLPUSH to a processing list; ack LREMs it. A task stays with the process that handed
it out until its ack, so a worker's crash is the kill of that process.

It dies at once on SIGTERM, as a Python process does by default; with --graceful it
finishes the task it holds, answers its ack, and exits. With --redelivery-ms N its hello
says a dead worker's task comes back within N ms by its own clock; with --exit-at-ack K
it exits on its Kth ack without answering it, and with --exit-after-ack K right after
answering it, as a library's worker that kills itself (Laravel's --timeout) or stops
once its connection was lost. With --crash-at-ack K it exits 1 on its Kth ack, as a
worker dies of an uncaught error (RQ's, of a failover's MasterNotFoundError); with
--once only the first process of the sale to get there does, and the process that
starts next refuses hello once, as one that cannot connect before the failover ends.
With --hoard each process keeps the orders it is sent in a buffer of its own and hands
them out only when it is asked, as a library's worker holds a task it took (Celery's,
RQ's); with --slow-empty-ms N it answers a dequeue that finds nothing N ms late, as a
process does on a loaded machine. With --exit-on-wake it says wake, and exits 0 when
woken from a stall, as a worker whose own timeout fell due while it was stopped
(Laravel's --timeout alarm); without it, it answers a wake it was not promised."""
import json
import os
import signal
import sys
import time

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
def flag(name):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else 0


# With --once, the marks a crash leaves, under the sale's keys: that one crashed (no
# other will), and that its successor is to refuse hello.
mark = "/tmp/ackqueue-" + keys["queue"].strip("{}").replace(":", "-").replace("/", "-")
if "--once" in sys.argv and os.path.exists(mark + "-refuse"):
    os.remove(mark + "-refuse")
    say({"ok": False, "error": "connect: No master found for 'stockbench'"})
    sys.exit(1)
said = {"ok": True, "supports": ["queue", "ack"] + (["wake"] if "--exit-on-wake" in sys.argv else [])}
if flag("--redelivery-ms"):
    said["redelivery_ms"] = flag("--redelivery-ms")
say(said)
acks = 0
held = {}
hoard = []
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
        e = "%d:%s" % (req["seq"], req["order"])
        if "--hoard" in sys.argv:
            hoard.append(e)
            r.lpush(keys["processing"], e)
        else:
            r.lpush(keys["queue"], e)
        say({"id": rid, "ok": True})
    elif op == "dequeue":
        e = hoard.pop(0).encode() if hoard else r.rpoplpush(keys["queue"], keys["processing"])
        if e is None:
            time.sleep(flag("--slow-empty-ms") / 1000.0)
            say({"id": rid, "empty": True})
            continue
        seq, order = e.decode().split(":", 1)
        held["t" + order] = e
        say({"id": rid, "order": order, "seq": int(seq), "task": "t" + order})
    elif op == "ack":
        acks += 1
        if acks == flag("--exit-at-ack"):
            os._exit(0)
        crash = acks == flag("--crash-at-ack")
        if crash and "--once" in sys.argv:
            try:
                os.close(os.open(mark + "-crashed", os.O_CREAT | os.O_EXCL))
                open(mark + "-refuse", "w").close()
            except FileExistsError:
                crash = False
        if crash:
            sys.stderr.write("redis.sentinel.MasterNotFoundError: No master found for 'stockbench'\n")
            sys.stderr.flush()
            os._exit(1)
        r.lrem(keys["processing"], 1, held.pop(req["task"]))
        say({"id": rid, "ok": True})
        if acks == flag("--exit-after-ack"):
            os._exit(0)
        if stopping and not held:
            os._exit(0)
    elif op == "wake":
        if "--exit-on-wake" in sys.argv:
            os._exit(0)
        say({"id": rid, "ok": True})
    elif op == "len":
        say({"id": rid, "len": r.llen(keys["queue"]) + r.llen(keys["processing"])})
