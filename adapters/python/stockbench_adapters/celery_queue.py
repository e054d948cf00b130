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
the process when its stdin closes, or at bye: the process then serves the next sale
(protocol 3) with an app and a worker of its own, as a fresh process would.
"""
import argparse
import os
import sys
import threading

from celery import Celery
from celery.platforms import EX_OK
from celery.signals import worker_ready
from celery.worker import state
from kombu.asynchronous import get_event_loop, set_event_loop

from .protocol import Handoff, another, clean, hello, ready, requests, say

# What Celery earns in stockbench's sales, with either fulfil. Without a countdown: a
# worker killed mid-task leaves its message unacknowledged, restored only when a worker
# next restores (at its start, then every 100 s): below a second's timeout, a fresh
# worker started past it restores it (then it is done, maybe twice), else it is lost
# within the sale; from a second, the hello's redelivery_ms has the sale wait for the
# pass (done then, after later orders);
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
# kombu's restore pass (kombu/transport/redis.py, 5.2.4): every 10 s a worker calls
# restore_visible, which acts on every tenth call (its first at the worker's start), so
# each worker restores what is older than the visibility timeout every 100 s.
RESTORE_EVERY = 100.0


def redelivery_ms(visibility):
    """How long kombu may take to hand a dead worker's task on, for the sale to wait: none
    below a second, where the dead worker's successor (a process started again at once,
    a second or more into importing Celery) finds the task older than the timeout at its
    start and restores it; longer than that, only a restore pass gives it back: the
    timeout, then up to a pass, and 5 s for a loop that ran a task when its timer fell."""
    if visibility < 1:
        return None
    return int((visibility + RESTORE_EVERY + 5) * 1000)


IDEMPOTENT = {"none": ["SAFE"], "worker-crash": ["LOST", "SAFE"], "reclaimers": ["LOST", "SAFE"], "worker-crash-late": ["SAFE"],
              "worker-pause": ["SAFE"], "worker-term": ["LOST", "SAFE"], "step-term": ["NOT-EXERCISED"],
              "redis-restart": ["LOST"], "evict-lease": ["LOST"], "evict-job": ["LOST"],
              "consumer-churn": ["NOT-EXERCISED"]}


def main():
    """Serves sale after sale (protocol 3): each sale a Celery app and worker of its own,
    made as a fresh process would make them, in a process whose imports are paid once."""
    opts = argparse.ArgumentParser(prog="celery_queue")
    opts.add_argument("--countdown-every", type=int, default=0)
    opts.add_argument("--countdown", type=float, default=1.5)
    args = opts.parse_args()
    while True:
        first, client = hello()
        if client is None:
            return 0 if another() else 1
        try:
            sale(first, client, args)
        finally:
            client.close()
        if not another():
            return 0


def sale(first, client, args):
    """One sale: a Celery app under the sale's key prefix, its worker in the main thread
    (where Celery installs its signal handlers), the protocol in a thread of its own."""
    where, keys = first["redis"], first["keys"]
    visibility = first["visibility_ms"] / 1000.0
    prefix = keys["queue"] + ":celery:"
    auth = ""
    if where.get("password"):
        auth = "%s:%s@" % (where.get("username") or "", where["password"])
    transport = {"visibility_timeout": visibility, "global_keyprefix": prefix,
                 "socket_timeout": 2, "socket_connect_timeout": 1}
    if where.get("sentinel"):
        # kombu's own Sentinel transport, as its docstring configures it: each sentinel a
        # sentinel:// URL joined by ";", the master's name a transport option.
        broker = ";".join("sentinel://%s%s/%d" % (auth, a, where.get("db", 0)) for a in where["sentinel"]["addrs"])
        transport.update(master_name=where["sentinel"]["master"], sentinel_kwargs={"socket_timeout": 1})
    else:
        broker = "redis://%s%s/%d" % (auth, where["addr"], where.get("db", 0))
    app = Celery("stockbench", broker=broker)
    app.conf.update(
        task_acks_late=True, task_default_queue="sale",
        broker_transport_options=transport,
        broker_connection_retry_on_startup=True, worker_enable_remote_control=False,
        worker_send_task_events=False, task_ignore_result=True, worker_hijack_root_logger=False,
        worker_redirect_stdouts=False)

    handoff = Handoff()

    # Not shared: a shared task is added to every app made afterwards, and the next
    # sale's app would then run this one's (its handoff no longer served).
    @app.task(name="stockbench.fulfil", acks_late=True, bind=True, shared=False)
    def fulfil(task, order, seq):
        handoff.run(order, seq, task.request.id)

    stopped = threading.Event()  # the worker of this sale has returned
    kept = threading.Event()  # bye ended the sale: the process serves the next
    wake = os.pipe()

    def bye():
        # Kept only when no task of this sale is still in the worker (one the harness
        # never acknowledged blocks the main thread) and the worker has not stopped on
        # its own (a signal's shutdown): else the harness stops the process.
        if handoff.busy() or stopped.is_set():
            return False
        state.should_stop = EX_OK  # Celery's warm shutdown, as its SIGTERM handler asks it
        os.write(wake[1], b"x")  # the loop checks that flag once its poll returns
        if not stopped.wait(2):
            return False
        for fd in wake:
            os.close(fd)
        app.close()
        clean(client, prefix)
        kept.set()
        return True

    def serve():
        sent = 0
        for req in requests(on_bye=bye):
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
        if kept.is_set():
            return  # the main thread reads the next hello
        # stdin closed, or bye could not end the sale: leave nothing of Celery's behind.
        clean(client, prefix)
        sys.stdout.flush()
        os._exit(0)

    def answer(**_):
        # Ready once the worker consumes, as a deploy's readiness check would wait: a
        # worker that takes a second to start must not look like an empty queue.
        # kombu's restore looks for unacknowledged messages in the index alone, and
        # restores each from the hash: without either, a dead worker's message stays.
        # Celery's signals are the process's, not the app's: this sale's receiver goes
        # once it has answered, or the next sale's worker would start this one's thread.
        worker_ready.disconnect(answer)
        # The worker's loop polls for up to a second between looks at its stop flag: a
        # pipe of its own in that poll lets bye wake it.
        get_event_loop().add_reader(wake[0], os.read, wake[0], 1)
        ready(["queue", "ack", "sentinel"], DOCUMENTED, IDEMPOTENT,
              lease_keys=[prefix + "unacked_index"], job_keys=[prefix + "unacked"], again=True,
              redelivery_ms=redelivery_ms(visibility))
        threading.Thread(target=serve, daemon=True).start()

    worker_ready.connect(answer, weak=False)
    # What a process keeps of the last sale's worker: the flag its bye set, and kombu's
    # event loop, which Celery's Hub step takes over when one is set (the last worker
    # closed it: a worker on it never consumes).
    state.should_stop = state.should_terminate = None
    set_event_loop(None)
    try:
        app.Worker(pool="solo", concurrency=1, without_heartbeat=True, without_gossip=True, without_mingle=True,
                   loglevel="WARNING", quiet=True).start()
    finally:
        stopped.set()
