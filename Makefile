# The README's two commands. Everything else is plain CMake + CTest.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

DEB_PACKAGES := build-essential cmake pkg-config openssl libssl-dev libboost1.81-dev \
  libboost-system1.81-dev libsodium-dev libcrypto++-dev libsecp256k1-dev librocksdb-dev \
  libngtcp2-dev libngtcp2-crypto-gnutls-dev libgnutls28-dev libgtest-dev libgmock-dev \
  libbenchmark-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libtoml11-dev libjemalloc-dev
# The peers `make bench` compares cbqsd with (bench/peers/), and their client libraries.
PEER_PACKAGES := redis-server nats-server rabbitmq-server libhiredis-dev libnats-dev librabbitmq-dev etcd-server

.PHONY: deps js-deps build run test fuzz bench bench-js chat cip11d-dev cip11-demo transitd-dev clean

deps:
	@scripts/install-deps.sh $(DEB_PACKAGES)

# Node.js, Chromium and the JavaScript client's npm lockfile (clients/js).
js-deps:
	@scripts/install-js-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/cbqsd --dev

test: build js-deps
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The chat room of the JavaScript client, on the cbqsd --dev that `make run` started.
chat: js-deps
	cd clients/js && npm run --silent build && node demo/server.mjs --dev $(CURDIR)/cbqsd-dev

# Appends/s and latency from Node against the C++ SDK, alternated on one broker.
bench-js: build js-deps
	bench/js_client.sh $(BUILD)/bin 5

# The CIP-11 validator's embedded default: an in-process devchain, dev keys and runners.
cip11d-dev: build
	$(BUILD)/bin/cip11d --dev

# cip11d --dev and its runners: push delivery next to the 1 s poll fallback (docs/cip11.md).
cip11-demo: build
	$(BUILD)/bin/cip11_demo --jobs 5

# The Transit node's embedded default: realm "dev" in ./transitd-dev, HTTP on 127.0.0.1:7550.
transitd-dev: build
	$(BUILD)/bin/transitd --dev

fuzz: deps
	@scripts/run-fuzz.sh $(or $(SECONDS_PER_TARGET),60)

bench: deps js-deps
	@scripts/install-deps.sh $(PEER_PACKAGES)
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)
	$(BUILD)/bin/cbqs_codec_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
	$(BUILD)/bin/devchain_snapshot_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
	$(BUILD)/bin/admission_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
	for p in 1 4 16; do for n in 256 1024; do \
	  $(BUILD)/bin/cbqs_broker_bench --producers $$p --payload $$n --seconds 5 --runs 3 | tail -1; done; done
	$(BUILD)/bin/cbqs_broker_bench --producers 16 --payload 256 --rate 75000 --seconds 5 --runs 3 | tail -1
	$(BUILD)/bin/cbqs_broker_bench --producers 1 --rate 1000 --subscriber --seconds 5 --runs 3 | tail -1
	for k in 1 2 8; do $(BUILD)/bin/cbqs_group_bench --consumers $$k --records 100000 --runs 3 | tail -1; done
	for n in 50 2000; do $(BUILD)/bin/cbqs_group_bench --redelivery --records $$n --visibility-ms 500 --runs 3 | tail -1; done
	for n in 1000 2500 5000; do $(BUILD)/bin/cip11_quic_bench --runners $$n --hold-seconds 30 --runs 3 | tail -1; done
	$(BUILD)/bin/cip11_devchain_bench --blocks 60 --runs 3 | tail -1
	$(BUILD)/bin/cip11_push_bench --runners 1000 --jobs 200 --runs 3 | tail -12
	$(BUILD)/bin/cbqs_peer_bench --runs 3 --seconds 5 --records 200000 --out bench/results
	$(BUILD)/bin/transit_bench --clients 1,16,64 --ops 20000 --runs 3
	$(BUILD)/bin/transit_state_bench --workers 1,16 --ops 20000 --runs 3 --sizes 1000,100000,1000000
	$(BUILD)/bin/transit_delivery_bench --routes 8 --outputs 2000 --backlog 4000 --runs 3 | tail -1
	$(BUILD)/bin/transit_delivery_bench --routes 1 --outputs 500 --backlog 4000 --runs 3 | tail -1
	$(BUILD)/bin/transit_history_bench --workers 4 --turns 20000 --chunks 10 --runs 3
	bench/js_client.sh $(BUILD)/bin 5 | tail -1

clean:
	rm -rf $(BUILD) build-fuzz
