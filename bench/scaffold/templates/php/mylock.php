#!/usr/bin/env php
<?php
// mylock behind stockbench's adapter protocol: one process of the pool the harness starts
// (stockbench.json's lock_execs), answering its requests on stdin and stdout, as one
// PHP-FPM worker serves one request at a time.
//
// The lock: SET key token NX PX ttl to take it, a compare-and-delete to give it back, so
// that a holder whose lease ran out deletes nobody else's; a holder asks still_held right
// before it writes. Put your own lock's calls in try_lock, release and still_held. With --broken it is the example's broken lock instead: no expiry,
// so a holder that dies keeps it for ever (stockbench check stockbench-broken.json shows
// the sale stuck).
require __DIR__ . '/protocol.php';

const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
$broken = in_array('--broken', $argv, true);

// What you claim the lock earns, by fault (stockbench list names the faults); the run
// file's thresholds are what check holds it to.
hello(['lock', 'held'], ['none' => ['SAFE'], 'crash-holder' => ['SAFE']]);

// try_lock is one attempt: the token when granted, else null.
function try_lock($redis, string $key, int $ttlMs, bool $broken): ?string {
    $token = bin2hex(random_bytes(16));
    $options = $broken ? ['nx'] : ['nx', 'px' => $ttlMs];
    return $redis->set($key, $token, $options) ? $token : null;
}

// still_held says whether the lock is still this holder's, asked right before the holder
// writes, as your library's docs tell its users to ask: on false the holder does not write.
function still_held($redis, string $key, string $token): bool {
    return $redis->get($key) === $token;
}

// release gives the lock up; false when it was no longer this holder's.
function release($redis, string $key, string $token): bool {
    return $redis->eval(RELEASE, [$key, $token], 1) === 1;
}

$leases = [];
$serial = 0;
serve(function (array $req) use ($broken, &$leases, &$serial): array {
    switch ($req['op'] ?? '') {
    case 'try':
        $token = try_lock(redis(), $req['key'], $req['ttl_ms'], $broken);
        if ($token === null) {
            return ['granted' => false];
        }
        $lease = 'l' . ++$serial;
        $leases[$lease] = [$req['key'], $token];
        return ['granted' => true, 'lease' => $lease];
    case 'held':
        $held = $leases[$req['lease']] ?? null;
        return ['held' => $held !== null && still_held(redis(), $held[0], $held[1])];
    case 'release':
        $held = $leases[$req['lease']] ?? null;
        unset($leases[$req['lease']]);
        return ['released' => $held !== null && release(redis(), $held[0], $held[1])];
    }
    return ['error' => 'unknown op ' . ($req['op'] ?? '')];
});
