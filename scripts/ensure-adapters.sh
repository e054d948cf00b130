#!/usr/bin/env bash
# Makes sure the runtimes of the shipped process adapters are here (adapters/): PHP with
# phpredis, Symfony Lock and Laravel, Debian's Python with redis-py, RQ and Celery, Ruby with Sidekiq, and Node.js with
# Debian's node-redis,
# installing Debian's packages when it can.
# Without them the adapter tests skip, saying why (unless STOCKBENCH_REQUIRE_ADAPTERS=1).
set -euo pipefail
have() { command -v php >/dev/null 2>&1 && php -m 2>/dev/null | grep -qx redis &&
  [ -f /usr/share/php/Symfony/Component/Lock/autoload.php ] && [ -f /usr/share/php/Illuminate/autoload.php ] && /usr/bin/python3 -c 'import redis, rq, celery' >/dev/null 2>&1 &&
  [ -f /usr/share/nodejs/redis/package.json ] && command -v node >/dev/null 2>&1 &&
  ruby -e 'require "sidekiq"; require "redis-namespace"' >/dev/null 2>&1; }
have && exit 0
if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  echo "ensure-adapters: installing Debian's php-cli, php-redis, php-symfony-lock, php-laravel-framework, python3-redis, python3-rq, python3-celery, ruby-sidekiq, ruby-redis-namespace and node-redis" >&2
  $sudo apt-get update -qq >/dev/null || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends php-cli php-redis php-symfony-lock php-laravel-framework python3-redis python3-rq python3-celery ruby-sidekiq ruby-redis-namespace node-redis >/dev/null
  have && exit 0
fi
echo "ensure-adapters: PHP with phpredis, Symfony Lock and Laravel, /usr/bin/python3 with redis-py and RQ, or Node.js with node-redis is missing; the adapter tests will skip" >&2
exit 0
