#!/usr/bin/env php
<?php
// Laravel's Redis queue (Illuminate\Queue\RedisQueue), as Debian 12 ships it
// (php-laravel-framework), over phpredis through Laravel's PhpRedisConnection, behind
// the adapter protocol (adapters/PROTOCOL.md): enqueue is push(), a job whose data is
// the order; dequeue is a worker's pop(), polled every 50 ms (a worker's --sleep) until
// the wait is over, which first moves jobs reserved past retry_after back onto the
// queue; ack is the job's delete() once the harness has fulfilled it. A job a dead or
// silent worker held comes back retry_after seconds after its pop, give or take the
// second Laravel counts in (below). Every key is under the
// sale's queue key (phpredis's OPT_PREFIX, which Laravel's scripts' keys get too).
// With --worker, Laravel's own worker loop pops and runs the jobs instead (below).
require __DIR__ . '/protocol.php';
need('/usr/share/php/Illuminate/autoload.php', 'php-laravel-framework');

use Illuminate\Container\Container;
use Illuminate\Contracts\Redis\Factory;
use Illuminate\Queue\RedisQueue;
use Illuminate\Redis\Connections\PhpRedisConnection;

// Laravel's at-least-once (retry_after): what stockbench's built-in at-least-once
// queues earn. A naive fulfil applies twice the job of a worker that fulfilled it and
// died before its delete (worker-crash-late), or of one paused past retry_after (unless
// it resumes before another pop migrates the job: a race); a worker dead before its
// fulfil loses nothing; a restart empties the queue. A deploy's SIGTERM stops PHP at
// once: its job comes back, applied or not (a race).
$naive = array_fill_keys(['none', 'worker-crash', 'reclaimers'], ['SAFE']);
$naive['redis-restart'] = ['LOST'];
$naive['worker-crash-late'] = ['DUPLICATED'];
$naive['worker-pause'] = ['DUPLICATED', 'SAFE'];
$naive['worker-term'] = ['SAFE', 'DUPLICATED'];
$naive['step-term'] = ['NOT-EXERCISED'];
foreach (['evict-lease', 'evict-job', 'consumer-churn'] as $f) {
    $naive[$f] = ['NOT-EXERCISED'];
}
$idempotent = array_map(fn ($c) => array_values(array_diff($c, ['DUPLICATED'])) ?: ['SAFE'], $naive);

// documented is hello's documented for the sale: at retry_after 1 (below) a job may come
// back to a second worker with no fault, DUPLICATED everywhere with a naive fulfil.
function documented(array $naive, array $idempotent): callable {
    return function (array $hello) use ($naive, $idempotent): array {
        if (retry_after($hello) === 1) {
            $naive = array_map(fn ($c) => array_values(array_unique([...$c, 'DUPLICATED'])), $naive);
        }
        return [$naive, $idempotent];
    };
}

// Laravel reserves a job until a whole-second timestamp (now + retry_after, the
// fraction dropped) and migrates it once the current whole second reaches that, so a
// job comes back between retry_after - 1 and retry_after seconds after its pop.
// retry_after is the sale's visibility rounded up to seconds; at 1 (any visibility up
// to a second) a job popped late in a second comes back at the next, to a second
// worker while the first still works on it: DUPLICATED with no fault (DUPLICATED 2 seen
// here at the sale's default 500 ms), and so under any fault, with a naive fulfil.
function retry_after(array $hello): int { return max(1, intdiv(($hello['visibility_ms'] ?? 1000) + 999, 1000)); }

// connection is Laravel's Redis factory, as a queue connection is given one: it hands
// out the adapter's connection (redis(), made anew after an error).
final class Connection implements Factory {
    public function __construct(private string $prefix) {}
    public function connection($name = null) {
        $redis = redis();
        $redis->setOption(Redis::OPT_PREFIX, $this->prefix);
        return new PhpRedisConnection($redis);
    }
}

// forget deletes Laravel's keys at the sale's end (bye, or stdin closed), as a queue
// emptied.
function forget(array $keys): void {
    try {
        $redis = redis();
        $redis->setOption(Redis::OPT_PREFIX, $keys['queue'] . ':');
        $redis->del(['queues:orders', 'queues:orders:reserved', 'queues:orders:delayed', 'queues:orders:notify']);
    } catch (RedisException $e) {
    }
}

// With --worker, each process is Laravel's own queue worker instead
// (Illuminate\Queue\Worker::daemon, as `php artisan queue:work redis --tries=3` runs it;
// laravel-worker.php): it pops, counts attempts, fails a job past its tries, keeps its
// --timeout with SIGALRM, and stops after the job in hand on SIGTERM. Its job's handler
// hands the order to the harness's worker and deletes the job on ack.
if (in_array('--worker', $argv, true)) {
    require __DIR__ . '/laravel-worker.php';
    exit(work($naive, $idempotent));
}

// Sale after sale (protocol 3): each from its hello to its bye, with a queue and jobs
// of its own.
do {
    $hello = hello(['queue', 'ack'], documented($naive, $idempotent), again: true);
    $keys = $hello['keys'];
    $retryAfter = retry_after($hello);

    $queue = new RedisQueue(new Connection($keys['queue'] . ':'), 'orders', null, $retryAfter);
    $queue->setContainer(new Container());

    $jobs = [];
    $more = serve(function (array $req) use ($queue, &$jobs): array {
        switch ($req['op'] ?? '') {
        case 'enqueue':
            $queue->push('stockbench', ['order' => $req['order'], 'seq' => $req['seq']]);
            return ['ok' => true];
        case 'dequeue':
            $deadline = microtime(true) + $req['wait_ms'] / 1000;
            while (($job = $queue->pop()) === null) {
                if (microtime(true) >= $deadline) {
                    return ['empty' => true];
                }
                usleep(50000);
            }
            $data = $job->payload()['data'];
            $task = $job->getJobId() . ':' . $job->attempts();
            $jobs[$task] = $job;
            return ['order' => (string)$data['order'], 'seq' => (int)$data['seq'], 'task' => $task];
        case 'ack':
            $job = $jobs[$req['task']] ?? null;
            unset($jobs[$req['task']]);
            $job?->delete();
            return ['ok' => $job !== null];
        case 'len':
            return ['len' => $queue->size()];
        }
        return ['error' => 'unknown op ' . ($req['op'] ?? '')];
    }, fn () => forget($keys));
} while ($more);
