#!/usr/bin/env php
<?php
// mylock behind stockbench's adapter protocol, started from Laravel's cache lock on
// Redis (Illuminate\Cache\RedisLock, what Cache::lock() returns; Debian's
// php-laravel-framework) through Laravel's PhpRedisConnection: one process of the pool
// the harness starts (stockbench.json's lock_execs), answering its requests on stdin and
// stdout, as one PHP-FPM worker serves one request at a time.
//
// A try is get(), SET key owner EX seconds NX, for the sale's TTL in whole seconds; a
// release is release(), a compare-and-delete of the owner. Laravel 8.83 gives a holder no
// way to ask whether it still holds the lock before it writes (isOwnedByCurrentProcess()
// is public from 10.36: with it, answer the protocol's held). Put your own use of the lock
// (block(), your own owner) in try_lock and release. With --broken it is the example's
// broken lock instead: Cache::lock($name) with no seconds, Laravel's default, which
// never expires, so a holder that dies keeps it for ever (stockbench check
// stockbench-broken.json shows the sale stuck).
require __DIR__ . '/protocol.php';
need('/usr/share/php/Illuminate/autoload.php', 'php-laravel-framework');

use Illuminate\Cache\RedisLock;
use Illuminate\Redis\Connections\PhpRedisConnection;

$broken = in_array('--broken', $argv, true);

// What you claim the lock earns, by fault (stockbench list names the faults); the run
// file's thresholds are what check holds it to.
hello(['lock'], ['none' => ['SAFE'], 'crash-holder' => ['SAFE']]);

// try_lock is one attempt: the lock when granted, else null.
function try_lock($redis, string $key, int $ttlMs, bool $broken): ?RedisLock {
    $seconds = $broken ? 0 : intdiv($ttlMs + 999, 1000);
    $lock = new RedisLock(new PhpRedisConnection($redis), $key, $seconds);
    return $lock->get() ? $lock : null;
}

// release gives the lock up; false when it was no longer this holder's.
function release(RedisLock $lock): bool {
    return $lock->release();
}

$leases = [];
$serial = 0;
serve(function (array $req) use ($broken, &$leases, &$serial): array {
    switch ($req['op'] ?? '') {
    case 'try':
        $lock = try_lock(redis(), $req['key'], $req['ttl_ms'], $broken);
        if ($lock === null) {
            return ['granted' => false];
        }
        $lease = 'l' . ++$serial;
        $leases[$lease] = $lock;
        return ['granted' => true, 'lease' => $lease];
    case 'release':
        $lock = $leases[$req['lease']] ?? null;
        unset($leases[$req['lease']]);
        return ['released' => $lock !== null && release($lock)];
    }
    return ['error' => 'unknown op ' . ($req['op'] ?? '')];
});
