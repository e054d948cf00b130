<?php
// The seed article's sorted-set queue, as PHP runs it with phpredis, behind the adapter
// protocol (adapters/PROTOCOL.md): ZADD to enqueue; to take, hold the seed lock (SETNX,
// EXPIRE with the expire-at timestamp, SET to steal when TTL < 0), ZRANGE the first
// member, ZREM it without checking the reply, DEL the lock. The lock's steal race lets
// two workers read the same first member: both take it. There is no acknowledgement.

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
    $redis->setOption(Redis::OPT_READ_TIMEOUT, 2.0);      // answer within the protocol's 5 s
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
say(['ok' => true, 'supports' => ['queue']]);
$keys = $hello['keys'];

// lock is one try for the seed lock, for 1 s: true when taken.
function lock(Redis $redis, string $key): bool {
    $expireAt = time() + 1;
    if (!$redis->setnx($key, $expireAt)) {
        if ($redis->ttl($key) >= 0) {
            return false;
        }
        $redis->set($key, $expireAt);                     // "the holder died": steal it
    }
    $redis->expire($key, $expireAt);                      // a timestamp as a TTL
    return true;
}

// take polls for the lock and the first task until the wait is over.
function take(Redis $redis, array $keys, int $waitMs): ?array {
    $deadline = microtime(true) + $waitMs / 1000;
    do {
        if (lock($redis, $keys['qlock'])) {
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

while (($line = fgets(STDIN)) !== false) {
    $req = json_decode($line, true);
    $id = $req['id'] ?? 0;
    try {
        switch ($req['op'] ?? '') {
        case 'enqueue':
            if ($redis->zAdd($keys['queue'], $req['seq'], $req['order']) === false) {
                say(['id' => $id, 'error' => 'zadd failed: ' . ($redis->getLastError() ?? 'no reason given')]);
                break;
            }
            say(['id' => $id, 'ok' => true]);
            break;
        case 'dequeue':
            $task = take($redis, $keys, $req['wait_ms']);
            say(['id' => $id] + ($task ?? ['empty' => true]));
            break;
        case 'len':
            say(['id' => $id, 'len' => $redis->zCard($keys['queue'])]);
            break;
        default:
            say(['id' => $id, 'error' => 'unknown op ' . ($req['op'] ?? '')]);
        }
    } catch (RedisException $e) {
        say(['id' => $id, 'error' => $e->getMessage()]);
    }
}
