# stockbench: `make bench` runs the default matrix, `make test` the tests. Both set up what
# they need: a Redis image for the Docker engine (built locally when none can be pulled),
# or redis-server for the process target.

GO      ?= go
BIN     := bin/stockbench
ARGS    ?=
# Ryuk, testcontainers' reaper, needs an image from a registry; the harness removes its
# own containers instead.
export TESTCONTAINERS_RYUK_DISABLED ?= true

# The image the Docker engine has or can get, printed by scripts/redis-image.sh; empty
# when no engine answers (the harness then runs redis-server as a process).
REDIS_ENV = img=$$(scripts/redis-image.sh) && export STOCKBENCH_REDIS_IMAGE=$${img:-$${STOCKBENCH_REDIS_IMAGE:-redis:7}}

.PHONY: analyses docs test-long build bench bench-explore power bench-infra bench-distributed bench-swarm image runtimes-image run test test-race vet fmt-check redis-image redis-server chromium prometheus ci-tools adapters go-adapters gate baseline guarantees perf report fuzz chaos clean clean-containers

# How long make fuzz runs each fuzz target.
FUZZTIME ?= 30s
# Every fuzz target, as package:function. Their seed corpora run in make test.
FUZZ_TARGETS := faults:FuzzParse scenarios:FuzzParseThink scenarios:FuzzSaleSettings \
	internal/servers:FuzzRedisURL results:FuzzDecode results/gate:FuzzGateRules results/gate:FuzzThreshold \
	internal/designs/designfile:FuzzDecode cmd/stockbench:FuzzRunFlags

build:
	$(GO) build -o $(BIN) ./cmd/stockbench

# The designs the headline sale (200,000 buyers with a pause rate) compares; default:
# those a reader compares first (scenarios.Headline).
HEADLINE ?= default

# How many times each sale with no fault runs in make bench, for the spread of its speed
# that the gate's soft rules test (docs/ci.md); the first run is the record.
REPEAT ?= 5

## bench: run every lock and queue through the default scenarios and faults, then the
## headline sale; pass more flags with ARGS="..."
bench: build
	@$(REDIS_ENV) && ./$(BIN) matrix --headline $(HEADLINE) --repeat $(REPEAT) $(ARGS)

## bench-explore: one exploration timed on two builds in one job: BASE (a git ref, required)
## built from git and this checkout as it is, each of SEEDS explored by both for BUDGET,
## back to back in an order that alternates seed by seed; prints both builds' draws,
## regions, regions measured and sales a minute with the machine's idle CPU, and the
## change's ratios to the base (EXPLORE: the exploration's own arguments)
SEEDS ?= 1 2 3
BUDGET ?= 3m
EXPLORE ?= --lock set-nx-ex --lock token
bench-explore: redis-server
	@$(GO) build -o bin/bench-explore ./internal/tools/benchexplore
	@$(REDIS_ENV) && ./bin/bench-explore -base "$(BASE)" -seeds "$(SEEDS)" -budget "$(BUDGET)" -args "$(EXPLORE)"

## power: the explorer's power as rates on this machine: the redsync v4.12.0/v4.12.1 pair (10
## minutes each), set-nx-ex against token (3) and set-nx-ex against itself (3), each explored
## with POWER_SEEDS seeds, and the share told apart against its target (4 of 5, 5 of 5, 0 of
## 5), with each run's draws, faults struck and regions measured: about 80 minutes, too long
## for CI (POWER_PAIRS=set-nx-ex-token,aa: half an hour)
POWER_SEEDS ?= 5
POWER_PAIRS ?= redsync,set-nx-ex-token,aa
power: build redis-server
	@$(GO) build -o bin/power ./internal/tools/power
	@$(REDIS_ENV) && ./bin/power -seeds "$(POWER_SEEDS)" -pairs "$(POWER_PAIRS)"

## bench-infra: the real-infrastructure matrix: a Sentinel group of containers (master killed;
## master cut off from its peers, a split brain) and restarts in each persistence mode; a 5s
## TTL, so that a lock a restart or failover kept has not expired by the time it is back
INFRA_LOCKS ?= lua,token,token-wait,fencing,redislock
INFRA_QUEUES ?= list,reliable-list,stream,asynq
bench-infra: build
	@$(REDIS_ENV) && ./$(BIN) matrix --infra --redis container --ttl 5s --locks $(INFRA_LOCKS) --queues $(INFRA_QUEUES) $(ARGS)

## bench-distributed: a sharded sale as a Kubernetes Indexed Job runs it, here: SHARDS (4)
## containers of the stockbench image on a private network against a Redis container, merged,
## beside the same sale in one process, for LOCKS (lua,seed-setnx); BUYERS and STOCK to size it
bench-distributed:
	@scripts/bench-distributed.sh

## bench-swarm: the sharded sale on a real orchestrator, Docker Swarm on this engine (a single-node
## swarm made and left when it is in none): Redis as a service, the shards as a replicated job on
## an overlay network, the merge as a second job, beside the one-process run; KILL_SHARD=i loses
## shard i mid-sale and reruns the sale under the same run id; SHARDS and RUN_ID from
## deploy/sale/sale.env, LOCKS, QUEUES, FAULT, BUYERS, STOCK, RATE to size it
bench-swarm:
	@scripts/bench-swarm.sh

## image: the stockbench image (the static binary FROM scratch) that deploy/k8s runs
image:
	@scripts/stockbench-image.sh

## runtimes-image: the stockbench image that runs every route with nothing installed on the
## host (docker run --rm -v "$$PWD:/work" stockbench/stockbench:runtimes check): Debian 12
## from debootstrap, redis-server and every shipped adapter's runtime (deploy/runtimes)
runtimes-image:
	@scripts/runtimes-image.sh

## run: one scenario, e.g. make run ARGS="--lock set-nx-ex --buyers 200000 --stock 500"
run: build
	@$(REDIS_ENV) && ./$(BIN) run $(ARGS)

## gate: run the default matrix and hold it to the committed baseline (classes, rates;
## speed only when it was recorded on this kind of machine); with BASE=REF (as
## BASE=origin/main), also time this build against REF, built here, in PAIRS pairs of
## trials run one right after the other, counting Redis's commands per sale as well (one
## more round trip per purchase fails it); exit 1 with one line per regression. The rules
## live in baseline/gate.json. BASE is origin/main by default where the checkout has it
## and this tree is another (a branch, or changes not committed); BASE= times nothing.
BASE  ?= $(shell git rev-parse -q --verify origin/main >/dev/null 2>&1 && \
	{ [ "$$(git rev-parse origin/main)" != "$$(git rev-parse HEAD)" ] || [ -n "$$(git status --porcelain --untracked-files=no)" ]; } && echo origin/main)
PAIRS ?= 6
gate: bench
	@$(REDIS_ENV) && ./$(BIN) gate --baseline baseline/results.json --rules baseline/gate.json $(if $(BASE),--base $(BASE) --pairs $(PAIRS))

## baseline: make the newest run (make bench) the baseline that make gate compares with;
## its headline sales, whose classes are races, are rerun 10 times first, and the gate
## then admits the harm their reruns earned (docs/ci.md)
baseline: build redis-server
	@run=$$(ls -d results/runs/2*/ 2>/dev/null | sort | tail -1); \
	[ -n "$$run" ] || { echo "baseline: no run under results/runs: make bench first" >&2; exit 2; }; \
	if grep -q '"scenario": "headline"' "$$run/results.json"; then \
		reruns=$$(mktemp -d) && $(REDIS_ENV) && ./$(BIN) replay "$$run" --only headline/ --times 10 --out "$$reruns"; \
		code=$$?; rm -rf "$$reruns"; [ $$code = 0 ] || exit $$code; fi; \
	./$(BIN) baseline --from "$$run" --to baseline/results.json

## guarantees: the delivery guarantee sheet of every built-in queue design and shipped queue
## adapter under every queue fault, a deploy's SIGTERM (as a task starts, or at a step of
## the library's own worker loop) included, from a fresh run into
## docs/guarantees.md (the run's report stays under results/runs)
GUARANTEE_QUEUES ?= seed-zset,zpopmin,list,reliable-list,stream,asynq,rq,rq-loop,celery,sidekiq,seed-queue
GUARANTEE_FAULTS ?= none,worker-crash,worker-crash-late,worker-pause,reclaimers,worker-term,step-term,evict-lease,evict-job,consumer-churn,redis-restart
guarantees: build adapters
	@$(REDIS_ENV) && ./$(BIN) matrix --locks "" \
		--queue-exec "rq=/usr/bin/python3 adapters/python/rq_queue.py" \
		--queue-exec "rq-loop=/usr/bin/python3 adapters/python/rq_queue.py --worker-loop" \
		--queue-exec "celery=/usr/bin/python3 adapters/python/celery_queue.py" \
		--queue-exec "sidekiq=ruby adapters/ruby/bin/stockbench-sidekiq-queue" \
		--queue-exec "seed-queue=php adapters/php/seed-queue.php" \
		--queues $(GUARANTEE_QUEUES) --queue-faults $(GUARANTEE_FAULTS) $(ARGS) && \
	run=$$(ls -d results/runs/2*/ | sort | tail -1) && ./$(BIN) guarantees --out docs/guarantees.md "$$run"

## analyses: each library of docs/analyses/claims measured against what its own docs claim,
## one after another, into docs/analyses (its page, LIBRARY.md, and the summary, README.md):
## every fault over 20 draws, each finding shrunk and rerun, a minute's exploration; long
## (about an hour and a half on 2 CPUs), not in make test. One library: make analyses LIBS=redsync
LIBS ?= $(basename $(notdir $(wildcard docs/analyses/claims/*.json)))
analyses: build adapters
	@$(REDIS_ENV) && for lib in $(LIBS); do ./$(BIN) analyse docs/analyses/claims/$$lib.json --pages docs/analyses $(ARGS) || exit $$?; done

## perf: the driver's sales/s beside redis-benchmark running the same script, a purchase of
## none, lua and token at 200 buyers a second beside its own commands' round trips (by
## redis-benchmark, and at the sale's pace), each shipped lock adapter beside its Go
## counterpart (their runtimes installed as make test does), and the peak RSS of 200,000 and of 1,000,000 buyers waiting on a lock, measured in one run
perf: build redis-server adapters
	@$(REDIS_ENV) && ./$(BIN) perf $(ARGS)

## docs: regenerate what the README, docs/ and the command's doc comment take from the
## registries (designs, faults, commands) and from baseline/results.json, and the copy of
## adapters/go built into the command (bench/catalog/goadapters.txtar), and the pages of
## docs/analyses from their records and claims (nothing measured); the tests fail when
## one of them was edited by hand or its source changed without this
docs:
	$(GO) test -count=1 -run '^TestGenerated$$' ./bench/docs -update
	$(GO) test -count=1 -run '^TestShippedAdapters$$' ./bench/catalog -update
	$(GO) run ./cmd/stockbench analyse --render docs/analyses

## report: rebuild a run's report, or compare runs: make report ARGS="results/runs/A results/runs/B"
report: build
	./$(BIN) report $(ARGS)

# The tests come in three suites, each its own target; CI runs all three.
#
# make test is the contributor's loop: every package's tests, without the race
# detector, each server a redis-server process (started in milliseconds, where a
# container takes a second or two; the container target's own tests still ask for
# one), three packages at once. make test-race runs the same tests with the race
# detector, each server where a user's would be (a container when a Docker engine
# answers), the command the end-to-end tests run built raced from the same build, so
# that nothing is compiled twice. make test-long runs the long suite, raced: the tests
# of the *_long_test.go files (build tag long), which scripts/long-tests.sh names. The
# raced suites run one package at a time (TEST_P=1, TEST_ALONE=1, see
# scripts/test-suite.sh): raced, two packages' sales at once ran so slow that buyers gave
# up on units a safe design had left them (UNSOLD), and a speed test saw list's own rate
# halve between two of its runs. The command's long tests took 34 minutes alone on a
# 2-CPU machine: each long test binary may run 45.
#
# Each suite compiles its test binaries before any test runs, so that a sale's
# timing-bound verdict never shares the CPUs with the compiler, and runs them without go
# test, so that nothing is linked twice (scripts/test-suite.sh, scripts/run-tests.sh).
# make test vets every package in that same compile (go test -vet=all -c: go vet's
# checks, in one build graph with the compile, 10 s less than go vet before it from an
# empty build cache). The binaries stay in bin/test between runs, so that an unchanged
# package is not linked again. What only the long suite's tests import (the Kubernetes
# API types and kustomize, chromedp, actionlint) is compiled by the long suite alone: a
# minute and a half of make test from an empty build cache.

## test: gofmt, vet, the generated docs, and every package's tests against a real Redis
## (redis-server processes) with small sales (README: how long it takes here)
test: redis-server adapters ci-tools fmt-check
	@$(REDIS_ENV) && STOCKBENCH_REDIS=process TEST_P=3 TEST_VET=all scripts/test-suite.sh "" "" ./...

## test-race: make test's tests with the race detector, each server where a user's would
## be (a container when a Docker engine answers)
test-race: redis-server adapters ci-tools
	@$(REDIS_ENV) && TEST_ALONE=1 TEST_P=1 scripts/test-suite.sh -race "" ./...

## test-long: the long suite (the *_long_test.go files), raced: the swarm, the track
## record, the report and the live dashboard in a headless browser with Prometheus
## scraping it, the shipped adapters' libraries at length, the documented verdicts make
## test leaves out and those under the faults on servers and the network, the CI
## templates linted and run, the Kubernetes manifests decoded by the API's own types
test-long: redis-server chromium prometheus adapters ci-tools
	@set -e; tests=$$(scripts/long-tests.sh); pkgs=$$(echo "$$tests" | tail -n +2); \
	GOFLAGS=-trimpath $(GO) vet -tags long $$pkgs; (cd adapters/go && $(GO) vet ./...); \
	$(REDIS_ENV) && TEST_ALONE=1 TEST_P=1 TEST_TIMEOUT=45m scripts/test-suite.sh "-race -tags long" "$$(echo "$$tests" | head -1)" $$pkgs

## fuzz: run each fuzz target for FUZZTIME (default 30s): fault plans, think times, sale
## settings, command lines, Redis URLs, results.json and gate rules
fuzz: redis-server
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz: $$fn in ./$$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) ./$$pkg; done

## chaos: the reliability check alone: signals during set-up, sale and report, Redis
## killed under closed, open and queue sales (make test runs it too)
chaos: redis-server
	@$(REDIS_ENV) && $(GO) test -tags long -count=1 -run 'TestSignal|TestRedisKilled|TestInterrupt' -v ./cmd/stockbench

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

## redis-image: make sure the Docker engine has a Redis image (pull, or build from Debian's)
redis-image:
	@scripts/redis-image.sh

## chromium: make sure a Chromium is here for the browser tests (the report, the live page), if it can be
chromium:
	@scripts/ensure-chromium.sh

## prometheus: make sure Prometheus is here for the live metrics' test, if it can be
prometheus:
	@scripts/ensure-prometheus.sh

## ci-tools: make sure what the CI output's tests read it with is here, if it can be: Debian's
## python3-junitparser (the JUnit files, --junit) and shellcheck (actionlint runs it on the
## workflow templates' scripts)
ci-tools:
	@/usr/bin/python3 -c 'import junitparser' 2>/dev/null || scripts/ensure-tool.sh python3-junitparser "the JUnit files' tests"
	@scripts/ensure-tool.sh shellcheck "the workflow templates' lint" shellcheck

## adapters: make sure the shipped adapters' runtimes are here (PHP with phpredis; Python with redis-py,
## RQ and Celery; Ruby with Sidekiq; Node.js with node-redis)
adapters:
	@scripts/ensure-adapters.sh

## go-adapters: build the Go process adapters (adapters/go, a module of its own, so that
## the libraries they run are at the versions its go.mod names, not stockbench's: redsync,
## bsm/redislock, rueidislock) into bin/adapters (--lock-go builds any version itself); REDSYNC=v4.x.y builds redsync-lock at that version too, as
## bin/adapters/redsync-lock-v4.x.y, for two versions side by side (with its
## --setnx-on-extend when the release has WithSetNXOnExtend)
go-adapters:
	cd adapters/go && CGO_ENABLED=0 $(GO) build -o $(CURDIR)/bin/adapters/ ./...
	@if [ -n "$(REDSYNC)" ]; then tmp=$$(mktemp -d) && cp -r adapters/go/. $$tmp && \
		(cd $$tmp && $(GO) get github.com/go-redsync/redsync/v4@$(REDSYNC) && \
		tags=$$(grep -qs WithSetNXOnExtend "$$($(GO) list -m -f '{{.Dir}}' github.com/go-redsync/redsync/v4)/redsync.go" && echo setnx); \
		CGO_ENABLED=0 $(GO) build -tags "$$tags" -o $(CURDIR)/bin/adapters/redsync-lock-$(REDSYNC) ./redsync-lock); \
		code=$$?; rm -rf $$tmp; exit $$code; fi

## redis-server: make sure redis-server is on PATH (Debian's package when apt-get is here)
redis-server:
	@scripts/ensure-redis-server.sh

clean:
	rm -rf bin

## clean-containers: remove every container a stockbench run started, running or not
clean-containers:
	@ids=$$(docker ps -aq --filter label=org.stockbench=true); [ -z "$$ids" ] || docker rm -f $$ids
