<?php
// What the PHP adapters share: the protocol's lines, the hello and its connection, and
// the seed article's lock (adapters/PROTOCOL.md).

function say(array $m): void { fwrite(STDOUT, json_encode($m) . "\n"); fflush(STDOUT); }

// hello reads the first line and connects as it says, answering with supports and the
// verdict classes the adapter documents by fault (protocol version 2, or 3 below), and
// for a queue with an idempotent fulfil when those differ; it exits on a hello it cannot
// take.
// $documented may be a function of the hello, returning both, for verdicts that depend
// on the sale's settings. $again: the adapter serves another sale after bye (protocol 3,
// when the harness speaks it), looping `do { hello(...); ... } while (serve(...));`; a
// kept process whose stdin ends while it waits for the next hello exits 0.
function hello(array $supports, array|callable $documented, ?array $idempotent = null, bool $again = false): array {
    $line = fgets(STDIN);
    if ($line === false && !empty($GLOBALS['stockbench_bye'])) {
        exit(0);
    }
    $hello = json_decode($line === false ? '' : $line, true);
    $GLOBALS['stockbench_bye'] = false;
    if (!is_array($hello) || ($hello['op'] ?? '') !== 'hello' || !in_array(2, $hello['versions'] ?? [], true)) {
        say(['ok' => false, 'error' => 'want hello, protocol 2']);
        exit(1);
    }
    if (is_callable($documented)) {
        [$documented, $idempotent] = $documented($hello);
    }
    if (!extension_loaded('redis')) {
        // Refused in one line, not a fatal error at the first `new Redis()`.
        say(['ok' => false, 'error' => 'phpredis is not loaded in ' . PHP_BINARY . ' ' . PHP_VERSION . ': apt-get install php-redis (make adapters installs every adapter\'s)']);
        exit(2);
    }
    $GLOBALS['stockbench_where'] = $hello['redis'];
    try {
        redis()->exists(reset($hello['keys']));           // a cluster's PING needs a node
    } catch (RedisException | RedisClusterException $e) {
        say(['ok' => false, 'error' => 'connect: ' . $e->getMessage()]);
        exit(1);
    }
    $GLOBALS['stockbench_again'] = $again && in_array(3, $hello['versions'], true);
    $said = ['ok' => true, 'protocol' => $GLOBALS['stockbench_again'] ? 3 : 2, 'supports' => $supports, 'documented' => (object)$documented];
    if ($idempotent !== null) {
        $said['documented_idempotent'] = (object)$idempotent;
    }
    say($said);
    return $hello;
}

// need refuses the sale in hello's answer, in one line saying what to install, when the
// library an adapter drives is not where Debian's package puts it; else it loads it.
function need(string $autoload, string $package): void {
    if (is_file($autoload)) {
        require_once $autoload;
        return;
    }
    fgets(STDIN);
    say(['ok' => false, 'error' => "$autoload is not here: apt-get install $package (make adapters installs every adapter's)"]);
    exit(2);
}

// token_documented is what a token lock on one server earns, by fault (stockbench's
// built-in token design): safe while holders are alive and quick, a late write whenever
// the lease runs out under a holder that then writes, and under an eviction a second
// holder's write that may land first. A deploy's SIGTERM stops PHP at once: a dead holder.
function token_documented(): array {
    $late = ['OVERSOLD', 'LOST'];
    $d = array_fill_keys(['slow-work', 'cpu-starve', 'client-pause', 'redis-pause', 'redis-restart', 'rolling-restart', 'server-errors',
        'failover', 'clock-jump', 'net-timeout', 'app-pause', 'app-blackhole'], $late);
    foreach (['none', 'crash-acquire', 'crash-holder', 'term-holder', 'net-latency'] as $f) {
        $d[$f] = ['SAFE'];
    }
    $d['evict'] = [...$late, 'LOCK-BROKEN'];
    return $d;
}

// redis is the connection, made as hello said at first use and again after a request
// met a Redis error (serve drops it), as a PHP-FPM worker connects for each request:
// through the sentinels under a Sentinel group, whose master it asks for each time; as a
// RedisCluster under a cluster; else to addr. A connect waits 1 s, a reply 2 s, a
// sentinel 0.5 s: a request that meets a dead server fails inside the protocol's 5 s.
// token_told_documented is what a token lock on one server earns when its holders ask
// the library, by a round trip to Redis, whether they still hold it right before each
// write: where the key goes from under a live holder the next one gets in, but the
// first is told no and does not write (OVERLAP), or was told yes before the key went
// inside its lease (LOCK-BROKEN); nothing is lost or oversold.
function token_told_documented(): array {
    $d = array_fill_keys(['none', 'crash-acquire', 'crash-holder', 'term-holder', 'net-latency'], ['SAFE']);
    foreach (['slow-work', 'cpu-starve', 'client-pause', 'redis-pause', 'server-errors', 'net-timeout', 'app-pause', 'app-blackhole'] as $f) {
        $d[$f] = ['OVERLAP'];
    }
    foreach (['redis-restart', 'rolling-restart', 'failover', 'clock-jump', 'evict'] as $f) {
        $d[$f] = ['OVERLAP', 'LOCK-BROKEN'];
    }
    return $d;
}

function redis() {
    if (isset($GLOBALS['stockbench_redis'])) {
        return $GLOBALS['stockbench_redis'];
    }
    $where = $GLOBALS['stockbench_where'];
    $pass = empty($where['password']) ? null
        : (empty($where['username']) ? $where['password'] : [$where['username'], $where['password']]);
    if (!empty($where['cluster'])) {
        $redis = new RedisCluster(null, $where['cluster'], 1.0, 2.0, false, $pass);
    } else {
        [$host, $port] = explode(':', $where['addr'], 2);
        if (!empty($where['sentinel'])) {
            [$host, $port] = master($where['sentinel']);
        }
        $redis = new Redis();
        $redis->connect($host, (int)$port, 1.0);
        $redis->setOption(Redis::OPT_READ_TIMEOUT, 2.0);
        if ($pass !== null) {
            $redis->auth($pass);
        }
        if (!empty($where['db'])) {
            $redis->select($where['db']);
        }
    }
    return $GLOBALS['stockbench_redis'] = $redis;
}

// master asks the sentinels, in turn, where the master is.
function master(array $sentinel): array {
    foreach ($sentinel['addrs'] as $addr) {
        [$host, $port] = explode(':', $addr, 2);
        try {
            $at = (new RedisSentinel($host, (int)$port, 0.5))->getMasterAddrByName($sentinel['master']);
            if (is_array($at)) {
                return $at;
            }
        } catch (RedisException $e) {
        }
    }
    throw new RedisException('no sentinel knows master ' . $sentinel['master']);
}

// seed_lock is one try for the seed article's lock, for $ttlS seconds: true when taken.
// Both of its flaws are kept, since showing them is the point:
//   1. SETNX stores an expire-at timestamp, then EXPIRE is given that timestamp as a
//      number of seconds: the lock lives about 56 years.
//   2. When SETNX fails and TTL is negative, the holder is taken for dead and the lock
//      stolen with SET; a negative TTL is also what every holder shows between its own
//      SETNX and EXPIRE, so under contention a live lock is stolen.
function seed_lock($redis, string $key, int $ttlS): bool {
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

// serve answers each request with handle's reply, or with the Redis error it met, until
// stdin ends or, under protocol 3, bye ends the sale. $end, when given, runs then (a queue
// deletes its library's keys); at bye the connection is closed so that the next hello
// connects anew, from nothing of this sale, and bye is answered. It returns whether bye
// ended the sale, so that another hello follows.
function serve(callable $handle, ?callable $end = null): bool {
    while (($line = fgets(STDIN)) !== false) {
        $req = json_decode($line, true);
        $id = $req['id'] ?? 0;
        if (!empty($GLOBALS['stockbench_again']) && ($req['op'] ?? '') === 'bye') {
            $end && $end();
            try {
                isset($GLOBALS['stockbench_redis']) && $GLOBALS['stockbench_redis']->close();
            } catch (RedisException | RedisClusterException $e) {
            }
            unset($GLOBALS['stockbench_redis']);
            $GLOBALS['stockbench_bye'] = true;
            say(['id' => $id, 'ok' => true]);
            return true;
        }
        try {
            say(['id' => $id] + $handle($req));
        } catch (RedisException | RedisClusterException $e) {
            if (empty($GLOBALS['stockbench_where']['cluster'])) {
                unset($GLOBALS['stockbench_redis']);      // the next request connects anew
            }                                             // (RedisCluster remaps by itself)
            say(['id' => $id, 'error' => $e->getMessage()]);
        }
    }
    $end && $end();
    return false;
}
