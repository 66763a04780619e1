# The README's commands. `make demo` runs the main job, `make test` runs every test suite,
# `make dist` builds the release artifacts into dist/ (wheel, sdist, C++ packages) and checks them,
# `make docs` builds the documentation site into build-docs/site (strict: any warning fails).
.PHONY: demo test dist docs bench cluster-start cluster-stop

CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)
export CARGO_TARGET_DIR ?= $(CURDIR)/target

demo:
	$(CARGO) run --release -p fluss-writer --example demo

test:
	scripts/test-all.sh

dist:
	scripts/dist.sh

docs:
	scripts/docs.sh

bench:
	scripts/bench-all.sh

cluster-start:
	scripts/fluss-cluster.sh start

cluster-stop:
	scripts/fluss-cluster.sh stop
