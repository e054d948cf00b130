#!/usr/bin/env php
<?php
// Symfony Lock's RedisStore over phpredis, as Debian 12 ships it (php-symfony-lock),
// behind the adapter protocol (adapters/PROTOCOL.md): a try is a LockFactory lock's
// acquire(false), a release its release(), a renew its refresh() for the sale's TTL
// (with --refresh); asked whether a lease is still held (right before its holder writes),
// its isAcquired(), as Symfony's docs check "before commit". A lock is the resource's key, a sorted set of tokens scored by
// their expiry in Redis's own clock (TIME), kept to the millisecond.
require __DIR__ . '/protocol.php';
need('/usr/share/php/Symfony/Component/Lock/autoload.php', 'php-symfony-lock');

use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\ExceptionInterface;
use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;

// What a token lock on one server earns, its holders asking isAcquired() before each
// write (token_told_documented).
$documented = token_told_documented();
$refresh = in_array('--refresh', $argv, true);
if ($refresh) {
    $documented['slow-work'] = ['SAFE'];                 // refreshed while it works
}
// Sale after sale (protocol 3): each from its hello to its bye, with leases of its own.
do {
    hello($refresh ? ['lock', 'renew', 'ms', 'held'] : ['lock', 'ms', 'held'], $documented, again: true);
    $leases = [];
    $next = 0;
    $more = serve(function (array $req) use (&$leases, &$next): array {
        $ttl = ($req['ttl_ms'] ?? 0) / 1000;
        try {
            switch ($req['op'] ?? '') {
            case 'try':
                // A store per request: redis() connects anew after an error, as FPM would.
                $lock = (new LockFactory(new RedisStore(redis(), $ttl)))->createLock($req['key'], $ttl);
                try {
                    $granted = $lock->acquire(false);
                } catch (LockExpiredException $e) {
                    $granted = false;                         // stored too late: Symfony gave it back
                }
                if (!$granted) {
                    return ['granted' => false];
                }
                $lease = 'l' . (++$next);
                $leases[$lease] = $lock;
                return ['granted' => true, 'lease' => $lease];
            case 'renew':
                $lock = $leases[$req['lease']] ?? null;
                if ($lock === null) {
                    return ['renewed' => false];
                }
                try {
                    $lock->refresh($ttl);
                } catch (LockConflictedException | LockExpiredException $e) {
                    return ['renewed' => false];
                }
                return ['renewed' => true];
            case 'held':
                // "If you need to check whether the current Lock instance is (still) the
                // owner of a lock, you can use the isAcquired() method" (components/lock.rst,
                // Symfony 5.4): a script that drops expired tokens and looks for its own.
                $lock = $leases[$req['lease']] ?? null;
                return ['held' => $lock !== null && $lock->isAcquired()];
            case 'release':
                $lock = $leases[$req['lease']] ?? null;
                unset($leases[$req['lease']]);
                if ($lock === null) {
                    return ['released' => false];
                }
                $held = $lock->isAcquired();
                $lock->release();
                return ['released' => $held];
            }
        } catch (ExceptionInterface $e) {
            unset($GLOBALS['stockbench_redis']);              // the next request connects anew
            return ['error' => get_class($e) . ': ' . $e->getMessage()];
        }
        return ['error' => 'unknown op ' . ($req['op'] ?? '')];
    });
} while ($more);
