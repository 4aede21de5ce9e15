# Peridot: the README's two commands.
#   make demo   installs missing Debian packages, builds Release, runs scenes/demo.json,
#               writes frames to out/demo and a preview picture out/demo/preview.png
#   make test   installs missing packages, builds, runs every ctest test (the known failures
#               left to `make known-failures`), then the unit tests again in a portable build
#               (no -march=native) and under AddressSanitizer + UndefinedBehaviorSanitizer
#   make known-failures   re-measures the known failures of docs/validation.md
#   make fuzz   builds the libFuzzer targets with clang and runs each FUZZ_SECONDS (600)
#   make install  installs the program, libperidot (static and shared), the headers and the
#               Python module (`import peridot`, docs/python.md) under PREFIX (/usr/local)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
ASAN_BUILD ?= build-asan
PORTABLE_BUILD ?= build-portable
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 600
PREFIX ?= /usr/local

.PHONY: all setup build install demo test known-failures test-release test-portable test-asan fuzz bench format clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# the Python module goes where Debian's python3 looks under PREFIX (CMakeLists.txt,
# PD_PYTHON_DIR); ldconfig makes the new libperidot.so known to the C programs that link it
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)
	@if [ "$$(id -u)" -eq 0 ]; then ldconfig; fi

demo: build
	./$(BUILD)/peridot run scenes/demo.json -o out/demo
	./$(BUILD)/peridot render out/demo -o out/demo/preview.png
	@echo "frames in out/demo, preview in out/demo/preview.png"

test: test-release test-portable test-asan

# The known_failure_* tests print a measurement but cannot fail the suite, and CI's budget is
# 30 min (Fig. 11's wet sand alone costs about 220 s of CPU), so `make test` leaves them to
# `make known-failures`.
test-release: build
	@bash scripts/setup.sh test
	cd $(BUILD) && PD_KNOWN_FAILURES=skip ctest --output-on-failure -j$(JOBS)

known-failures: build
	cd $(BUILD) && PD_KNOWN_FAILURES=only ctest -V -j$(JOBS) -L physics | grep -E "^[0-9]+: (  |\[ )"

# The unit tests once more without -march=native: FMA contraction and the vector width round
# differently, as another CPU's native build would; a test that holds for one instruction set
# only fails here. Without OpenVDB: its mesher is C++ with no vector code of ours, and this build
# checks that the surface command then refuses with the package to install.
test-portable: setup
	@cmake -S . -B $(PORTABLE_BUILD) -DCMAKE_BUILD_TYPE=Release -DPD_NATIVE=OFF -DPD_OPENVDB=OFF >/dev/null
	@cmake --build $(PORTABLE_BUILD) -j$(JOBS) --target test_unit
	cd $(PORTABLE_BUILD) && ctest --output-on-failure -j$(JOBS) -L unit

# Without OpenVDB too: its C++ mesher under the sanitizers costs minutes of CI's 30 to build
# (sanitized by hand when it landed: docs/validation.md). At -O1, as AddressSanitizer's
# documentation advises for speed (asserts kept: no NDEBUG): the unit tests take 45 s of CPU
# instead of 162 at -O0, the build 72 s more; net about 45 s (docs/validation.md).
test-asan: setup
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
		-DPD_SANITIZE=ON -DPD_OPENVDB=OFF >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS) --target test_unit
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS) -L unit

fuzz:
	@bash scripts/setup.sh fuzz
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPD_FUZZ=ON \
		-DPD_WERROR=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_scene fuzz_mesh fuzz_frame
	@bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	@bash scripts/setup.sh peers
	./$(BUILD)/peridot_bench

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(PORTABLE_BUILD) $(FUZZ_BUILD)
