<?php
// Laravel 8.83's Redis queue retries a job before retry_after has passed.
//
// A standalone reproduction: Laravel's own RedisQueue (Debian 12's php-laravel-framework,
// over phpredis) against a redis-server this script starts on a free loopback port and
// stops. No stockbench code. Each trial pushes one job; worker A pops it at a chosen
// fraction of a second and keeps it (a job still being processed: not deleted, not
// released); worker B then pops every 5 ms, as a worker polling the queue does, until
// the job is handed to it. retry_after is 1 second. The docs: "This option specifies how
// many seconds the queue connection should wait before retrying a job that is being
// processed." It prints how long after A's pop B got the job, and exits 1 when any trial
// got it sooner than retry_after, 0 when none did, 2 when it could not run.
//
// Why (from the source, Illuminate/Queue/RedisQueue.php and InteractsWithTime.php): a
// pop reserves the job until availableAt(retry_after), Carbon::now()->getTimestamp()
// plus retry_after, whole seconds with the fraction dropped; each pop first migrates
// the reserved jobs whose score is at most currentTime(), the current whole second. So
// a job comes back between retry_after - 1 and retry_after seconds after its pop.
//
//   php repro.php [retry_after seconds, default 1]

$autoload = '/usr/share/php/Illuminate/autoload.php';
if (!is_file($autoload) || !extension_loaded('redis')) {
    fwrite(STDERR, "needs Debian's php-laravel-framework and php-redis (apt-get install php-laravel-framework php-redis)\n");
    exit(2);
}
require $autoload;

use Illuminate\Container\Container;
use Illuminate\Queue\RedisQueue;
use Illuminate\Redis\RedisManager;

$retryAfter = (int)($argv[1] ?? 1);

// A redis-server of our own, on a port the kernel picked, without persistence.
$probe = stream_socket_server('tcp://127.0.0.1:0');
$port = (int)substr(strrchr(stream_socket_get_name($probe, false), ':'), 1);
fclose($probe);
$server = proc_open(['redis-server', '--port', (string)$port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
if (!is_resource($server)) {
    fwrite(STDERR, "cannot start redis-server (apt-get install redis-server)\n");
    exit(2);
}
register_shutdown_function(function () use ($server) {
    proc_terminate($server, SIGKILL);
    proc_close($server);
});
$redis = new Redis();
for ($i = 0; ; $i++) {
    try {
        if ($redis->connect('127.0.0.1', $port) && $redis->ping()) {
            break;
        }
    } catch (RedisException $e) {
    }
    if ($i === 200) {
        fwrite(STDERR, "redis-server did not answer on port $port\n");
        exit(2);
    }
    usleep(10000);
}
$version = $redis->info('server')['redis_version'];

// The queue as a Laravel app's config/queue.php makes it: connection 'redis', queue
// 'default', retry_after as given.
$manager = new RedisManager(new Container(), 'phpredis', ['default' => ['host' => '127.0.0.1', 'port' => $port, 'database' => 0]]);
$queue = new RedisQueue($manager, 'default', 'default', $retryAfter);
$queue->setContainer(new Container());

printf("Laravel %s RedisQueue, retry_after %d s, phpredis %s, redis-server %s\n",
    Illuminate\Foundation\Application::VERSION, $retryAfter, phpversion('redis'), $version);

$early = 0;
foreach ([0.10, 0.30, 0.50, 0.70, 0.90, 0.99] as $n => $fraction) {
    // Worker A pops at $fraction into a second.
    while (fmod(microtime(true), 1.0) < $fraction || fmod(microtime(true), 1.0) > $fraction + 0.005) {
        usleep(200);
    }
    $queue->push('ProcessOrder', ['trial' => $n + 1]);
    $a = $queue->pop();
    $popped = microtime(true);
    if ($a === null) {
        fwrite(STDERR, "worker A got no job\n");
        exit(2);
    }
    // Worker B polls until the job A still holds is handed to it, or twice retry_after.
    $b = null;
    while (microtime(true) - $popped < 2 * $retryAfter + 1 && ($b = $queue->pop()) === null) {
        usleep(5000);
    }
    $after = microtime(true) - $popped;
    if ($b === null) {
        printf("trial %d: A popped at .%03d of a second; not retried within %.1f s\n", $n + 1, (int)($fraction * 1000), $after);
        continue;
    }
    $same = $b->getJobId() === $a->getJobId();
    if ($same && $after < $retryAfter) {
        $early++;
    }
    printf("trial %d: A popped job %s at .%03d of a second; B was handed %s %4d ms later (attempt %d)%s\n",
        $n + 1, substr($a->getJobId(), 0, 8), (int)(fmod($popped, 1.0) * 1000), $same ? 'the same job' : 'another job',
        (int)round($after * 1000), $b->attempts(), $same && $after < $retryAfter ? sprintf(", %d ms before retry_after", (int)round(($retryAfter - $after) * 1000)) : '');
    $b->delete();
    $a->delete();
}
if ($early > 0) {
    printf("BROKEN: %d of 6 jobs were retried while worker A still held them, before retry_after (%d s) had passed\n", $early, $retryAfter);
    exit(1);
}
printf("held: no job was retried before retry_after (%d s)\n", $retryAfter);
exit(0);
