<?php
// The seed article's flash-sale lock, as PHP runs it with phpredis, behind the adapter
// protocol (adapters/PROTOCOL.md). Both of its flaws are kept, since showing them is the
// point:
//   1. SETNX stores an expire-at timestamp, then EXPIRE is given that timestamp as a
//      number of seconds: the lock lives about 56 years.
//   2. When SETNX fails and TTL is negative, the holder is taken for dead and the lock
//      stolen with SET; a negative TTL is also what every holder shows between its own
//      SETNX and EXPIRE, so under contention a live lock is stolen.
// Release is a bare DEL. One process serves one request at a time, as a PHP-FPM worker.
//
// With --buy it runs the article's whole purchase instead (supports buy): take the lock,
// polling every 20 ms for up to 3 s, read the stock, write it back less one, record the
// order, release.

function say(array $m): void { fwrite(STDOUT, json_encode($m) . "\n"); fflush(STDOUT); }

$hello = json_decode(fgets(STDIN), true);
if (!is_array($hello) || ($hello['op'] ?? '') !== 'hello' || ($hello['protocol'] ?? 0) !== 1) {
    say(['ok' => false, 'error' => 'want hello, protocol 1']);
    exit(1);
}
$redis = new Redis();
[$host, $port] = explode(':', $hello['redis']['addr'], 2);
try {
    $redis->connect($host, (int)$port, 2.0);
    // Answer within the protocol's 5 s, with an error if Redis does not: a server that
    // died under a fault must not hang the process.
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
$buys = in_array('--buy', $argv, true);
say(['ok' => true, 'supports' => $buys ? ['buy'] : ['lock', 'half']]);

// lock is one try for the lock: true when taken.
function lock(Redis $redis, string $key, int $ttlMs): bool {
    $expireAt = time() + intdiv($ttlMs + 999, 1000);
    if (!$redis->setnx($key, $expireAt)) {
        if ($redis->ttl($key) >= 0) {
            return false;
        }
        $redis->set($key, $expireAt);                     // "the holder died": steal it
    }
    $redis->expire($key, $expireAt);                      // a timestamp as a TTL
    return true;
}

// buy is the article's purchase, start to end.
function buy(Redis $redis, array $keys, int $ttlMs, string $buyer): array {
    $deadline = microtime(true) + 3.0;
    while (!lock($redis, $keys['lock'], $ttlMs)) {
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
while (($line = fgets(STDIN)) !== false) {
    $req = json_decode($line, true);
    $id = $req['id'] ?? 0;
    try {
        switch ($req['op'] ?? '') {
        case 'try':
            $key = $req['key'];
            if (!empty($req['half'])) {                   // SETNX alone: the harness kills us next
                say(['id' => $id, 'granted' => $redis->setnx($key, time() + intdiv($req['ttl_ms'] + 999, 1000))]);
                break;
            }
            if (!lock($redis, $key, $req['ttl_ms'])) {
                say(['id' => $id, 'granted' => false]);
                break;
            }
            $lease = 'l' . (++$next);
            $leases[$lease] = $key;
            say(['id' => $id, 'granted' => true, 'lease' => $lease]);
            break;
        case 'buy':
            say(['id' => $id] + buy($redis, $hello['keys'], $hello['ttl_ms'], $req['buyer']));
            break;
        case 'release':
            $key = $leases[$req['lease']] ?? null;
            unset($leases[$req['lease']]);
            if ($key !== null) {
                $redis->del($key);                        // whoever holds it now
            }
            say(['id' => $id, 'released' => $key !== null]);
            break;
        default:
            say(['id' => $id, 'error' => 'unknown op ' . ($req['op'] ?? '')]);
        }
    } catch (RedisException $e) {
        say(['id' => $id, 'error' => $e->getMessage()]);
    }
}
