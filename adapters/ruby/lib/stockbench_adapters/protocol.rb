# frozen_string_literal: true

# What the Ruby adapters share: the protocol's lines and its hello (adapters/PROTOCOL.md,
# version 3 for an adapter that serves sale after sale, else 2).
require "json"

module StockbenchAdapters
  module Protocol
    module_function

    def say(message)
      $stdout.write(JSON.generate(message) + "\n")
      $stdout.flush
    end

    # hello reads the sale's first line; it exits, saying why, on one it cannot take. It
    # returns nil once stdin ended after a bye: no next sale.
    def hello
      line = $stdin.gets
      return nil if line.nil? && @again
      first = JSON.parse(line || "null")
      unless first.is_a?(Hash) && first["op"] == "hello" && (first["versions"] || []).include?(2)
        say(ok: false, error: "want hello, protocol 2")
        exit 1
      end
      @versions = first["versions"]
      @again = false
      first
    end

    # ready answers hello: what the adapter supports and documents (for an idempotent
    # fulfil too, when that differs). again: the adapter serves another sale after bye
    # (protocol 3), when the harness speaks it.
    def ready(supports, documented, idempotent = nil, again: false)
      @again = again && @versions.include?(3)
      said = {ok: true, protocol: @again ? 3 : 2, supports: supports, documented: documented}
      said[:documented_idempotent] = idempotent if idempotent
      say(said)
    end

    # serve answers each request with the block's reply, or the error it raised; after
    # each answer it calls after, when given (a process shutting down exits there). Under
    # protocol 3 a bye ends the sale: on_bye undoes its set-up before the answer, and
    # serve returns true (another sale follows); it returns false once stdin ends.
    def serve(after = nil, on_bye: nil)
      while (line = $stdin.gets)
        req = JSON.parse(line)
        if @again && req["op"] == "bye"
          on_bye&.call
          say(id: req["id"], ok: true)
          return true
        end
        begin
          say({id: req["id"]}.merge(yield(req)))
        rescue StandardError => e
          say(id: req["id"], error: "#{e.class}: #{e.message}")
        end
        after&.call
      end
      false
    end
  end
end
