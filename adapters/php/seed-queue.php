#!/usr/bin/env php
<?php
// The seed article's sorted-set queue, as PHP runs it with phpredis, behind the adapter
// protocol (adapters/PROTOCOL.md): ZADD to enqueue; to take, hold the seed lock
// (seed_lock in protocol.php), ZRANGE the first member, ZREM it without checking the
// reply, DEL the lock. The lock's steal race lets two workers read the same first
// member: both take it. There is no acknowledgement.
require __DIR__ . '/protocol.php';

[$redis, $hello] = hello(['queue']);
$keys = $hello['keys'];

// take polls for the lock and the first task until the wait is over.
function take(Redis $redis, array $keys, int $waitMs): ?array {
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

serve(function (array $req) use ($redis, $keys): array {
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
