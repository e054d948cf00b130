#!/usr/bin/env python3
"""Does RQ lose jobs when Redis (appendonly yes, appendfsync everysec) is SIGKILLed and
restarted from its AOF while SimpleWorkers are busy?  redis-py + rq only (written against
python3-rq 1.13.0, redis-py 4.3.4, redis-server 7.0.15).

  python3 repro.py [-n 200] [-k 16] [--job-ms 2] [--kill-at 0.3] [--down-ms 25]

Starts its own redis-server (free loopback port, temp dir), enqueues N jobs, waits
--settle s so that every enqueue is surely in the AOF file, runs K SimpleWorkers (a
subprocess each, restarted whenever it exits, as a supervisor would), SIGKILLs
redis-server once kill-at*N jobs ran and restarts it from the same dir and port down-ms
later, waits until the queue is empty and nothing runs any more, and says where each job
is. Exit 0: nothing missing; 1: some job missing; 2: the setup itself failed.
"""
import argparse, logging, os, shutil, signal, socket, subprocess, sys, tempfile, time

import redis
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


def worker_main(port):
    """One worker process: RQ's own loop, as `rq worker -w rq.worker.SimpleWorker` runs it,
    with stockbench's adapter's timeouts (BLPOP 1 s, socket 2 s)."""
    conn = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=1)
    w = SimpleWorker(["default"], connection=conn, queue_class=LoggingQueue, default_worker_ttl=16)
    w.work(logging_level="INFO", log_format="%(asctime)s.%(msecs)03d pid %(process)d %(message)s")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(port, tmp):
    return subprocess.Popen(
        [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind", "127.0.0.1",
         "--dir", tmp, "--logfile", os.path.join(tmp, "redis.log"), "--daemonize", "no",
         "--appendonly", "yes", "--appendfsync", "everysec", "--save", ""],
        start_new_session=True, stdout=subprocess.DEVNULL)


def wait_ready(conn, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if conn.ping():
                return True
        except redis.RedisError:  # refused, or BusyLoadingError while the AOF loads
            time.sleep(0.01)
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=200, help="jobs to enqueue")
    ap.add_argument("-k", type=int, default=16, help="worker processes")
    ap.add_argument("--job-ms", type=float, default=2, help="how long each job works")
    ap.add_argument("--kill-at", type=float, default=0.3, help="kill once this share of the jobs ran")
    ap.add_argument("--down-ms", type=float, default=25, help="from the SIGKILL to the restart")
    ap.add_argument("--settle", type=float, default=3.5, help="seconds from the enqueues to the workers")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (worker logs, AOF)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    tmp = tempfile.mkdtemp(prefix="rq-aof-repro-")
    done_path, port = os.path.join(tmp, "done.txt"), free_port()
    conn = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=1)
    server, workers, dead_since, exits = None, {}, {}, 0

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
                workers[slot] = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(port)],
                                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        server = start_redis(port, tmp)
        if not wait_ready(conn, 10):
            print("redis-server did not start; see its log")
            return 2
        queue = Queue("default", connection=conn)
        accepted = []
        for i in range(args.n):
            job_id = "j%0*d" % (len(str(args.n)), i)
            queue.enqueue_call(func=MODULE + ".work", args=(done_path, args.job_ms), job_id=job_id)
            accepted.append(job_id)  # enqueue returned: Redis acknowledged its MULTI/EXEC
        time.sleep(args.settle)  # everysec postpones an AOF write by under 3 s at most

        killed, deadline = False, time.monotonic() + args.timeout
        last, last_change = -1, time.monotonic()
        while time.monotonic() < deadline:
            supervise()
            count = len(ran(done_path))
            if not killed and count >= args.kill_at * args.n:
                server.kill()  # SIGKILL, with the workers mid-flight
                server.wait()
                time.sleep(args.down_ms / 1000.0)
                server, killed = start_redis(port, tmp), True  # same dir and port: it loads its AOF
                print("SIGKILLed redis-server after %d jobs ran; restarted it %.0f ms later" % (count, args.down_ms))
            if count != last:
                last, last_change = count, time.monotonic()
            if killed and time.monotonic() - last_change > 3:  # quiet past RQ's 1 s reconnect sleep
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
        if not wait_ready(conn, 10):
            print("redis-server is not answering: the outcome cannot be read")
            return 2

        runs = ran(done_path)
        queued = {x.decode() for x in conn.lrange(queue.key, 0, -1)}
        regs = {name: {x.decode() for x in conn.zrange(cls(queue=queue).key, 0, -1)}  # no cleanup() call
                for name, cls in (("started", StartedJobRegistry), ("failed", FailedJobRegistry),
                                  ("finished", FinishedJobRegistry))}
        missing = [j for j in accepted if j not in runs and j not in queued and not any(j in r for r in regs.values())]
        print("accepted %d | ran %d | still queued %d | registries: started %d, failed %d, finished %d | missing %d"
              % (len(accepted), len(runs), len(queued), len(regs["started"]), len(regs["failed"]),
                 len(regs["finished"]), len(missing)))
        print("worker processes that exited (and were restarted): %d" % exits)
        twice = sorted(j for j, c in runs.items() if c > 1)
        if twice:
            print("ran more than once (a pop the AOF lost?): " + " ".join(twice))
        for name in ("started", "failed"):
            never = sorted(regs[name] - set(runs))
            if never:
                print("in the %s registry, never ran: %s" % (name, " ".join(never)))
        logs = {"worker-%d.log" % s: open(os.path.join(tmp, "worker-%d.log" % s)).read().splitlines()
                for s in range(args.k) if os.path.exists(os.path.join(tmp, "worker-%d.log" % s))}
        for job_id in missing:
            key = Job.key_for(job_id)
            status = conn.hget(key, "status")
            print("MISSING %s: job hash %s%s" % (job_id, "exists" if conn.exists(key) else "GONE (enqueue lost)",
                                                  ", status " + status.decode() if status else ""))
            for name, lines in logs.items():  # what the worker that took it logged, and the 2 lines after
                hits = [i for i, line in enumerate(lines) if job_id in line]
                if hits:
                    shown = set(hits[:2]) | set(range(hits[-1] + 1, min(hits[-1] + 3, len(lines))))
                    for i in sorted(shown):
                        print("    %s: %s" % (name, lines[i][:160]))
        for line in open(os.path.join(tmp, "redis.log")):
            if any(s in line for s in ("too long", "runcated", "short read", "incomplete")):
                print("redis.log: " + line.rstrip())
        return 1 if missing else 0
    except KeyboardInterrupt:
        print("interrupted")
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C cannot cut the clean-up short
        for p in workers.values():
            stop(p)
        stop(server)
        if args.keep:
            print("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(worker_main(int(sys.argv[2])) if sys.argv[1:2] == ["--worker"] else main())
