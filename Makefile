# The two commands a new user runs: `make demo` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
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

# The demo needs the CLI alone: its targets only, not the tests and benchmarks `make build` adds.
demo: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target zeppelin-bench
	@$(BUILD_DIR)/cli/zeppelin-bench run scenarios/quickstart.json

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
	@rm -rf $(BUILD_DIR)
