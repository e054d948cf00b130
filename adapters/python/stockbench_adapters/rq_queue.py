"""RQ (python3-rq), a queue library many Python teams run, behind the adapter protocol
(adapters/PROTOCOL.md), with its own enqueue and its own worker's bookkeeping: each
process is an RQ Worker that takes a job (LPOP), marks it started (the started-job
registry, a heartbeat), and on ack records its success, as Worker.perform_job does; the
harness's worker fulfils the order in between, as the job's function would.

A process killed mid-job leaves its job in the started-job registry, whose score is the
job's timeout plus 60 s: only then does StartedJobRegistry.cleanup move it to the
failed-job registry (or, with a Retry, back to the queue). Within a sale it is lost. A
paused process's job waits with it, and is done when it resumes.

SIGTERM is RQ's warm shutdown (Worker.request_stop): an idle worker stops at once; a
busy one takes no further job, finishes the one it holds, and stops. A job longer than
the deploy's grace is then killed with its process by the SIGKILL that follows: lost,
as above.

With --worker-loop, each process runs RQ's own loop instead: a SimpleWorker's work(),
in its main thread, whose job function hands the order to the harness's worker and
returns on ack; RQ itself dequeues, marks the job started and records its success. The
adapter then names the loop's steps: asked in hello (steps), it reports "dequeued" as
the loop takes a job off Redis, before the job is marked as started, and stays there
step_hold_ms: a deploy's SIGTERM that lands there (step-term) is RQ's warm shutdown of
an idle worker, StopRequested, and the job it took is in no queue and no registry, lost
for good (rq/rq#2236).

Every key RQ writes is put under the sale's hash tag (its namespaces patched to
keys.queue + ":rq:"), and deleted by the process when its sale ends. A process serves
sale after sale (protocol 3), with a worker of its own for each; with --worker-loop,
bye stops RQ's loop as its warm shutdown does.
"""
import os
import signal
import sys
import threading
import time
import uuid

import redis
import rq.job
import rq.queue
import rq.registry
import rq.results
import rq.worker
import rq.worker_registration
from rq import Queue, SimpleWorker, Worker, get_current_job
from rq.utils import utcnow

from .protocol import WRITING, Handoff, another, clean, hello, ready, requests, say

# What RQ earns in stockbench's sales, with either fulfil: at most once. A worker killed
# mid-job loses its job within the sale (above); one killed after the job's work, before
# its success was recorded, or paused, loses nothing; a restart of the server empties it.
# A deploy's SIGTERM during a job longer than its grace (worker-term) loses the job too.
# This process drives RQ's steps itself, and names none (step-term: NOT-EXERCISED).
DOCUMENTED = {"none": ["SAFE"], "worker-crash": ["LOST"], "reclaimers": ["LOST"], "worker-crash-late": ["SAFE"],
              "worker-pause": ["SAFE"],
              "worker-term": ["LOST"], "step-term": ["NOT-EXERCISED"], "redis-restart": ["LOST"],
              "evict-lease": ["NOT-EXERCISED"], "evict-job": ["NOT-EXERCISED"], "consumer-churn": ["NOT-EXERCISED"]}


def namespace(prefix):
    """Moves every RQ key under prefix, so that the sale's keys share its hash tag."""
    rq.queue.Queue.redis_queue_namespace_prefix = prefix + "queue:"
    rq.queue.Queue.redis_queues_keys = prefix + "queues"
    rq.queue.Queue.registry_cleaning_key = prefix + "clean_registries:%s"
    rq.job.Job.redis_job_namespace_prefix = prefix + "job:"
    rq.worker.Worker.redis_worker_namespace_prefix = prefix + "worker:"
    rq.worker.Worker.redis_workers_keys = prefix + "workers"
    rq.worker_registration.REDIS_WORKER_KEYS = prefix + "workers"
    rq.worker_registration.WORKERS_BY_QUEUE_KEY = prefix + "workers:%s"
    rq.results.get_key = lambda job_id: prefix + "results:" + job_id
    rq.results.Result.get_key = classmethod(lambda cls, job_id: prefix + "results:" + job_id)
    for name in ("StartedJobRegistry", "FinishedJobRegistry", "FailedJobRegistry", "DeferredJobRegistry",
                 "ScheduledJobRegistry", "CanceledJobRegistry"):
        cls = getattr(rq.registry, name, None)
        if cls is not None:
            # str.format templates: the hash tag's braces are doubled
            cls.key_template = prefix.replace("{", "{{").replace("}", "}}") + cls.key_template.split(":", 1)[1]


# RQ's own loop earns the same, and a SIGTERM between its dequeue and its started mark
# loses the job it took: rq/rq#2236.
LOOP_DOCUMENTED = dict(DOCUMENTED, **{"step-term": ["LOST"]})


def main():
    """Serves sale after sale (protocol 3), each from its hello to its bye, with RQ's own
    loop (--worker-loop) or the adapter's driving of RQ's steps."""
    while True:
        first, client = hello()
        if client is None:
            return 0 if another() else 1
        try:
            prefix = first["keys"]["queue"] + ":rq:"
            namespace(prefix)
            queue = Queue("sale", connection=client)
            if "--worker-loop" in sys.argv[1:]:
                main_loop(first, client, prefix, queue)
            else:
                sale(client, prefix, queue)
        finally:
            client.close()
        if not another():
            return 0


def sale(client, prefix, queue):
    """One sale of the adapter's own driving of RQ's worker: a worker of its own, its
    keys deleted at the end."""
    worker = Worker([queue], connection=client, name=uuid.uuid4().hex)
    held = {}
    stopping = []

    def request_stop(signum, frame):
        # Worker.request_stop: a second signal is a cold shutdown, the first a warm one.
        if stopping or not held:
            os._exit(0)
        stopping.append(signum)

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    ready(["queue", "ack", "sentinel"], DOCUMENTED, again=True)

    def enqueue(req):
        queue.enqueue_call(func="stockbench.fulfil", args=(req["order"],), job_id="o" + req["order"],
                           meta={"seq": req["seq"]})
        return {"ok": True}

    def dequeue(req):
        if stopping:
            return {"empty": True}  # a worker shutting down takes no job
        deadline = time.monotonic() + req["wait_ms"] / 1000.0
        taken = Queue.dequeue_any([queue], None, connection=client)
        while taken is None and time.monotonic() < deadline:
            time.sleep(0.005)
            taken = Queue.dequeue_any([queue], None, connection=client)
        if taken is None:
            return {"empty": True}
        job, _ = taken
        worker.prepare_job_execution(job)  # started-job registry, heartbeat
        held[job.id] = job
        return {"order": job.args[0], "seq": job.meta["seq"], "task": job.id}

    def ack(req):
        job = held.pop(req["task"])
        job.ended_at = utcnow()  # as perform_job notes when the job's function returns
        job._result = True
        worker.handle_job_success(job, queue, queue.started_job_registry)
        return {"ok": True}

    def stop_when_drained():
        if stopping and not held:  # a warm shutdown's last job acknowledged
            worker.register_death()
            os._exit(0)

    serve(client, prefix, queue, {"enqueue": enqueue, "dequeue": dequeue, "ack": ack}, stop_when_drained)


def serve(client, prefix, queue, ops, after=None, bye=None):
    """Answers each request with what ops[op] makes of it (len, and an unknown op or a
    Redis error, answered here), calling after once each reply is written; when stdin
    closes, or at bye, the sale is over: it leaves nothing of RQ's behind. bye, when
    given, ends the sale first, and says whether the process is kept (protocol.requests)."""
    def cleaned():
        clean(client, prefix)
        return True

    for req in requests(on_bye=bye or cleaned):
        rid, op = req.get("id", 0), req.get("op")
        try:
            if op in ops:
                reply = ops[op](req)
            elif op == "len":
                reply = {"len": queue.count + queue.started_job_registry.count}
            else:
                reply = {"error": "unknown op %s" % op}
        except redis.RedisError as e:
            reply = {"error": str(e)}
        say(dict(reply, id=rid))
        if after is not None:
            after()
    if not another():
        clean(client, prefix)


# The jobs RQ's loop (the main thread) runs, handed to the harness by the protocol (a
# thread of its own): the sale's.
handoff = Handoff()


def handoff_job(order, seq):
    """The job's function, run by RQ's worker in the main thread: the order goes to the
    harness's worker, and the job returns once that worker acknowledged it."""
    handoff.run(order, seq, get_current_job().id)
    return True


class SteppingWorker(SimpleWorker):
    """RQ's SimpleWorker, reporting the steps of its loop that hello asks for."""
    steps = ()
    hold = 0.0
    stopping = False  # a signal asked it to stop
    sale_over = False  # bye asked it to stop: the process serves the next sale

    def request_stop(self, signum, frame):
        self.stopping = True
        super().request_stop(signum, frame)

    def dequeue_job_and_maintain_ttl(self, *args, **kwargs):
        result = super().dequeue_job_and_maintain_ttl(*args, **kwargs)
        if result is not None and "dequeued" in self.steps:
            job, _ = result
            say({"step": "dequeued", "order": job.args[0]})
            time.sleep(self.hold)  # where a signal sent now lands: taken, not yet started
        return result


def main_loop(first, client, prefix, queue):
    """RQ's own loop serves the sale (--worker-loop), hello already read, until a signal
    stops it (the process then goes, as `rq worker` does) or bye does (the process is
    kept for the next sale)."""
    global handoff
    handoff = Handoff()
    SteppingWorker.steps = tuple(first.get("steps") or ())
    SteppingWorker.hold = first.get("step_hold_ms", 0) / 1000.0
    current = []  # the loop's worker
    stopped = threading.Event()  # the sale's loop has returned
    kept = threading.Event()  # bye ended the sale: the process serves the next

    def enqueue(req):
        queue.enqueue_call(func=handoff_job, args=(req["order"], req["seq"]), job_id="o" + req["order"])
        return {"ok": True}

    def ack(req):
        handoff.ack(req["task"])  # the job returns; RQ records its success
        return {"ok": True}

    def dequeue(req):
        return handoff.dequeue(req["wait_ms"])

    def bye():
        # Kept only when no job of this sale is still in the loop (one the harness never
        # acknowledged blocks the main thread) and no signal stopped it: else the harness
        # stops the process.
        if handoff.busy() or stopped.is_set() or not current:
            return False
        current[0].sale_over = True
        os.kill(os.getpid(), signal.SIGUSR1)  # to the main thread, where the loop waits
        if not stopped.wait(3):
            return False
        clean(client, prefix)
        kept.set()
        return True

    def protocol():
        serve(client, prefix, queue, {"enqueue": enqueue, "dequeue": dequeue, "ack": ack}, bye=bye)
        if kept.is_set():
            return  # the main thread reads the next hello
        with WRITING:
            os._exit(0)

    ready(["queue", "ack", "sentinel"], LOOP_DOCUMENTED, steps=["dequeued"], again=True)
    # RQ's warm shutdown (Worker._shutdown, what its SIGTERM handler does but for the
    # cold shutdown a second signal would be): an idle loop stops at once, interrupted
    # in its BLPOP, a busy one after its job.
    signal.signal(signal.SIGUSR1, lambda *_: current[0]._shutdown() if current and current[0].sale_over else None)
    served = threading.Thread(target=protocol, daemon=True)
    served.start()
    # RQ's loop, its signal handlers with it, in the main thread, as `rq worker` runs it:
    # SIGTERM is its warm shutdown. RQ quits its loop on an error it does not handle (a
    # connection the server closed, as a restart does): a supervisor then starts the
    # worker again, and so does this. A worker TTL of 16 s makes its BLPOP wait 1 s
    # (RQ's is the TTL less 15 s), inside the client's 2 s reply timeout.
    while True:
        worker = SteppingWorker([queue], connection=client, name=uuid.uuid4().hex, default_worker_ttl=16)
        current[:] = [worker]
        worker.work(burst=False, logging_level="WARNING")
        if worker.stopping or worker.sale_over:
            break
        time.sleep(0.1)
    stopped.set()
    if worker.sale_over:
        served.join()  # bye answered: the next line is the next hello
        return
    with WRITING:
        os._exit(0)  # the loop stopped (a deploy's signal): the process goes, as `rq worker` does
