# The README's commands. `make demo` runs the main job, `make test` runs every test suite,
# `make dist` builds the release artifacts into dist/ (wheel, sdist, C++ packages) and checks them,
# `make docs` builds the documentation site into build-docs/site (strict: any warning fails).
# `make check` is the inner loop (about 5 minutes warm); `make test-rust`, `make test-py` and
# `make test-cpp` run one language's part of `make test` (with the clusters it needs).
.PHONY: demo test check test-rust test-py test-cpp fuzz dist docs bench cluster-start cluster-stop clean-cache

CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)
# The clone's cargo target directory in the user's cache, started from what other clones on the
# machine compiled (scripts/cargo-target-dir.sh); CARGO_TARGET_DIR overrides it.
export CARGO_TARGET_DIR := $(shell $(CURDIR)/scripts/cargo-target-dir.sh)

demo:
	$(CARGO) run --release -p fluss-writer --example demo

test:
	scripts/test-all.sh

check:
	scripts/check.sh

test-rust:
	TEST_PARTS="lint rust loom" scripts/test-all.sh

test-py:
	TEST_PARTS="py" scripts/test-all.sh

test-cpp:
	TEST_PARTS="cpp" scripts/test-all.sh

fuzz:
	scripts/fuzz.sh

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

# Removes the build cache of every clone (never a CARGO_TARGET_DIR of your own).
clean-cache:
	d="$$(env -u CARGO_TARGET_DIR scripts/cargo-target-dir.sh)"; case "$$d" in \
	  */fluss-writer/clones/*/target) c="$${d%/clones/*}"; rm -rf "$$c/clones" "$$c/target" "$$c/tools" "$$c/ccache" "$$c/java-oracle" "$$c/java-errors";; \
	  $(CURDIR)/target) rm -rf "$$d";; esac
