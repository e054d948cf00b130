<?php
// Laravel's own queue worker behind the adapter protocol, for laravel-queue.php --worker:
// each process runs Illuminate\Queue\Worker::daemon over the sale's RedisQueue, as
// `php artisan queue:work redis --tries=3 --timeout=T --sleep=0.05` runs it, with its
// own signal handling (SIGTERM: stop after the job in hand), its timeout (SIGALRM kills
// the process when a job outlasts --timeout) and its attempts (a job popped more than
// --tries times is failed, not run). The loop pops a job only while a harness worker
// has asked this process for one (a dequeue pending), as a worker process's loop takes
// a job when it is free; the job's handler, StockbenchOrder@fire, answers that dequeue
// and returns once the harness's worker acks, deleting the job as Laravel's own job
// handler does when it returns. It answers wake too (supports wake): a process stopped
// past its --timeout runs its alarm's handler as it reads that request, and dies before
// the harness's worker does the job's work, as a frozen job's code would.
//
// Settings: --tries 3, the docs' own example (Laravel's CLI default is 1: a job that
// comes back after a dead worker would then be failed, not run); --timeout retry_after
// less 3 s, at least 1, as the docs ask it "at least several seconds shorter than your
// retry_after"; --sleep 0.05 where Laravel's default is 3 s, so that a dequeue that
// finds nothing answers within its wait. `--tries N` and `--timeout S` set others.

use Illuminate\Container\Container;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Contracts\Events\Dispatcher as DispatcherContract;
use Illuminate\Events\Dispatcher;
use Illuminate\Queue\QueueManager;
use Illuminate\Queue\RedisQueue;
use Illuminate\Queue\Worker;
use Illuminate\Queue\WorkerOptions;

// Requests is the protocol's side of the worker: the dequeue a harness worker waits on,
// and the next line, read where the worker loop needs it. Enqueue and len are answered
// as they come; dequeue, ack and the sale's end are handed to the loop.
final class Requests {
    public ?array $dequeue = null;   // the pending dequeue, with its deadline
    public bool $over = false;       // bye or stdin's end: the sale is over
    public bool $bye = false;

    public function __construct(public RedisQueue $queue) {}

    // next answers requests until one the loop must handle, and returns it (null: over).
    public function next(): ?array {
        while (($line = fgets(STDIN)) !== false) {
            $req = json_decode($line, true);
            $id = $req['id'] ?? 0;
            try {
                switch ($req['op'] ?? '') {
                case 'enqueue':
                    $this->queue->push('StockbenchOrder@fire', ['order' => $req['order'], 'seq' => $req['seq']]);
                    say(['id' => $id, 'ok' => true]);
                    continue 2;
                case 'len':
                    say(['id' => $id, 'len' => $this->queue->size()]);
                    continue 2;
                case 'bye':
                    $this->over = $this->bye = true;
                    $GLOBALS['stockbench_bye_id'] = $id;
                    return null;
                }
            } catch (RedisException $e) {
                unset($GLOBALS['stockbench_redis']);      // the next request connects anew
                say(['id' => $id, 'error' => $e->getMessage()]);
                continue;
            }
            return $req;
        }
        $this->over = true;
        return null;
    }

    // answer answers the pending dequeue.
    public function answer(array $reply): void {
        say(['id' => $this->dequeue['id']] + $reply);
        $this->dequeue = null;
    }
}

// StockbenchOrder is the job's handler (payload "StockbenchOrder@fire"): the order goes
// to the harness worker whose dequeue is pending, and the handler returns once that
// worker acks, deleting the job.
final class StockbenchOrder {
    public static Requests $requests;

    public function fire($job, array $data): void {
        $r = self::$requests;
        $task = $job->getJobId() . ':' . $job->attempts();
        $r->answer(['order' => (string)$data['order'], 'seq' => (int)$data['seq'], 'task' => $task]);
        while (($req = $r->next()) !== null) {
            if (($req['op'] ?? '') === 'wake' && ($req['task'] ?? '') === $task) {
                // Asked as a stall ends: a --timeout alarm that fell due while the
                // process was stopped runs its handler here, before this answer, and
                // kills the process as it would a frozen job's.
                say(['id' => $req['id'], 'ok' => true]);
                continue;
            }
            if (($req['op'] ?? '') === 'ack' && ($req['task'] ?? '') === $task) {
                try {
                    $job->delete();
                } catch (RedisException $e) {
                    // The ack failed with Redis; the worker handles the exception as
                    // Laravel's does (the job released, or the worker stopped when the
                    // connection was lost), on a connection made anew.
                    unset($GLOBALS['stockbench_redis']);
                    say(['id' => $req['id'], 'error' => $e->getMessage()]);
                    throw $e;
                }
                say(['id' => $req['id'], 'ok' => true]);
                return;
            }
            say(['id' => $req['id'] ?? 0, 'error' => 'task ' . $task . ' is held here: want its ack, got ' . ($req['op'] ?? '')]);
        }
    }

    // failed is called as Laravel fails a job past its tries: a failer would log it to
    // failed_jobs; here it goes to stderr, which the sale keeps.
    public function failed(array $data, $e): void {
        fwrite(STDERR, 'laravel-worker: order ' . $data['order'] . ' failed: ' . $e->getMessage() . "\n");
    }
}

// SaleWorker is Laravel's Worker, but that it asks the protocol for a pending dequeue
// before each pop, and answers it empty once its wait is over.
final class SaleWorker extends Worker {
    public Requests $requests;

    protected function getNextJob($connection, $queue) {
        $r = $this->requests;
        while ($r->dequeue === null) {
            $req = $r->next();
            if ($req === null) {
                $this->shouldQuit = true;             // the sale is over: the loop stops
                return null;
            }
            if (($req['op'] ?? '') !== 'dequeue') {
                say(['id' => $req['id'] ?? 0, 'error' => 'no task is held here: ' . ($req['op'] ?? '')]);
                continue;
            }
            $r->dequeue = $req + ['deadline' => microtime(true) + $req['wait_ms'] / 1000];
        }
        $job = parent::getNextJob($connection, $queue);
        if ($job === null && microtime(true) >= $r->dequeue['deadline']) {
            $r->answer(['empty' => true]);
        }
        return $job;
    }
}

// Sales is a queue manager of one connection, the sale's queue: what the worker pops.
final class Sales extends QueueManager {
    public function __construct(private RedisQueue $queue) {}
    public function connection($name = null) { return $this->queue; }
}

// Reports is the exception handler a worker reports to: stderr, which the sale keeps.
final class Reports implements ExceptionHandler {
    public function report(Throwable $e) { fwrite(STDERR, 'laravel-worker: ' . get_class($e) . ': ' . $e->getMessage() . "\n"); }
    public function shouldReport(Throwable $e) { return true; }
    public function render($request, Throwable $e) { throw $e; }
    public function renderForConsole($output, Throwable $e) { $this->report($e); }
}

// option is --NAME VALUE from the command line, or $default.
function option(string $name, int $default): int {
    $i = array_search('--' . $name, $GLOBALS['argv'], true);
    return $i === false ? $default : (int)$GLOBALS['argv'][$i + 1];
}

// work serves sale after sale, each with a worker of its own, and returns the exit
// status: 0 once stdin ends, else what Laravel's worker stopped with (its SIGTERM).
function work(array $naive, array $idempotent): int {
    do {
        $hello = hello(['queue', 'ack', 'wake'], documented($naive, $idempotent), again: true);
        $keys = $hello['keys'];
        $retryAfter = retry_after($hello);
        $container = new Container();
        $events = new Dispatcher($container);
        $container->instance(DispatcherContract::class, $events);
        $queue = new RedisQueue(new Connection($keys['queue'] . ':'), 'orders', null, $retryAfter);
        $queue->setContainer($container);
        $queue->setConnectionName('redis');
        StockbenchOrder::$requests = $requests = new Requests($queue);
        $worker = new SaleWorker(new Sales($queue), $events, new Reports(), fn () => false);
        $worker->requests = $requests;
        $options = new WorkerOptions('default', 0, 128, option('timeout', max(1, $retryAfter - 3)), 0.05, option('tries', 3));
        $status = $worker->daemon('redis', 'orders', $options);
        if (!$requests->over) {
            return $status;                               // its SIGTERM: the process goes
        }
        forget($keys);
        try {
            isset($GLOBALS['stockbench_redis']) && $GLOBALS['stockbench_redis']->close();
        } catch (RedisException $e) {
        }
        unset($GLOBALS['stockbench_redis']);
        if (!$requests->bye || empty($GLOBALS['stockbench_again'])) {
            return 0;
        }
        $GLOBALS['stockbench_bye'] = true;
        say(['id' => $GLOBALS['stockbench_bye_id'], 'ok' => true]);
    } while (true);
}
