#!/usr/bin/env php
<?php
// Laravel's cache lock on Redis (Illuminate\Cache\RedisLock, Cache::lock()), as Debian
// 12 ships it (php-laravel-framework), over phpredis through Laravel's own
// PhpRedisConnection, behind the adapter protocol (adapters/PROTOCOL.md): a try is
// get(), SET key owner EX seconds NX; with --block S, block(S), which polls every 250 ms
// and gives up after S seconds; a release is release(), a Lua compare-and-delete of the
// owner. The lease is whole seconds (EX), and Laravel 8's lock has no refresh. Nor has
// it a way for a holder to ask whether it still holds the lock (isOwnedByCurrentProcess()
// is protected in 8.83, public from 10.36): the adapter does not support held, and its
// holders write without asking.
require __DIR__ . '/protocol.php';
need('/usr/share/php/Illuminate/autoload.php', 'php-laravel-framework');

use Illuminate\Cache\RedisLock;
use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Redis\Connections\PhpRedisConnection;

// What a token lock on one server earns (token_documented): slow work included, as
// there is no refresh.
$documented = token_documented();
$at = array_search('--block', $argv, true);
$block = $at === false ? null : (int)($argv[$at + 1] ?? 0);
if ($block !== null && $block <= 0) {
    fgets(STDIN);
    say(['ok' => false, 'error' => '--block wants a whole number of seconds above 0']);
    exit(2);
}
// Sale after sale (protocol 3): each from its hello to its bye, with leases of its own.
do {
    hello(['lock'], $documented, again: true);
    $leases = [];
    $next = 0;
    $more = serve(function (array $req) use (&$leases, &$next, $block): array {
        switch ($req['op'] ?? '') {
        case 'try':
            $seconds = intdiv($req['ttl_ms'] + 999, 1000);
            $lock = new RedisLock(new PhpRedisConnection(redis()), $req['key'], $seconds);
            if ($block === null) {
                $granted = $lock->get();
            } else {
                try {
                    $granted = $lock->block($block);
                } catch (LockTimeoutException $e) {
                    $granted = false;
                }
            }
            if (!$granted) {
                return ['granted' => false];
            }
            $lease = 'l' . (++$next);
            $leases[$lease] = $lock;
            return ['granted' => true, 'lease' => $lease];
        case 'release':
            $lock = $leases[$req['lease']] ?? null;
            unset($leases[$req['lease']]);
            return ['released' => $lock !== null && $lock->release()];
        }
        return ['error' => 'unknown op ' . ($req['op'] ?? '')];
    });
} while ($more);
