<?php
// What the PHP adapters share: the protocol's lines, the hello and its connection, and
// the seed article's lock (adapters/PROTOCOL.md).

function say(array $m): void { fwrite(STDOUT, json_encode($m) . "\n"); fflush(STDOUT); }

// hello reads the first line and connects as it says, answering with supports; it exits
// on a hello it cannot take.
function hello(array $supports): array {
    $hello = json_decode(fgets(STDIN), true);
    if (!is_array($hello) || ($hello['op'] ?? '') !== 'hello' || ($hello['protocol'] ?? 0) !== 1) {
        say(['ok' => false, 'error' => 'want hello, protocol 1']);
        exit(1);
    }
    $redis = new Redis();
    [$host, $port] = explode(':', $hello['redis']['addr'], 2);
    try {
        $redis->connect($host, (int)$port, 2.0);
        // Answer within the protocol's 5 s, with an error if Redis does not: a server
        // that died under a fault must not hang the process.
        $redis->setOption(Redis::OPT_READ_TIMEOUT, 2.0);
        if (!empty($hello['redis']['password'])) {
            $auth = empty($hello['redis']['username']) ? $hello['redis']['password']
                : [$hello['redis']['username'], $hello['redis']['password']];
            $redis->auth($auth);
        }
        if (!empty($hello['redis']['db'])) {
            $redis->select($hello['redis']['db']);
        }
    } catch (RedisException $e) {
        say(['ok' => false, 'error' => 'connect: ' . $e->getMessage()]);
        exit(1);
    }
    say(['ok' => true, 'supports' => $supports]);
    return [$redis, $hello];
}

// seed_lock is one try for the seed article's lock, for $ttlS seconds: true when taken.
// Both of its flaws are kept, since showing them is the point:
//   1. SETNX stores an expire-at timestamp, then EXPIRE is given that timestamp as a
//      number of seconds: the lock lives about 56 years.
//   2. When SETNX fails and TTL is negative, the holder is taken for dead and the lock
//      stolen with SET; a negative TTL is also what every holder shows between its own
//      SETNX and EXPIRE, so under contention a live lock is stolen.
function seed_lock(Redis $redis, string $key, int $ttlS): bool {
    $expireAt = time() + $ttlS;
    if (!$redis->setnx($key, $expireAt)) {
        if ($redis->ttl($key) >= 0) {
            return false;
        }
        $redis->set($key, $expireAt);                     // "the holder died": steal it
    }
    $redis->expire($key, $expireAt);                      // a timestamp as a TTL
    return true;
}

// serve answers each request with handle's reply, or with the Redis error it met.
function serve(callable $handle): void {
    while (($line = fgets(STDIN)) !== false) {
        $req = json_decode($line, true);
        $id = $req['id'] ?? 0;
        try {
            say(['id' => $id] + $handle($req));
        } catch (RedisException $e) {
            say(['id' => $id, 'error' => $e->getMessage()]);
        }
    }
}
