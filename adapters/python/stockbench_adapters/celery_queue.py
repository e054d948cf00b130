"""Celery (python3-celery) with its Redis transport (kombu), behind the adapter protocol
(adapters/PROTOCOL.md): each process is a real Celery worker, of the solo pool and
concurrency 1, whose task is declared acks_late, as teams that must not lose an order
declare it. Orders are sent with the task's own apply_async; the worker takes each one
as Celery takes it (the transport's BRPOP, the message kept in kombu's unacked hash until
the task returns) and runs the task, which hands the order to the harness's worker and
returns once the harness acknowledges it: only then does Celery ack the message.

What kombu promises: a message taken and not acknowledged within the transport's
visibility_timeout is delivered again (restore_visible, which a worker runs when it
starts and then every 10 s, acting on every 10th call). So a worker that dies holding a
task leaves it in the unacked hash until another worker restores it; and a task whose
ETA or countdown is further off than the visibility timeout (kombu#337, celery#2599) is
held unacknowledged by its worker until it is due, is restored meanwhile, and runs twice.

--countdown-every N --countdown F gives every Nth order a countdown of F times the
sale's visibility timeout (default: none), for that case.

Every key is put under the sale's hash tag (kombu's global_keyprefix), and deleted by
the process when its stdin closes.
"""
import argparse
import os
import sys
import threading

from celery import Celery
from celery.signals import worker_ready

from .protocol import Handoff, clean, hello, ready, requests, say

# What Celery earns in stockbench's sales, with either fulfil. Without a countdown: a
# worker killed mid-task leaves its message unacknowledged, restored only when a worker
# next restores (at its start, then every 100 s): lost within the sale, unless a fresh
# worker started past the visibility timeout restores it (then it is done, maybe twice);
# one killed after the work, before the ack, has the order done and the message restored
# likewise (done twice, or not); a paused worker's task waits for it and is done, unless
# restored meanwhile; a restart of the server empties the queue. SIGTERM is Celery's warm
# shutdown: the worker finishes its task, then closes, and kombu puts back what it had
# prefetched; a task longer than the deploy's grace is killed with it by the SIGKILL
# that follows, its message left unacknowledged as a crashed worker's (lost within the
# sale, or restored by a fresh worker's start, never done twice: it was never done).
# It names no steps of the worker's loop (step-term: NOT-EXERCISED). kombu's restore
# reads the unacked index and restores each message from the unacked hash: a worker
# killed after either was evicted (evict-lease, evict-job) leaves a message no restore
# finds, lost for good.
DOCUMENTED = {"none": ["SAFE"], "worker-crash": ["LOST", "SAFE", "DUPLICATED"],
              "reclaimers": ["LOST", "SAFE", "DUPLICATED"],
              "worker-crash-late": ["SAFE", "DUPLICATED"], "worker-pause": ["SAFE", "DUPLICATED"],
              "worker-term": ["LOST", "SAFE"], "step-term": ["NOT-EXERCISED"], "redis-restart": ["LOST"],
              "evict-lease": ["LOST"], "evict-job": ["LOST"],
              "consumer-churn": ["NOT-EXERCISED"]}
IDEMPOTENT = {"none": ["SAFE"], "worker-crash": ["LOST", "SAFE"], "reclaimers": ["LOST", "SAFE"], "worker-crash-late": ["SAFE"],
              "worker-pause": ["SAFE"], "worker-term": ["LOST", "SAFE"], "step-term": ["NOT-EXERCISED"],
              "redis-restart": ["LOST"], "evict-lease": ["LOST"], "evict-job": ["LOST"],
              "consumer-churn": ["NOT-EXERCISED"]}


def main():
    opts = argparse.ArgumentParser(prog="celery_queue")
    opts.add_argument("--countdown-every", type=int, default=0)
    opts.add_argument("--countdown", type=float, default=1.5)
    args = opts.parse_args()

    first, client = hello()
    if client is None:
        return 1
    where, keys = first["redis"], first["keys"]
    visibility = first["visibility_ms"] / 1000.0
    prefix = keys["queue"] + ":celery:"
    host, port = where["addr"].rsplit(":", 1)
    auth = ""
    if where.get("password"):
        auth = "%s:%s@" % (where.get("username") or "", where["password"])
    app = Celery("stockbench", broker="redis://%s%s:%s/%d" % (auth, host, port, where.get("db", 0)))
    app.conf.update(
        task_acks_late=True, task_default_queue="sale",
        broker_transport_options={"visibility_timeout": visibility, "global_keyprefix": prefix,
                                  "socket_timeout": 2, "socket_connect_timeout": 1},
        broker_connection_retry_on_startup=True, worker_enable_remote_control=False,
        worker_send_task_events=False, task_ignore_result=True, worker_hijack_root_logger=False,
        worker_redirect_stdouts=False)

    handoff = Handoff()

    @app.task(name="stockbench.fulfil", acks_late=True, bind=True)
    def fulfil(task, order, seq):
        handoff.run(order, seq, task.request.id)

    def serve():
        sent = 0
        for req in requests():
            rid, op = req.get("id", 0), req.get("op")
            try:
                if op == "enqueue":
                    countdown = None
                    if args.countdown_every and sent % args.countdown_every == args.countdown_every - 1:
                        countdown = args.countdown * visibility
                    fulfil.apply_async(args=(req["order"], req["seq"]), countdown=countdown)
                    sent += 1
                    say({"id": rid, "ok": True})
                elif op == "dequeue":
                    say(dict(handoff.dequeue(req["wait_ms"]), id=rid))
                elif op == "ack":
                    handoff.ack(req["task"])
                    say({"id": rid, "ok": True})
                elif op == "len":
                    waiting = client.llen(prefix + "sale") + client.hlen(prefix + "unacked")
                    say({"id": rid, "len": waiting})
                else:
                    say({"id": rid, "error": "unknown op %s" % op})
            except Exception as e:  # a Redis error, through kombu's or redis-py's types
                say({"id": rid, "error": "%s: %s" % (type(e).__name__, e)})
        # stdin closed: the sale is over; leave nothing of Celery's behind.
        clean(client, prefix)
        sys.stdout.flush()
        os._exit(0)

    @worker_ready.connect
    def answer(**_):
        # Ready once the worker consumes, as a deploy's readiness check would wait: a
        # worker that takes a second to start must not look like an empty queue.
        # kombu's restore looks for unacknowledged messages in the index alone, and
        # restores each from the hash: without either, a dead worker's message stays.
        ready(["queue", "ack"], DOCUMENTED, IDEMPOTENT,
              lease_keys=[prefix + "unacked_index"], job_keys=[prefix + "unacked"])
        threading.Thread(target=serve, daemon=True).start()

    # The worker runs in the main thread, where Celery installs its signal handlers.
    app.Worker(pool="solo", concurrency=1, without_heartbeat=True, without_gossip=True, without_mingle=True,
               loglevel="WARNING", quiet=True).start()
    return 0
