#!/usr/bin/env php
<?php
// The seed article's flash-sale lock (seed_lock in protocol.php), as PHP runs it with
// phpredis, behind the adapter protocol (adapters/PROTOCOL.md). Release is a bare DEL,
// whoever holds the key by then. One process serves one request at a time, as a PHP-FPM
// worker.
//
// With --buy it runs the article's whole purchase instead (supports buy): take the lock,
// polling every 20 ms for up to 3 s, read the stock, write it back less one, record the
// order, release.
require __DIR__ . '/protocol.php';

// What the lock earns in stockbench's sales: what seed-setnx (its Go port) documents,
// an oversell with no fault at all, from the steal race, and under every fault; served
// by a pool of PHP processes, fewer holders race at once, and the race that breaks the
// lock may end with no stale write landing (LOCK-BROKEN 13 under slow-work in make test)
// or with a lost update alone.
const OVERSOLD = ['OVERSOLD', 'LOST', 'LOCK-BROKEN'];
$documented = array_fill_keys(['none', 'slow-work', 'cpu-starve', 'client-pause', 'redis-pause', 'redis-restart', 'rolling-restart', 'server-errors', 'failover',
    'clock-jump', 'net-latency', 'net-timeout', 'evict', 'app-pause', 'app-blackhole'], OVERSOLD);
// A dead holder's 56-year lock stops the sale, oversold or not by then; a buyer dead
// between SETNX and EXPIRE leaves a lock every poller steals.
$documented['crash-holder'] = ['OVERSOLD', 'LOST', 'STUCK'];
// A deploy's SIGTERM stops PHP at once, holding the lock: as a dead holder.
$documented['term-holder'] = $documented['crash-holder'];
$documented['crash-acquire'] = ['OVERSOLD', 'LOST', 'OVERLAP', 'LOCK-BROKEN'];

$buys = in_array('--buy', $argv, true);
// The whole purchase races as the lock does, but not in every run: it documents nothing.
$hello = hello($buys ? ['buy'] : ['lock', 'half'], $buys ? [] : $documented);
$keys = $hello['keys'];
$ttlS = intdiv($hello['ttl_ms'] + 999, 1000);

// buy is the article's purchase, start to end.
function buy($redis, array $keys, int $ttlS, string $buyer): array {
    $deadline = microtime(true) + 3.0;
    while (!seed_lock($redis, $keys['lock'], $ttlS)) {
        if (microtime(true) > $deadline) {
            return ['sold' => false, 'reason' => 'gave-up'];
        }
        usleep(20000);
    }
    $left = (int)$redis->get($keys['stock']);
    if ($left <= 0) {
        $redis->del($keys['lock']);
        return ['sold' => false, 'reason' => 'sold-out'];
    }
    $redis->set($keys['stock'], $left - 1);
    $redis->rPush($keys['orders'], $buyer);
    $redis->del($keys['lock']);
    return ['sold' => true, 'left' => $left - 1];
}

$leases = [];
$next = 0;
serve(function (array $req) use ($keys, $ttlS, &$leases, &$next): array {
    $redis = redis();
    switch ($req['op'] ?? '') {
    case 'try':
        $ttl = intdiv($req['ttl_ms'] + 999, 1000);
        if (!empty($req['half'])) {                       // SETNX alone: the harness kills us next
            return ['granted' => $redis->setnx($req['key'], time() + $ttl)];
        }
        if (!seed_lock($redis, $req['key'], $ttl)) {
            return ['granted' => false];
        }
        $lease = 'l' . (++$next);
        $leases[$lease] = $req['key'];
        return ['granted' => true, 'lease' => $lease];
    case 'release':
        $key = $leases[$req['lease']] ?? null;
        unset($leases[$req['lease']]);
        if ($key !== null) {
            $redis->del($key);                            // whoever holds it now
        }
        return ['released' => $key !== null];
    case 'buy':
        return buy($redis, $keys, $ttlS, $req['buyer']);
    }
    return ['error' => 'unknown op ' . ($req['op'] ?? '')];
});
