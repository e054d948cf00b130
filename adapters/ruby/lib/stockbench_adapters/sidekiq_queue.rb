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
# takes), and deleted by the process when its sale ends. A process serves sale after sale
# (protocol 3), each with a client pool of its own.
require "sidekiq"
require "sidekiq/fetch"
require "redis-namespace"
require_relative "protocol"

module StockbenchAdapters
  module SidekiqQueue
    DOCUMENTED = {"none" => ["SAFE"], "worker-crash" => ["LOST"], "reclaimers" => ["LOST"], "worker-crash-late" => ["SAFE"],
                  "worker-pause" => ["SAFE"], "worker-term" => ["SAFE"], "step-term" => ["NOT-EXERCISED"],
                  "redis-restart" => ["LOST"], "evict-lease" => ["NOT-EXERCISED"],
                  "evict-job" => ["NOT-EXERCISED"], "consumer-churn" => ["NOT-EXERCISED"]}.freeze
    QUEUE = "sale"
    # Sidekiq's shutdown timeout's share of a deploy's grace: 25 s of Kubernetes' 30.
    TIMEOUT_SHARE = 25.0 / 30

    module_function

    # main serves sale after sale (protocol 3), each from its hello to its bye.
    def main
      timeout = ARGV.include?("--timeout") ? Float(ARGV[ARGV.index("--timeout") + 1]) : nil
      while (hello = Protocol.hello)
        return 0 unless sale(hello, timeout)
      end
      0
    end

    # sale serves one sale, with a client pool and a fetch of its own; it returns
    # whether bye ended it (another follows).
    def sale(hello, timeout)
      grace = (hello["term_grace_ms"] || 30_000) / 1000.0
      # At least 75 ms before the grace's end, though: at a sale's scale a thread late on
      # a loaded machine would otherwise meet the SIGKILL before its job is back.
      timeout ||= [TIMEOUT_SHARE * grace, grace - 0.075].min.clamp(0, nil)
      where, keys = hello["redis"], hello["keys"]
      url = "redis://#{where["addr"]}/#{where["db"] || 0}"
      namespace = "#{keys["queue"]}:sidekiq"
      # A connect waits 1 s, a reply 2 s: inside the protocol's 15 s.
      redis = {url: url, namespace: namespace, size: 2, connect_timeout: 1, read_timeout: 2, write_timeout: 2,
               username: where["username"], password: where["password"]}.compact
      Sidekiq.configure_client { |c| c.redis = redis }
      Sidekiq.logger = Sidekiq::Logger.new($stderr) # stdout is the protocol's
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
      lock = Mutex.new
      stopping, untrap = shutdown(fetch, held, lock, timeout)
      Protocol.ready(%w[queue ack], DOCUMENTED, again: true)
      another = Protocol.serve(-> { lock.synchronize { exit!(0) if stopping.call && held.empty? } },
                               on_bye: -> { untrap.call; clean }) do |req|
        case req["op"]
        when "enqueue"
          Sidekiq::Client.push("class" => "Fulfil", "queue" => QUEUE, "args" => [req["order"], req["seq"]])
          {ok: true}
        when "dequeue"
          next {empty: true} if stopping.call # quiet: a process shutting down fetches no more
          work = take(fetch, req["wait_ms"] / 1000.0)
          next {empty: true} unless work
          job = JSON.parse(work.job)
          lock.synchronize { held[job["jid"]] = work }
          {order: job["args"][0], seq: job["args"][1], task: job["jid"]}
        when "ack"
          lock.synchronize { held.delete(req["task"]).acknowledge }
          {ok: true}
        when "len"
          {len: Sidekiq.redis { |c| c.llen("queue:#{QUEUE}") }}
        else
          {error: "unknown op #{req["op"]}"}
        end
      end
      # stdin closed: the sale is over, and the process; leave nothing of Sidekiq's behind.
      clean unless another
      another
    end

    # clean deletes the sale's keys (its namespace's) and closes its clients.
    def clean
      Sidekiq.redis { |c| c.scan_each(match: "*").each_slice(1000) { |ks| c.del(*ks) } }
      Sidekiq.redis_pool.shutdown(&:close)
    end

    # shutdown traps SIGTERM as Sidekiq's CLI does (a self-pipe: a trap may not lock) and
    # stops as its Launcher does: at once when idle, else once the job is acknowledged
    # (the serve loop exits after answering that ack), or at the timeout with the job
    # pushed back. It returns whether a stop was asked, and what undoes the trap at the
    # sale's end (its thread then ends).
    def shutdown(fetch, held, lock, timeout)
      reader, writer = IO.pipe
      asked = false
      trap("TERM") { writer.write_nonblock("T", exception: false) }
      Thread.new do
        next unless reader.read(1) # the sale ended: the pipe closed, no signal came
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
        lock.synchronize do
          asked = true
          exit!(0) if held.empty?
        end
        sleep(0.005) until Process.clock_gettime(Process::CLOCK_MONOTONIC) >= deadline
        lock.synchronize do
          fetch.bulk_requeue(held.values, nil) # Manager#hard_shutdown
          exit!(0)
        end
      end
      [-> { asked }, lambda {
        trap("TERM", "DEFAULT")
        writer.close
      }]
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
