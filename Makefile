# Loom: the two commands a newcomer needs are `make demo` and `make check`.
# Both install what is missing (Debian packages, a Python venv with lit) and
# build first; running them again does nothing that is already done.

LLVM_PREFIX ?= /usr/lib/llvm-22
VENV        := .venv
LIT_VERSION := 23.1.5
CARGO       ?= cargo
PROFILE     ?= dev
BIN         := target/$(if $(filter dev,$(PROFILE)),debug,$(PROFILE))

# Debian 12 packages: LLVM/MLIR 22 (static C API libraries, mlir-tblgen,
# FileCheck), what MLIR links against, and libclang for mlir-sys' bindgen.
DEB_PACKAGES := libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools \
                libpolly-22-dev libclang-dev libzstd-dev libz3-dev libxml2-dev \
                zlib1g-dev g++ python3-venv diffutils

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build demo check test-unit test-lit lint bench fuzz fuzz-artifacts clean

all: build

deps: $(VENV)/.lit-$(LIT_VERSION)
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(VENV)/.lit-$(LIT_VERSION):
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check lit==$(LIT_VERSION)
	touch $@

build: deps
	$(CARGO) build --profile $(PROFILE) --bins

demo: build
	@LOOM_BIN=$(BIN) ./scripts/demo.sh

check: build
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --profile $(PROFILE) --all-targets -- -D warnings
	python3 scripts/check-structure.py
	$(CARGO) test --profile $(PROFILE)
	$(CARGO) run --quiet --profile $(PROFILE) -p loom-runtime --example hal_fake
	LOOM_BIN_DIR=$(abspath $(BIN)) $(VENV)/bin/lit -sv test

bench:
	$(MAKE) build PROFILE=release
	LOOM_BIN_DIR=$(abspath target/release) ./scripts/bench.sh
	LOOM_BIN_DIR=$(abspath target/release) ./scripts/bench-pipeline.sh
	LOOM_BIN_DIR=$(abspath target/release) ./scripts/bench-gemm.sh
	cargo bench -p loom-tools --bench interp
	cargo bench -p loom-tools --bench sim
	cargo bench -p loom-aie2p-isa --bench isa
	cargo bench -p loom-aie2p-codegen --bench codegen
	cargo bench -p loom-runtime --bench isa_core
	cargo bench -p loom-tools --bench progress

# A 10-minute fuzzing campaign over parse + verify + print (docs/fuzzing.md).
fuzz: deps
	command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz
	fuzz/seed.sh
	RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run parse_print fuzz/corpus/parse_print -- \
	  -dict=fuzz/loom.dict -max_total_time=600 -rss_limit_mb=4096 -timeout=10 \
	  -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1

# The bad-input campaign over the tools (docs/fuzzing.md): mutated .xdna
# artifacts, bytecode and text through loom-test, loom-format, loom-opt and
# loom-compile; fails on any panic, crash, hang or leftover file.
FUZZ_RUNS ?= 20000
fuzz-artifacts: build
	LOOM_BIN_DIR=$(abspath $(BIN)) python3 scripts/fuzz-campaign.py --runs $(FUZZ_RUNS)

clean:
	$(CARGO) clean
	rm -rf $(VENV)
