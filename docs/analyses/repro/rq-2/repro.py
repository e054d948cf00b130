#!/usr/bin/env python3
"""Does RQ lose jobs when its Redis master is SIGKILLed and Sentinel promotes the replica
while SimpleWorkers are busy?  redis-py + rq only (written against python3-rq 1.13.0,
redis-py 4.3.4, redis-server 7.0.15).

  python3 repro.py [-n 200] [-k 16] [--job-ms 2] [--kill-at 0.3]

Starts its own master, one replica and three sentinels (redis-server processes on free
loopback ports, temp dir, no persistence), as Sentinel's docs set one up
(down-after-milliseconds 1000). Everyone reaches the master through redis-py's
Sentinel.master_for, as RQ's connections docs show. It enqueues N jobs, waits until the
replica has every one of them (WAIT 1), runs K SimpleWorkers (a subprocess each, restarted
whenever it exits, as a supervisor would), SIGKILLs the master once kill-at*N jobs ran,
waits until the sentinels have promoted the replica and the queue is empty and nothing
runs any more, and says where each job is. Exit 0: nothing missing; 1: some job missing;
2: the setup itself failed.
"""
import argparse, logging, os, shutil, signal, socket, subprocess, sys, tempfile, time

import redis
from redis.sentinel import Sentinel
from rq import Queue, SimpleWorker, get_current_job
from rq.job import Job
from rq.registry import FailedJobRegistry, FinishedJobRegistry, StartedJobRegistry

MODULE = os.path.splitext(os.path.basename(__file__))[0]  # where workers find work()


def work(done_path, job_ms):
    """The job: ~job_ms of work, then '<job id> <pid>' appended to a local file (not to
    Redis, which may be down just then)."""
    time.sleep(job_ms / 1000.0)
    with open(done_path, "a") as f:
        f.write("%s %d\n" % (get_current_job().id, os.getpid()))


class LoggingQueue(Queue):
    """RQ's Queue but for one log line: when dequeue_any fails after its BLPOP took a job
    id, RQ 1.13 attaches the id to the exception (queue.py 1234-1239) and the worker
    drops it (worker.py 882-888). This names the job so dropped; nothing else changes."""

    @classmethod
    def dequeue_any(cls, *args, **kwargs):
        try:
            return super().dequeue_any(*args, **kwargs)
        except Exception as e:
            if getattr(e, "job_id", None):
                logging.getLogger("rq.worker").error("popped %s, then dequeue_any raised %r", e.job_id, e)
            raise


MASTER = "stockbench"  # the name the sentinels know the master by
TIMEOUTS = dict(socket_timeout=2, socket_connect_timeout=1)


def master_for(sentinel_ports):
    """The master as RQ's connections docs reach it through Sentinel."""
    s = Sentinel([("127.0.0.1", p) for p in sentinel_ports], sentinel_kwargs=TIMEOUTS, **TIMEOUTS)
    return s, s.master_for(MASTER, **TIMEOUTS)


def worker_main(sentinel_ports):
    """One worker process: RQ's own loop, as `rq worker -w rq.worker.SimpleWorker` runs it,
    with stockbench's adapter's timeouts (socket 2 s). redis-py's MasterNotFoundError while
    no master is known ends the process; the supervisor starts another."""
    _, conn = master_for(sentinel_ports)
    w = SimpleWorker(["default"], connection=conn, queue_class=LoggingQueue, default_worker_ttl=16)
    w.work(logging_level="INFO", log_format="%(asctime)s.%(msecs)03d pid %(process)d %(message)s")


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
    """How often each job's function ran to its end, by job id."""
    counts = {}
    if os.path.exists(done_path):
        for job_id in (line.split()[0] for line in open(done_path) if line.strip()):
            counts[job_id] = counts.get(job_id, 0) + 1
    return counts


def stop(proc, grace=3.0):
    if proc is not None and proc.poll() is None:
        proc.terminate()  # to an RQ worker: its warm shutdown
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def on_term(signum, frame):
    raise KeyboardInterrupt  # SIGTERM cleans up as Ctrl-C does


def report(conn, queue, accepted, runs, tmp, k):
    """Where each accepted job is; returns the missing ones."""
    queued = {x.decode() for x in conn.lrange(queue.key, 0, -1)}
    regs = {name: {x.decode() for x in conn.zrange(cls(queue=queue).key, 0, -1)}  # no cleanup() call
            for name, cls in (("started", StartedJobRegistry), ("failed", FailedJobRegistry),
                              ("finished", FinishedJobRegistry))}
    missing = [j for j in accepted if j not in runs and j not in queued and not any(j in r for r in regs.values())]
    print("accepted %d | ran %d | still queued %d | registries: started %d, failed %d, finished %d | missing %d"
          % (len(accepted), len(runs), len(queued), len(regs["started"]), len(regs["failed"]),
             len(regs["finished"]), len(missing)))
    twice = sorted(j for j, c in runs.items() if c > 1)
    if twice:
        print("ran more than once (a pop the replica never had?): " + " ".join(twice))
    for name in ("started", "failed"):
        never = sorted(regs[name] - set(runs))
        if never:
            print("in the %s registry, never ran: %s" % (name, " ".join(never)))
    logs = {"worker-%d.log" % s: open(os.path.join(tmp, "worker-%d.log" % s)).read().splitlines()
            for s in range(k) if os.path.exists(os.path.join(tmp, "worker-%d.log" % s))}
    for job_id in missing:
        key = Job.key_for(job_id)
        status = conn.hget(key, "status")
        print("MISSING %s: job hash %s%s" % (job_id, "exists" if conn.exists(key) else "GONE",
                                              ", status " + status.decode() if status else ""))
        for name, lines in logs.items():  # what the worker that took it logged, and the 2 lines after
            hits = [i for i, line in enumerate(lines) if job_id in line]
            if hits:
                shown = set(hits[:2]) | set(range(hits[-1] + 1, min(hits[-1] + 3, len(lines))))
                for i in sorted(shown):
                    print("    %s: %s" % (name, lines[i][:160]))
    return missing


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=200, help="jobs to enqueue")
    ap.add_argument("-k", type=int, default=16, help="worker processes")
    ap.add_argument("--job-ms", type=float, default=2, help="how long each job works")
    ap.add_argument("--kill-at", type=float, default=0.3, help="kill the master once this share of the jobs ran")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (logs)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    tmp = tempfile.mkdtemp(prefix="rq-sentinel-repro-")
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
                    [sys.executable, os.path.abspath(__file__), "--worker"] + [str(p) for p in sports],
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        master = start_server(tmp, "master", mport)
        servers += [master, start_server(tmp, "replica", rport, "--replicaof", "127.0.0.1", str(mport))]
        servers += [start_sentinel(tmp, "sentinel-%d" % i, p, mport) for i, p in enumerate(sports)]
        sentinel, conn = master_for(sports)
        direct = redis.Redis(host="127.0.0.1", port=mport, **TIMEOUTS)
        online = lambda: direct.info("replication").get("slave0", {}).get("state") == "online"
        if not until(lambda: len(sentinel.discover_slaves(MASTER)) == 1 and online(), 20):
            print("the sentinels never saw the replica; see the logs")
            return 2
        queue = Queue("default", connection=conn)
        accepted = []
        for i in range(args.n):
            job_id = "j%0*d" % (len(str(args.n)), i)
            queue.enqueue_call(func=MODULE + ".work", args=(done_path, args.job_ms), job_id=job_id)
            accepted.append(job_id)  # enqueue returned: the master acknowledged its MULTI/EXEC
        if not until(lambda: direct.execute_command("WAIT", 1, 1000) == 1, 10):
            print("the replica never acknowledged the enqueues")
            return 2

        killed, deadline = False, time.monotonic() + args.timeout
        last, last_change = -1, time.monotonic()
        while time.monotonic() < deadline:
            supervise()
            count = len(ran(done_path))
            if not killed and count >= args.kill_at * args.n:
                began = time.monotonic()
                master.kill()  # SIGKILL, with the workers mid-flight; it is never started again
                master.wait()
                killed = True
                # 90 s: a sentinel whose timer ran late (a loaded machine) enters TILT mode
                # and does nothing for 30 s, and a failed election is retried 6 s later.
                if not until(lambda: sentinel.discover_master(MASTER)[1] == rport, 90):
                    print("the sentinels never promoted the replica in 90 s")
                    for i in range(len(sports)):
                        for line in open(os.path.join(tmp, "sentinel-%d.log" % i)):
                            if "tilt" in line or "failover" in line:
                                print("sentinel-%d.log: %s" % (i, line.rstrip()))
                    return 2
                print("SIGKILLed the master after %d jobs ran; the sentinels promoted the replica %.1f s later"
                      % (count, time.monotonic() - began))
            if count != last:
                last, last_change = count, time.monotonic()
            if killed and time.monotonic() - last_change > 3:  # quiet past RQ's reconnect sleeps
                try:
                    if conn.llen(queue.key) == 0:
                        break
                except redis.RedisError:
                    pass
            time.sleep(0.1 if killed else 0.01)
        else:
            print("timed out after %.0f s" % args.timeout)
        for p in workers.values():
            stop(p)
        if not until(lambda: conn.ping(), 10):
            print("the new master is not answering: the outcome cannot be read")
            return 2
        missing = report(conn, queue, accepted, ran(done_path), tmp, args.k)
        print("worker processes that exited (and were restarted): %d" % exits)
        return 1 if missing else 0
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
    sys.exit(worker_main([int(p) for p in sys.argv[2:]]) if sys.argv[1:2] == ["--worker"] else main())
