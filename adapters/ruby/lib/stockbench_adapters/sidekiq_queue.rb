# frozen_string_literal: true

# Sidekiq (Debian's ruby-sidekiq 6.4) behind the adapter protocol (adapters/PROTOCOL.md):
# orders are pushed with Sidekiq::Client.push, as an application enqueues a job, and each
# process is a worker that fetches as Sidekiq's BasicFetch does (BRPOP of the queue's
# list, the job then held only in the process, a UnitOfWork), the harness's worker doing
# the job, and acknowledge (a no-op in BasicFetch) following the harness's ack.
#
# What Sidekiq promises: BasicFetch is at most once. A job is off Redis once fetched; a
# process stopped with SIGTERM puts its jobs back (bulk_requeue) within its shutdown
# timeout, but one killed with SIGKILL, or out of memory, loses them: reliable fetch is
# Sidekiq Pro's (super_fetch). So a worker killed mid-job loses exactly its job; one
# killed after the job, before the ack, loses nothing; a paused one finishes it.
#
# Every key is put under the sale's hash tag (redis-namespace, which Sidekiq 6 still
# takes), and deleted by the process when its stdin closes.
require "sidekiq"
require "sidekiq/fetch"
require "redis-namespace"
require_relative "protocol"

module StockbenchAdapters
  module SidekiqQueue
    DOCUMENTED = {"none" => ["SAFE"], "worker-crash" => ["LOST"], "worker-crash-late" => ["SAFE"],
                  "worker-pause" => ["SAFE"], "redis-restart" => ["LOST"]}.freeze
    QUEUE = "sale"

    module_function

    def main
      hello = Protocol.hello
      where, keys = hello["redis"], hello["keys"]
      url = "redis://#{where["addr"]}/#{where["db"] || 0}"
      namespace = "#{keys["queue"]}:sidekiq"
      # A connect waits 1 s, a reply 2 s: inside the protocol's 15 s.
      redis = {url: url, namespace: namespace, size: 2, connect_timeout: 1, read_timeout: 2, write_timeout: 2,
               username: where["username"], password: where["password"]}.compact
      Sidekiq.configure_client { |c| c.redis = redis }
      Sidekiq.logger.level = Logger::WARN
      Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)
      begin
        Sidekiq.redis(&:ping)
      rescue StandardError => e
        Protocol.say(ok: false, error: "connect: #{e.message}")
        exit 1
      end
      fetch = Sidekiq::BasicFetch.new(queues: [QUEUE], strict: true)
      held = {}
      Protocol.ready(%w[queue ack], DOCUMENTED)
      Protocol.serve do |req|
        case req["op"]
        when "enqueue"
          Sidekiq::Client.push("class" => "Fulfil", "queue" => QUEUE, "args" => [req["order"], req["seq"]])
          {ok: true}
        when "dequeue"
          work = take(fetch, req["wait_ms"] / 1000.0)
          next {empty: true} unless work
          job = JSON.parse(work.job)
          held[job["jid"]] = work
          {order: job["args"][0], seq: job["args"][1], task: job["jid"]}
        when "ack"
          held.delete(req["task"]).acknowledge
          {ok: true}
        when "len"
          {len: Sidekiq.redis { |c| c.llen("queue:#{QUEUE}") }}
        else
          {error: "unknown op #{req["op"]}"}
        end
      end
      # stdin closed: the sale is over; leave nothing of Sidekiq's behind.
      Sidekiq.redis { |c| c.scan_each(match: "*").each_slice(1000) { |ks| c.del(*ks) } }
      0
    end

    # take is BasicFetch#retrieve_work waiting wait seconds instead of its 2: the same
    # BRPOP of the queue's list, the same UnitOfWork.
    def take(fetch, wait)
      queue = fetch.queues_cmd.first
      work = Sidekiq.redis { |c| c.brpop(queue, timeout: [wait, 0.01].max) }
      Sidekiq::BasicFetch::UnitOfWork.new(*work) if work
    end
  end
end
