# Peridot: the README's two commands.
#   make demo   installs missing Debian packages, builds Release, runs scenes/demo.json,
#               writes frames to out/demo and a preview picture out/demo/preview.png
#   make test   installs missing packages, builds, runs every ctest test, then the unit tests
#               again under AddressSanitizer + UndefinedBehaviorSanitizer
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
ASAN_BUILD ?= build-asan

.PHONY: all setup build demo test test-release test-asan bench format clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	./$(BUILD)/peridot run scenes/demo.json -o out/demo
	./$(BUILD)/peridot render out/demo -o out/demo/preview.png
	@echo "frames in out/demo, preview in out/demo/preview.png"

test: test-release test-asan

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-asan: setup
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPD_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS) --target test_unit
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS) -L unit

bench: build
	@bash scripts/setup.sh peers
	./$(BUILD)/peridot_bench

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
