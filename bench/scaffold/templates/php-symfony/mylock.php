#!/usr/bin/env php
<?php
// mylock behind stockbench's adapter protocol, started from Symfony Lock's RedisStore
// over phpredis (Debian's php-symfony-lock): one process of the pool the harness starts
// (stockbench.json's lock_execs), answering its requests on stdin and stdout, as one
// PHP-FPM worker serves one request at a time.
//
// A try is a LockFactory lock's acquire(false) for the sale's TTL, a release its
// release(); a holder asks isAcquired() right before it writes. Put your own use of Symfony Lock (its options, a refresh while you work) in
// try_lock and release. With --broken it is the example's broken lock instead: the store
// left at Symfony's default TTL of 300 s, not the sale's, so a holder that dies keeps
// the lock for five minutes (stockbench check stockbench-broken.json shows the sale stuck).
require __DIR__ . '/protocol.php';
need('/usr/share/php/Symfony/Component/Lock/autoload.php', 'php-symfony-lock');

use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\LockInterface;
use Symfony\Component\Lock\Store\RedisStore;

$broken = in_array('--broken', $argv, true);

// What you claim the lock earns, by fault (stockbench list names the faults); the run
// file's thresholds are what check holds it to.
hello(['lock', 'ms', 'held'], ['none' => ['SAFE'], 'crash-holder' => ['SAFE']]);

// try_lock is one attempt: the lock when granted, else null.
function try_lock($redis, string $key, int $ttlMs, bool $broken): ?LockInterface {
    $store = $broken ? new RedisStore($redis) : new RedisStore($redis, $ttlMs / 1000);
    $lock = (new LockFactory($store))->createLock($key, $broken ? 300.0 : $ttlMs / 1000);
    try {
        return $lock->acquire(false) ? $lock : null;
    } catch (LockExpiredException $e) {
        return null;                                      // stored too late: Symfony gave it back
    }
}

// release gives the lock up; false when it was no longer this holder's.
function release(LockInterface $lock): bool {
    $held = $lock->isAcquired();
    $lock->release();
    return $held;
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
    case 'held':
        // Right before the holder writes, as Symfony's docs check before a commit: on
        // false the holder does not write.
        $lock = $leases[$req['lease']] ?? null;
        return ['held' => $lock !== null && $lock->isAcquired()];
    case 'release':
        $lock = $leases[$req['lease']] ?? null;
        unset($leases[$req['lease']]);
        return ['released' => $lock !== null && release($lock)];
    }
    return ['error' => 'unknown op ' . ($req['op'] ?? '')];
});
