# The two commands a new user runs: `make demo` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
JOBS      ?= 2
CMAKE_ARGS ?=

.PHONY: all deps configure build demo test bench grid clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	@$(BUILD_DIR)/cli/zeppelin-bench run scenarios/quickstart.json

test: build
	@ctest --test-dir $(BUILD_DIR) -j $(JOBS) --output-on-failure

bench: build
	@scripts/run-benchmarks.sh $(BUILD_DIR)

# Zeppelin against the best baseline over scenarios/grid and the library (minutes; exit 1 if it loses).
grid: build
	@python3 scripts/scenario-grid.py --bin $(BUILD_DIR)/cli/zeppelin-bench --jobs $(JOBS)

clean:
	@rm -rf $(BUILD_DIR)
