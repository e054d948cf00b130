"""What the Python adapters share: the protocol's lines, and the hello with its
connection (adapters/PROTOCOL.md, version 3 for an adapter that serves sale after sale,
else 2)."""
import json
import queue
import sys
import threading

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.sentinel import Sentinel

# Inside the protocol's 5 s: a server that a fault killed is an error reply, not a hang.
TIMEOUTS = dict(socket_timeout=2, socket_connect_timeout=1)


# WRITING keeps the lines of threads that write (a library's worker reporting a step,
# the protocol's answers) whole; hold it to exit without cutting one short.
WRITING = threading.Lock()


def say(message):
    line = json.dumps(message) + "\n"
    with WRITING:
        sys.stdout.write(line)
        sys.stdout.flush()


def host_port(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


def connect(where):
    """A client of the server hello names, as a Python service would make it: through the
    sentinels under a Sentinel group (redis-py follows the master they name), as a
    cluster client under a cluster, else of addr."""
    auth = dict(username=where.get("username") or None, password=where.get("password") or None)
    if where.get("sentinel"):
        s = where["sentinel"]
        sentinel = Sentinel([host_port(a) for a in s["addrs"]], sentinel_kwargs=TIMEOUTS, **TIMEOUTS)
        return sentinel.master_for(s["master"], db=where.get("db", 0), **auth, **TIMEOUTS)
    if where.get("cluster"):
        nodes = [ClusterNode(*host_port(a)) for a in where["cluster"]]
        # Each of redis-py's tries after a connection error may wait a connect and a reply:
        # two tries, not its default three, keep a request inside the protocol's 5 s.
        return RedisCluster(startup_nodes=nodes, cluster_error_retry_attempts=2, **auth,
                            socket_timeout=1, socket_connect_timeout=1)
    host, port = host_port(where["addr"])
    return redis.Redis(host=host, port=port, db=where.get("db", 0), **auth, **TIMEOUTS)


# SALE is what the hello of the sale being served asked: whether it may be followed by
# another (protocol 3), and whether bye ended it.
SALE = {"versions": [], "again": False, "bye": False}


def hello():
    """Reads the sale's first line and connects as it says; returns the hello and a
    client, or (None, None) after refusing a hello it cannot take, or once stdin ended
    (no next sale). The caller answers with what it supports (ready)."""
    line = sys.stdin.readline()
    if not line and SALE["bye"]:
        return None, None  # the harness ended the process rather than send a next sale
    first = json.loads(line or "null")
    SALE.update(versions=first.get("versions", []) if isinstance(first, dict) else [], again=False, bye=False)
    if not isinstance(first, dict) or first.get("op") != "hello" or 2 not in first.get("versions", []):
        say({"ok": False, "error": "want hello, protocol 2"})
        return None, None
    try:
        client = connect(first["redis"])
        client.ping()
    except redis.RedisError as e:
        say({"ok": False, "error": "connect: %s" % e})
        return None, None
    return first, client


def ready(supports, documented, idempotent=None, steps=None, lease_keys=None, job_keys=None, again=False,
          redelivery_ms=None):
    """Answers hello: what the adapter supports, and the verdict classes it documents by
    fault, which the harness judges its sales by (a queue's, for an idempotent fulfil
    too when those differ), the steps of its library's worker loop it can report, and
    its library's keys that record who holds a task until when and the tasks
    themselves (which evict-lease and evict-job evict). again: the adapter serves
    another sale after bye (protocol 3), when the harness speaks it. redelivery_ms: the
    longest its library takes to hand a dead worker's task on, by a clock of its own,
    when that is later than the visibility timeout (the sale waits that long)."""
    SALE["again"] = again and 3 in SALE["versions"]
    said = {"ok": True, "protocol": 3 if SALE["again"] else 2, "supports": supports, "documented": documented}
    if idempotent is not None:
        said["documented_idempotent"] = idempotent
    if steps is not None:
        said["steps"] = steps
    if lease_keys is not None:
        said["lease_keys"] = lease_keys
    if job_keys is not None:
        said["job_keys"] = job_keys
    if redelivery_ms is not None:
        said["redelivery_ms"] = redelivery_ms
    say(said)


def requests(on_bye=None):
    """Yields each request until stdin closes or, under protocol 3, until bye, which it
    answers: the caller then undoes its set-up and reads the next hello. on_bye, when
    given, ends the sale before the answer (a library's worker stopped, its keys
    deleted); once it returns False, bye goes unanswered and the harness stops the
    process rather than keep it."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        req = json.loads(line)
        if SALE["again"] and req.get("op") == "bye":
            SALE["bye"] = True
            if on_bye is None or on_bye():
                say({"id": req.get("id", 0), "ok": True})
            return
        yield req


def another():
    """Whether bye ended the sale just served, so that the next hello follows."""
    return SALE["bye"]


class Handoff:
    """The tasks a library's own worker runs in this process (its main thread), each
    handed to the harness's worker on a dequeue and held until its ack."""

    def __init__(self):
        self.offered = queue.Queue()  # (order, seq, task id, done)
        self.held = {}
        self.running = 0  # tasks in the library's worker, offered or held

    def run(self, order, seq, task):
        """The task's body, in the library's worker: returns once the harness's worker
        has fulfilled the order and acknowledged it."""
        done = threading.Event()
        self.running += 1
        try:
            self.offered.put((order, seq, task, done))
            done.wait()
        finally:
            self.running -= 1

    def busy(self):
        """Whether a task is still in the library's worker: its process cannot serve
        another sale, since that worker would never return to its loop."""
        return self.running > 0

    def dequeue(self, wait_ms):
        """The reply to a dequeue: the next task, or empty after wait_ms."""
        try:
            order, seq, task, done = self.offered.get(timeout=wait_ms / 1000.0)
        except queue.Empty:
            return {"empty": True}
        self.held[task] = done
        return {"order": order, "seq": seq, "task": task}

    def ack(self, task):
        self.held.pop(task).set()


def clean(client, prefix):
    """Deletes every key under prefix, as a process does when the sale is over: a page of
    keys per round trip, since the harness gives a closing process a second, and
    hundreds of single deletes under load can outlast it."""
    keys = list(client.scan_iter(match=prefix.replace("{", "[{]").replace("}", "[}]") + "*", count=1000))
    for i in range(0, len(keys), 1000):
        client.delete(*keys[i:i + 1000])
