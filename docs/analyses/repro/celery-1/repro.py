#!/usr/bin/env python3
"""Does Celery lose acks_late tasks when its Redis master is SIGKILLed and Sentinel
promotes the replica while solo workers are busy, or only hold them back until kombu's
next restore pass?  Celery + kombu only (written against python3-celery 5.2.6,
python3-kombu 5.2.4, redis-py 4.3.4, redis-server 7.0.15).

  python3 repro.py [-n 300] [-k 16] [--job-ms 2] [--kill-at 0.3] [--visibility 0.3] [--wait 110]

Starts its own master, one replica and three sentinels (redis-server processes on free
loopback ports, temp dir, no persistence), as Sentinel's docs set one up
(down-after-milliseconds 1000). The broker URL is kombu's sentinel:// transport with
master_name, as its docstring configures it. It sends N tasks declared acks_late and
moves Celery's queue aside (RENAME), runs K workers of the solo pool (a subprocess each,
restarted whenever it exits, as a supervisor would) and waits until every one of them is
consuming; then it moves the queue back, so that the kill finds all K busy, not the first
few up on a loaded machine. It waits until the replica has every task (WAIT 1), SIGKILLs
the master once kill-at*N tasks ran, and waits for the promotion. Then it says where each task that
has not run is: in the queue, in kombu's unacked hash (which only a restore pass hands
back: a worker's start, and every 100 s after), or nowhere. Once the sale's scale is
over (nothing ran for 5 s) it reads them a first time; then it keeps the workers running
until --wait seconds after the kill, past a 100 s restore pass, and reads again.

Exit 0: every task ran by the end (what was missing at first came back late); 1: some
task never ran and is in no queue or hash (lost); 2: the setup itself failed.
"""
import argparse, os, shutil, signal, socket, subprocess, sys, tempfile, time

try:
    import celery  # noqa: F401  (each worker imports it again)
    import redis
    from redis.sentinel import Sentinel
except ImportError as e:  # not a break: the setup cannot run (python3-celery, python3-redis)
    print("cannot run: %s" % e)
    sys.exit(2)

MASTER = "stockbench"  # the name the sentinels know the master by
TIMEOUTS = dict(socket_timeout=2, socket_connect_timeout=1)
QUEUE, UNACKED, INDEX = "celery", "unacked", "unacked_index"  # kombu's keys, no prefix
ASIDE = "repro:held"  # Celery's queue, moved aside while the workers start


def make_app(sentinel_ports, visibility, done_path, job_ms):
    from celery import Celery
    app = Celery("repro", broker=";".join("sentinel://127.0.0.1:%d/0" % p for p in sentinel_ports))
    app.conf.update(
        task_acks_late=True, task_ignore_result=True, worker_enable_remote_control=False,
        worker_send_task_events=False, worker_hijack_root_logger=False, broker_connection_retry_on_startup=True,
        broker_transport_options={"master_name": MASTER, "visibility_timeout": visibility,
                                  "sentinel_kwargs": {"socket_timeout": 1}, **TIMEOUTS})

    @app.task(name="repro.work", acks_late=True, bind=True)
    def work(task, tid):
        """The task: ~job_ms of work, then '<task id> <pid> <time>' appended to a local
        file (not to Redis, which may be down just then)."""
        time.sleep(job_ms / 1000.0)
        with open(done_path, "a") as f:
            f.write("%s %d %.3f\n" % (tid, os.getpid(), time.time()))
    return app, work


def worker_main(argv):
    """One worker process, as the stockbench adapter runs it: a Celery worker of the solo
    pool, concurrency 1, Celery's default prefetch (4)."""
    from celery.signals import task_received, worker_ready
    ports, visibility, done_path, job_ms = [int(p) for p in argv[0].split(",")], float(argv[1]), argv[2], float(argv[3])
    app, _ = make_app(ports, visibility, done_path, job_ms)

    def received(request=None, **_):  # the worker has the message: kombu delivered it
        with open(done_path + ".received", "a") as f:
            f.write("%s %d %.3f\n" % (request.id, os.getpid(), time.time()))
    task_received.connect(received, weak=False)

    def ready(**_):  # the consumer is up: this worker takes the next message sent
        with open(done_path + ".ready", "a") as f:
            f.write("%d\n" % os.getpid())
    worker_ready.connect(ready, weak=False)
    app.Worker(pool="solo", concurrency=1, without_heartbeat=True, without_gossip=True, without_mingle=True,
               loglevel="INFO").start()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(tmp, name, port, *extra):
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    return subprocess.Popen(
        [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind", "127.0.0.1",
         "--dir", d, "--logfile", os.path.join(tmp, name + ".log"), "--daemonize", "no",
         "--appendonly", "no", "--save", ""] + list(extra),
        start_new_session=True, stdout=subprocess.DEVNULL)


def start_sentinel(tmp, name, port, master_port):
    conf = os.path.join(tmp, name + ".conf")
    with open(conf, "w") as f:  # a sentinel rewrites its file as it learns
        f.write("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n" % (port, tmp, os.path.join(tmp, name + ".log")))
        f.write("sentinel monitor %s 127.0.0.1 %d 2\n" % (MASTER, master_port))
        f.write("sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 3000\n" % (MASTER, MASTER))
        f.write("sentinel parallel-syncs %s 1\n" % MASTER)
    return subprocess.Popen([shutil.which("redis-server") or "redis-server", conf, "--sentinel"],
                            start_new_session=True, stdout=subprocess.DEVNULL)


def until(cond, seconds, step=0.05):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if cond():
                return True
        except redis.RedisError:
            pass
        time.sleep(step)
    return False


def ran(done_path):
    """When each task first ran to its end, and how often, by task id."""
    first, counts = {}, {}
    if os.path.exists(done_path):
        for line in open(done_path):
            parts = line.split()
            if len(parts) == 3:
                first.setdefault(parts[0], float(parts[2]))
                counts[parts[0]] = counts.get(parts[0], 0) + 1
    return first, counts


def stop(proc, grace=3.0):
    if proc is not None and proc.poll() is None:
        proc.terminate()  # to a Celery worker: its warm shutdown
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def on_term(signum, frame):
    raise KeyboardInterrupt  # SIGTERM cleans up as Ctrl-C does


def where(conn, tasks):
    """Where each of tasks is on the master now: queued, unacked, or nowhere."""
    import json
    queued, unacked = set(), set()
    for raw in conn.lrange(QUEUE, 0, -1):
        queued.add(json.loads(raw)["headers"]["id"])
    for raw in conn.hvals(UNACKED):
        message = json.loads(raw)[0]  # [the message, its exchange, its routing key]
        unacked.add((json.loads(message) if isinstance(message, str) else message)["headers"]["id"])
    return {t: "queued" if t in queued else "unacked" if t in unacked else "nowhere" for t in tasks}


def tally(label, conn, ids, runs):
    missing = [t for t in ids if t not in runs]
    at = where(conn, missing)
    kinds = {k: sum(1 for v in at.values() if v == k) for k in ("queued", "unacked", "nowhere")}
    print("%s: ran %d of %d | not run %d: in the queue %d, in kombu's unacked hash %d, nowhere %d"
          % (label, len(ids) - len(missing), len(ids), len(missing), kinds["queued"], kinds["unacked"], kinds["nowhere"]))
    return at


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=300, help="tasks to send")
    ap.add_argument("-k", type=int, default=16, help="worker processes")
    ap.add_argument("--job-ms", type=float, default=2, help="how long each task works")
    ap.add_argument("--kill-at", type=float, default=0.3, help="kill the master once this share of the tasks ran")
    ap.add_argument("--visibility", type=float, default=0.3, help="kombu's visibility_timeout, seconds")
    ap.add_argument("--wait", type=float, default=110, help="seconds from the kill to the last reading")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (logs)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    tmp = tempfile.mkdtemp(prefix="celery-sentinel-repro-")
    done_path = os.path.join(tmp, "done.txt")
    mport, rport = free_port(), free_port()
    sports = [free_port() for _ in range(3)]
    servers, workers, dead_since, exits = [], {}, {}, 0

    def supervise():  # every slot has a worker process, restarted 0.2 s after it exits
        nonlocal exits
        for slot in range(args.k):
            p = workers.get(slot)
            if p is not None and p.poll() is None:
                continue
            if p is not None and slot not in dead_since:
                exits, dead_since[slot] = exits + 1, time.monotonic()
            if slot in dead_since and time.monotonic() - dead_since[slot] < 0.2:
                continue
            dead_since.pop(slot, None)
            with open(os.path.join(tmp, "worker-%d.log" % slot), "a") as log:
                workers[slot] = subprocess.Popen(
                    [sys.executable, os.path.abspath(__file__), "--worker", ",".join(map(str, sports)),
                     str(args.visibility), done_path, str(args.job_ms)],
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        master = start_server(tmp, "master", mport)
        servers += [master, start_server(tmp, "replica", rport, "--replicaof", "127.0.0.1", str(mport))]
        servers += [start_sentinel(tmp, "sentinel-%d" % i, p, mport) for i, p in enumerate(sports)]
        sentinel = Sentinel([("127.0.0.1", p) for p in sports], sentinel_kwargs=TIMEOUTS, **TIMEOUTS)
        conn = sentinel.master_for(MASTER, **TIMEOUTS)
        direct = redis.Redis(host="127.0.0.1", port=mport, **TIMEOUTS)
        online = lambda: direct.info("replication").get("slave0", {}).get("state") == "online"
        if not until(lambda: len(sentinel.discover_slaves(MASTER)) == 1 and online(), 20):
            print("the sentinels never saw the replica; see the logs")
            return 2
        _, work = make_app(sports, args.visibility, done_path, args.job_ms)
        ids = ["t%0*d" % (len(str(args.n)), i) for i in range(args.n)]
        for t in ids:
            work.apply_async(args=(t,), task_id=t)  # returned: the master has the message
        conn.rename(QUEUE, ASIDE)  # the messages as Celery wrote them, out of the workers' reach
        up = lambda: len(set(open(done_path + ".ready").read().split())) if os.path.exists(done_path + ".ready") else 0
        started = time.monotonic()
        while up() < args.k and time.monotonic() - started < 150:
            supervise()
            time.sleep(0.1)
        if up() < args.k:
            print("only %d of %d workers came up in 150 s; see worker-*.log" % (up(), args.k))
            return 2
        conn.rename(ASIDE, QUEUE)  # every worker blocked on the queue is served at once
        if not until(lambda: direct.execute_command("WAIT", 1, 1000) == 1, 10):
            print("the replica never acknowledged the sends")
            return 2
        print("%d workers up in %.1f s; %d tasks sent, all on the replica before the kill"
              % (args.k, time.monotonic() - started, args.n))

        killed, killed_at, deadline = False, 0.0, time.monotonic() + 60
        last, last_change = -1, time.monotonic()
        while time.monotonic() < deadline:
            supervise()
            count = len(ran(done_path)[0])
            if not killed and count >= args.kill_at * args.n:
                killed_at = time.monotonic()
                master.kill()  # SIGKILL, with the workers mid-flight; it is never started again
                master.wait()
                killed, wall = True, time.time()
                if not until(lambda: sentinel.discover_master(MASTER)[1] == rport, 90):
                    print("the sentinels never promoted the replica in 90 s")
                    return 2
                print("SIGKILLed the master after %d tasks ran; the sentinels promoted the replica %.1f s later"
                      % (count, time.monotonic() - killed_at))
            if count != last:
                last, last_change = count, time.monotonic()
            if killed and time.monotonic() - last_change > 5:  # the sale's scale is over
                break
            time.sleep(0.1 if killed else 0.01)
        if not killed:
            print("the tasks never reached the kill: %d ran" % last)
            return 2
        first, _ = ran(done_path)
        early = tally("%.0f s after the kill" % (time.monotonic() - killed_at), conn, ids, first)
        while time.monotonic() - killed_at < args.wait:
            supervise()
            time.sleep(0.5)
        first, counts = ran(done_path)
        late = tally("%.0f s after the kill" % (time.monotonic() - killed_at), conn, ids, first)
        back = sorted(t for t in early if t in first)
        if back:
            print("ran only later, %.0f to %.0f s after the kill: %s (they were %s)" % (
                min(first[t] for t in back) - wall, max(first[t] for t in back) - wall, " ".join(back),
                ", ".join(sorted({early[t] for t in back}))))
        twice = sorted(t for t, c in counts.items() if c > 1)
        if twice:
            print("ran more than once: " + " ".join(twice))
        lost = sorted(t for t, w in late.items() if w == "nowhere")
        got = {}
        if os.path.exists(done_path + ".received"):
            for line in open(done_path + ".received"):
                t, pid, at = line.split()
                got.setdefault(t, (int(pid), float(at)))
        for t in lost:
            if t in got:
                print("LOST %s: received by worker pid %d %.3f s %s the kill, never run, in no queue or hash"
                      % (t, got[t][0], abs(got[t][1] - wall), "before" if got[t][1] < wall else "after"))
            else:
                print("LOST %s: never received by a worker, in no queue or hash: taken off the queue and gone" % t)
        print("worker processes that exited (and were restarted): %d" % exits)
        return 1 if lost else 0
    except KeyboardInterrupt:
        print("interrupted")
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C cannot cut the clean-up short
        for p in list(workers.values()) + servers:
            stop(p)
        if args.keep:
            print("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[2:]) if sys.argv[1:2] == ["--worker"] else main())
