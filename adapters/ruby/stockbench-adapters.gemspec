# frozen_string_literal: true

# The Ruby adapters as RubyGems installs them: gem build stockbench-adapters.gemspec &&
# gem install stockbench-adapters-*.gem gives the command stockbench-sidekiq-queue, one
# adapter process (--queue-exec).
Gem::Specification.new do |s|
  s.name = "stockbench-adapters"
  s.version = "0.2.0"
  s.summary = "Sidekiq behind stockbench's adapter protocol"
  s.license = "MIT"
  s.authors = ["stockbench"]
  s.files = Dir["lib/**/*.rb", "bin/*"]
  s.bindir = "bin"
  s.executables = ["stockbench-sidekiq-queue"]
  s.required_ruby_version = ">= 2.7"
  s.add_dependency "sidekiq", ">= 6.4", "< 7" # 7 drops redis-namespace
  s.add_dependency "redis-namespace", "~> 1.9"
  # What the verdicts in adapters/PROTOCOL.md were measured with: Debian 12's packages.
  s.metadata = {"stockbench.tested-with.sidekiq" => "6.4.1", "stockbench.tested-with.redis" => "4.8.0"}
end
