# The two commands a new user runs: `make demo` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
# The demo's own build: simulator only (no CUDA, MPI, tests or benchmarks), so that a fresh machine runs the
# quickstart in minutes; `make build`/`make test` build everything in BUILD_DIR.
DEMO_BUILD_DIR ?= build-demo
JOBS      ?= 2
CMAKE_ARGS ?=

.PHONY: all deps configure build demo test bench grid validate gpu-bundle gpu-dry-run clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The demo needs the simulator-only CLI alone: its targets, configured without CUDA, MPI, tests and
# benchmarks, with precompiled headers (cmake/PrecompiledHeaders.cmake), and RelWithDebInfo's -O2 without
# its debug information (a quarter of each file's compile time; the same code). The cuda and MPI backends:
# `make build`.
demo:
	@scripts/install-deps.sh --demo
	@cmake -S . -B $(DEMO_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
	  -DZEPPELIN_CUDA=OFF \
	  -DZEPPELIN_MPI=OFF -DZEPPELIN_BUILD_TESTS=OFF -DZEPPELIN_BUILD_BENCHMARKS=OFF -DZEPPELIN_PCH=ON $(CMAKE_ARGS)
	@cmake --build $(DEMO_BUILD_DIR) -j $(JOBS) --target zeppelin-bench
	@$(DEMO_BUILD_DIR)/cli/zeppelin-bench run scenarios/quickstart.json

test: build
	@ctest --test-dir $(BUILD_DIR) -j $(JOBS) --output-on-failure

bench: build
	@scripts/run-benchmarks.sh $(BUILD_DIR)

# Zeppelin against the best baseline over scenarios/grid and the library (minutes; exit 1 if it loses).
grid: build
	@python3 scripts/scenario-grid.py --bin $(BUILD_DIR)/cli/zeppelin-bench --jobs $(JOBS)

# The held-out validation suite: predictions against published measurements, the table of docs/VALIDATION.md
# regenerated (seconds; the CLI alone).
validate: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target zeppelin-bench
	@python3 scripts/validate-model.py --bin $(BUILD_DIR)/cli/zeppelin-bench --write docs/VALIDATION.md

# What a GPU machine needs, packed into .deps/gpu-carry (carry it), and the GPU check's dry run here: its
# plan, the size of what travels and the number of result files, checked (docs/CUDA_BACKEND.md).
gpu-bundle: build
	@scripts/gpu-bundle.sh $(BUILD_DIR)

gpu-dry-run: gpu-bundle
	@scripts/gpu-check.sh --dry-run

clean:
	@rm -rf $(BUILD_DIR) $(DEMO_BUILD_DIR)
