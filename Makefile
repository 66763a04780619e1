# The README's commands. `make demo` runs the main job, `make test` runs every test suite.
.PHONY: demo test bench cluster-start cluster-stop

CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)
export CARGO_TARGET_DIR ?= $(CURDIR)/target

demo:
	$(CARGO) run --release -p fluss-writer --example demo

test:
	scripts/test-all.sh

bench:
	scripts/bench-all.sh

cluster-start:
	scripts/fluss-cluster.sh start

cluster-stop:
	scripts/fluss-cluster.sh stop
