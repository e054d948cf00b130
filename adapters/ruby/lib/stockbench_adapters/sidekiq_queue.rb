# frozen_string_literal: true

# Sidekiq (Debian's ruby-sidekiq 6.4) behind the adapter protocol (adapters/PROTOCOL.md):
# orders are pushed with Sidekiq::Client.push, as an application enqueues a job, and each
# process runs Sidekiq's own Manager with one Processor (concurrency 1), which fetches
# with BasicFetch (BRPOP of the queue's list, 2 s at a time, the job then held only in
# the process) and performs the job: its perform hands the job to the harness's next
# dequeue of this process and returns once the harness acknowledges it, so the
# harness's worker does the job's work, as a job's own code would.
#
# What Sidekiq promises: BasicFetch is at most once. A job is off Redis once fetched; a
# process sent SIGTERM stops as Sidekiq's CLI and Launcher stop it (Manager#quiet, then
# Manager#stop with the deadline of its shutdown timeout -t, in whole seconds, polled
# every 0.5 s), and Manager#hard_shutdown puts a job still running back (bulk_requeue);
# one killed with SIGKILL, or out of memory, loses it: reliable fetch is Sidekiq Pro's
# (super_fetch). So a worker killed mid-job loses exactly its job; one killed after the
# job, before the ack, loses nothing; a paused one finishes it.
#
# Every key is put under the sale's hash tag (redis-namespace, which Sidekiq 6 still
# takes), and deleted by the process when its sale ends. A process serves sale after sale
# (protocol 3), each with a client pool and a Manager of its own.
require "sidekiq"
require "sidekiq/fetch"
require "sidekiq/manager"
require "redis-namespace"
require_relative "protocol"

module StockbenchAdapters
  module SidekiqQueue
    DOCUMENTED = {"none" => ["SAFE"], "worker-crash" => ["LOST"], "reclaimers" => ["LOST"], "worker-crash-late" => ["SAFE"],
                  "worker-pause" => ["SAFE"], "worker-term" => ["SAFE"], "step-term" => ["NOT-EXERCISED"],
                  "redis-restart" => ["LOST"], "evict-lease" => ["NOT-EXERCISED"],
                  "evict-job" => ["NOT-EXERCISED"], "consumer-churn" => ["NOT-EXERCISED"]}.freeze
    QUEUE = "sale"
    # Sidekiq's shutdown timeout's share of a deploy's grace: 25 s (its default -t) of
    # Kubernetes' 30.
    TIMEOUT_SHARE = 25.0 / 30

    module_function

    # main serves sale after sale (protocol 3), each from its hello to its bye.
    def main
      timeout = ARGV.include?("--timeout") ? Integer(ARGV[ARGV.index("--timeout") + 1]) : nil
      while (hello = Protocol.hello)
        return 0 unless sale(hello, timeout)
      end
      0
    end

    # shutdown_timeout is -t for a deploy's grace: its share of it, in whole seconds as
    # Sidekiq's CLI takes it (Integer, at least 1), unless given.
    def shutdown_timeout(grace, timeout)
      timeout || [(TIMEOUT_SHARE * grace).floor, 1].max
    end

    # documented is what the sale earns: with a grace shorter than -t, SIGKILL may come
    # before hard_shutdown puts the job back (Sidekiq's deploy docs ask for more).
    def documented(grace, timeout)
      return DOCUMENTED if grace >= timeout
      DOCUMENTED.merge("worker-term" => %w[SAFE LOST])
    end

    # sale serves one sale, with a client pool and a Manager of its own; it returns
    # whether bye ended it (another follows).
    def sale(hello, timeout)
      grace = (hello["term_grace_ms"] || 30_000) / 1000.0
      timeout = shutdown_timeout(grace, timeout)
      where, keys = hello["redis"], hello["keys"]
      url = "redis://#{where["addr"]}/#{where["db"] || 0}"
      namespace = "#{keys["queue"]}:sidekiq"
      # A connect waits 1 s, a reply 2 s past a command's own (BRPOP's 2 s): inside the
      # protocol's 15 s. Three connections: the Processor's fetch, a push, a len.
      redis = {url: url, namespace: namespace, size: 3, connect_timeout: 1, read_timeout: 2, write_timeout: 2,
               username: where["username"], password: where["password"]}.compact
      if (sentinel = where["sentinel"])
        # redis-rb's own Sentinel client, as its README configures it (Sidekiq hands its
        # redis hash to redis-rb, unknown keys and all, says its wiki's Using Redis):
        # the master's name as the URL's host, the sentinels beside it.
        redis[:url] = "redis://#{sentinel["master"]}/#{where["db"] || 0}"
        redis[:sentinels] = sentinel["addrs"].map do |a|
          host, port = a.split(":")
          {host: host, port: port.to_i}
        end
        redis[:role] = :master
      end
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
      options = Sidekiq.options.merge(queues: [QUEUE], strict: true, concurrency: 1, timeout: timeout)
      options[:fetch] = Sidekiq::BasicFetch.new(options)
      handoff = Handoff.new
      Fulfil.handoff = handoff
      manager = Sidekiq::Manager.new(options)
      stopping, untrap = shutdown(manager, options)
      Protocol.ready(%w[queue ack sentinel], documented(grace, timeout), again: true)
      manager.start
      another = Protocol.serve(nil, on_bye: -> { untrap.call; halt(manager); clean(redis) }) do |req|
        case req["op"]
        when "enqueue"
          Sidekiq::Client.push("class" => Fulfil.name, "queue" => QUEUE, "args" => [req["order"], req["seq"]])
          {ok: true}
        when "dequeue"
          next {empty: true} if stopping.call # quiet: its Processor takes no more
          order, seq, jid = handoff.take(req["wait_ms"] / 1000.0)
          next {empty: true} unless jid
          {order: order, seq: seq, task: jid}
        when "ack"
          handoff.ack(req["task"])
          {ok: true}
        when "len"
          {len: Sidekiq.redis { |c| c.llen("queue:#{QUEUE}") }}
        else
          {error: "unknown op #{req["op"]}"}
        end
      end
      # stdin closed: the sale is over, and the process; leave nothing of Sidekiq's behind.
      unless another
        halt(manager)
        clean(redis)
      end
      another
    end

    # halt stops the sale's Manager at once at its end: the Processors are told to stop
    # and killed (a fetch in flight gives up; the sale's keys go next).
    def halt(manager)
      manager.quiet
      manager.workers.dup.each { |p| p.kill(true) }
    end

    # clean closes the sale's clients and deletes its keys (its namespace's), on a
    # connection of its own: a fetch halt interrupted may have left its reply unread.
    def clean(redis)
      Sidekiq.redis_pool.shutdown(&:close)
      conn = Redis.new(**redis.except(:namespace, :size))
      ns = Redis::Namespace.new(redis[:namespace], redis: conn)
      ns.scan_each(match: "*").each_slice(1000) { |ks| ns.del(*ks) }
    ensure
      conn&.close
    end

    # shutdown traps SIGTERM as Sidekiq's CLI does (a self-pipe: a trap may not lock) and
    # stops as its Launcher#stop does: Manager#stop with the deadline -t seconds away,
    # which returns once the Processor is done (its job acknowledged) or, at the
    # deadline, puts the job back and kills it (hard_shutdown); the process then exits,
    # as the CLI does. It returns whether a stop was asked, and what undoes the trap at
    # the sale's end (its thread then ends).
    def shutdown(manager, options)
      reader, writer = IO.pipe
      asked = false
      trap("TERM") { writer.write_nonblock("T", exception: false) }
      Thread.new do
        next unless reader.read(1) # the sale ended: the pipe closed, no signal came
        asked = true
        manager.stop(::Process.clock_gettime(::Process::CLOCK_MONOTONIC) + options[:timeout])
        exit!(0)
      end
      [-> { asked }, lambda {
        trap("TERM", "DEFAULT")
        writer.close
      }]
    end

    # Handoff passes a job from the Processor performing it to the harness's dequeue, and
    # the harness's ack back: a job's perform is the harness's worker doing its work.
    class Handoff
      def initialize
        @lock = Mutex.new
        @changed = ConditionVariable.new
        @offered = []
        @acked = {}
      end

      # perform offers the job and waits for its ack (a hard_shutdown's kill ends the wait).
      def perform(order, seq, jid)
        @lock.synchronize do
          @offered << [order, seq, jid]
          @changed.broadcast
          @changed.wait(@lock) until @acked.delete(jid)
        end
      end

      # take is the job offered, waiting up to wait seconds for one; nil if none came.
      def take(wait)
        deadline = ::Process.clock_gettime(::Process::CLOCK_MONOTONIC) + wait
        @lock.synchronize do
          while @offered.empty?
            left = deadline - ::Process.clock_gettime(::Process::CLOCK_MONOTONIC)
            return nil if left <= 0
            @changed.wait(@lock, left)
          end
          @offered.shift
        end
      end

      def ack(jid)
        @lock.synchronize do
          @acked[jid] = true
          @changed.broadcast
        end
      end
    end

    # Fulfil is the sale's job: its perform is the harness's work on the order.
    class Fulfil
      include Sidekiq::Worker

      class << self
        attr_accessor :handoff
      end

      def perform(order, seq)
        Fulfil.handoff.perform(order, seq, jid)
      end
    end
  end
end
