#!/usr/bin/env ruby
# frozen_string_literal: true

# mylock behind stockbench's adapter protocol: one process of the pool the harness starts
# (stockbench.json's lock_execs), answering its requests on stdin and stdout.
#
# The lock: SET key token NX PX ttl to take it, a compare-and-delete to give it back, so
# that a holder whose lease ran out deletes nobody else's; a holder asks still_held right
# before it writes. Put your own lock's calls in try_lock, release and still_held. With --broken it is the example's broken lock instead: no expiry,
# so a holder that dies keeps it for ever (stockbench check stockbench-broken.json shows
# the sale stuck).
require "redis"
require "securerandom"
require_relative "protocol"

Protocol = StockbenchAdapters::Protocol
BROKEN = ARGV.include?("--broken")
RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"

# What you claim the lock earns, by fault (stockbench list names the faults); the run
# file's thresholds are what check holds it to.
DOCUMENTED = {"none" => ["SAFE"], "crash-holder" => ["SAFE"]}.freeze

# try_lock is one attempt: the token when granted, else nil.
def try_lock(redis, key, ttl_ms)
  token = SecureRandom.hex(16)
  granted = BROKEN ? redis.set(key, token, nx: true) : redis.set(key, token, nx: true, px: ttl_ms)
  granted ? token : nil
end

# still_held says whether the lock is still this holder's, asked right before the holder
# writes, as your library's docs tell its users to ask: on false the holder does not write.
def still_held(redis, key, token)
  redis.get(key) == token
end

# release gives the lock up; false when it was no longer this holder's.
def release(redis, key, token)
  redis.eval(RELEASE, keys: [key], argv: [token]) == 1
end

hello = Protocol.hello
where = hello["redis"]
host, port = where["addr"].split(":")
redis = Redis.new(host: host, port: port.to_i, db: where["db"] || 0, username: where["username"], password: where["password"],
                  connect_timeout: 1, read_timeout: 2, write_timeout: 2)
Protocol.ready(%w[lock held], DOCUMENTED)

leases = {}
serial = 0
Protocol.serve do |req|
  case req["op"]
  when "try"
    token = try_lock(redis, req["key"], req["ttl_ms"])
    next {granted: false} unless token

    serial += 1
    leases["l#{serial}"] = [req["key"], token]
    {granted: true, lease: "l#{serial}"}
  when "held"
    held = leases[req["lease"]]
    {held: !held.nil? && still_held(redis, *held)}
  when "release"
    held = leases.delete(req["lease"])
    {released: !held.nil? && release(redis, *held)}
  else
    {error: "unknown op #{req["op"]}"}
  end
end
