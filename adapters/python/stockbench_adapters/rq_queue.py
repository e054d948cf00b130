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

Every key RQ writes is put under the sale's hash tag (its namespaces patched to
keys.queue + ":rq:"), and deleted by the process when its stdin closes.
"""
import os
import signal
import sys
import time
import uuid

import redis
import rq.job
import rq.queue
import rq.registry
import rq.results
import rq.worker
import rq.worker_registration
from rq import Queue, Worker
from rq.utils import utcnow

from .protocol import hello, ready, requests, say

# What RQ earns in stockbench's sales, with either fulfil: at most once. A worker killed
# mid-job loses its job within the sale (above); one killed after the job's work, before
# its success was recorded, or paused, loses nothing; a restart of the server empties it.
# A deploy's SIGTERM during a job longer than its grace (worker-term) loses the job too.
DOCUMENTED = {"none": ["SAFE"], "worker-crash": ["LOST"], "worker-crash-late": ["SAFE"], "worker-pause": ["SAFE"],
              "worker-term": ["LOST"], "redis-restart": ["LOST"]}


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


def main():
    first, client = hello()
    if client is None:
        return 1
    prefix = first["keys"]["queue"] + ":rq:"
    namespace(prefix)
    queue = Queue("sale", connection=client)
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
    ready(["queue", "ack"], DOCUMENTED)

    for req in requests():
        rid, op = req.get("id", 0), req.get("op")
        try:
            if op == "enqueue":
                queue.enqueue_call(func="stockbench.fulfil", args=(req["order"],), job_id="o" + req["order"],
                                   meta={"seq": req["seq"]})
                say({"id": rid, "ok": True})
            elif op == "dequeue" and stopping:
                say({"id": rid, "empty": True})  # a worker shutting down takes no job
            elif op == "dequeue":
                deadline = time.monotonic() + req["wait_ms"] / 1000.0
                taken = Queue.dequeue_any([queue], None, connection=client)
                while taken is None and time.monotonic() < deadline:
                    time.sleep(0.005)
                    taken = Queue.dequeue_any([queue], None, connection=client)
                if taken is None:
                    say({"id": rid, "empty": True})
                    continue
                job, _ = taken
                worker.prepare_job_execution(job)  # started-job registry, heartbeat
                held[job.id] = job
                say({"id": rid, "order": job.args[0], "seq": job.meta["seq"], "task": job.id})
            elif op == "ack":
                job = held.pop(req["task"])
                job.ended_at = utcnow()  # as perform_job notes when the job's function returns
                job._result = True
                worker.handle_job_success(job, queue, queue.started_job_registry)
                say({"id": rid, "ok": True})
                if stopping and not held:
                    worker.register_death()
                    os._exit(0)
            elif op == "len":
                say({"id": rid, "len": queue.count + queue.started_job_registry.count})
            else:
                say({"id": rid, "error": "unknown op %s" % op})
        except redis.RedisError as e:
            say({"id": rid, "error": str(e)})
    # stdin closed: the sale is over; leave nothing of RQ's behind.
    # A page of keys per round trip: the harness gives a closing process a second, and
    # hundreds of single deletes under load can outlast it.
    keys = list(client.scan_iter(match=prefix.replace("{", "[{]").replace("}", "[}]") + "*", count=1000))
    for i in range(0, len(keys), 1000):
        client.delete(*keys[i:i + 1000])
    return 0
