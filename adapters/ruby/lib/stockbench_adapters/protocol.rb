# frozen_string_literal: true

# What the Ruby adapters share: the protocol's lines and its hello (adapters/PROTOCOL.md,
# version 2).
require "json"

module StockbenchAdapters
  module Protocol
    module_function

    def say(message)
      $stdout.write(JSON.generate(message) + "\n")
      $stdout.flush
    end

    # hello reads the first line; it exits, saying why, on one it cannot take.
    def hello
      first = JSON.parse($stdin.gets || "null")
      unless first.is_a?(Hash) && first["op"] == "hello" && (first["versions"] || []).include?(2)
        say(ok: false, error: "want hello, protocol 2")
        exit 1
      end
      first
    end

    # ready answers hello: what the adapter supports and documents (for an idempotent
    # fulfil too, when that differs).
    def ready(supports, documented, idempotent = nil)
      said = {ok: true, protocol: 2, supports: supports, documented: documented}
      said[:documented_idempotent] = idempotent if idempotent
      say(said)
    end

    # serve answers each request with the block's reply, or the error it raised; after
    # each answer it calls after, when given (a process shutting down exits there).
    def serve(after = nil)
      while (line = $stdin.gets)
        req = JSON.parse(line)
        begin
          say({id: req["id"]}.merge(yield(req)))
        rescue StandardError => e
          say(id: req["id"], error: "#{e.class}: #{e.message}")
        end
        after&.call
      end
    end
  end
end
