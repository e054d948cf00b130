#!/usr/bin/env php
<?php
// The seed article's sorted-set queue, as PHP runs it with phpredis, behind the adapter
// protocol (adapters/PROTOCOL.md): ZADD to enqueue; to take, hold the seed lock
// (seed_lock in protocol.php), ZRANGE the first member, ZREM it without checking the
// reply, DEL the lock. The lock's steal race lets two workers read the same first
// member: both take it. There is no acknowledgement.
require __DIR__ . '/protocol.php';

// What the queue earns in stockbench's sales: what seed-zset (its Go port) documents.
// The steal race hands some tasks to two workers with no fault, which a naive fulfil
// applies twice; fewer workers race under the worker faults, so there none may be; a
// dead worker's task is lost unless the race had handed it to another as well; a
// restart empties the queue. Without an ack no process holds a task once it is handed
// out: a deploy's SIGTERM (worker-term) finds none to strike (the race still duplicates).
$documented = ['none' => ['DUPLICATED'], 'worker-crash' => ['LOST', 'DUPLICATED', 'SAFE'],
    'reclaimers' => ['LOST', 'DUPLICATED', 'SAFE'],
    'worker-crash-late' => ['DUPLICATED', 'SAFE'], 'worker-pause' => ['DUPLICATED', 'SAFE'],
    'worker-term' => ['DUPLICATED', 'NOT-EXERCISED'], 'step-term' => ['DUPLICATED', 'NOT-EXERCISED'], 'redis-restart' => ['LOST'],
    'evict-lease' => ['DUPLICATED', 'NOT-EXERCISED'], 'evict-job' => ['DUPLICATED', 'NOT-EXERCISED'],
    'consumer-churn' => ['DUPLICATED', 'NOT-EXERCISED']];
$hello = hello(['queue'], $documented, ['none' => ['SAFE'], 'worker-crash' => ['LOST', 'SAFE'], 'reclaimers' => ['LOST', 'SAFE'],
    'worker-crash-late' => ['SAFE'], 'worker-pause' => ['SAFE'], 'worker-term' => ['NOT-EXERCISED'], 'step-term' => ['NOT-EXERCISED'],
    'redis-restart' => ['LOST'], 'evict-lease' => ['NOT-EXERCISED'], 'evict-job' => ['NOT-EXERCISED'],
    'consumer-churn' => ['NOT-EXERCISED']]);
$keys = $hello['keys'];

// take polls for the lock and the first task until the wait is over.
function take($redis, array $keys, int $waitMs): ?array {
    $deadline = microtime(true) + $waitMs / 1000;
    do {
        if (seed_lock($redis, $keys['qlock'], 1)) {
            $first = $redis->zRange($keys['queue'], 0, 0, ['withscores' => true]);
            if ($first) {
                $order = (string)array_key_first($first);
                $redis->zRem($keys['queue'], $order);     // the reply is not checked
                $redis->del($keys['qlock']);
                return ['order' => $order, 'seq' => (int)$first[$order]];
            }
            $redis->del($keys['qlock']);
        }
        usleep(5000);
    } while (microtime(true) < $deadline);
    return null;
}

serve(function (array $req) use ($keys): array {
    $redis = redis();
    switch ($req['op'] ?? '') {
    case 'enqueue':
        if ($redis->zAdd($keys['queue'], $req['seq'], $req['order']) === false) {
            return ['error' => 'zadd failed: ' . ($redis->getLastError() ?? 'no reason given')];
        }
        return ['ok' => true];
    case 'dequeue':
        return take($redis, $keys, $req['wait_ms']) ?? ['empty' => true];
    case 'len':
        return ['len' => $redis->zCard($keys['queue'])];
    }
    return ['error' => 'unknown op ' . ($req['op'] ?? '')];
});
