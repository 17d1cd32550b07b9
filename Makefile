# make demo   builds and runs the examples (the last trains a character-level GPT for 300 steps)
# make test   builds everything and runs every test, then again under AddressSanitizer and UBSan, then installs
#             the Python package into .venv and runs its tests with pytest
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
# Extra CMake options for every build, e.g. CMAKE_FLAGS=-DXLITE_WERROR=ON (what CI uses).
CMAKE_FLAGS ?=

.PHONY: all deps format format-check build build-asan build-tsan test test-release test-asan test-tsan test-python python demo digits install clean bench bench-cache build-fuzz fuzz fuzz-ci

all: build

deps:
	bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXLITE_SANITIZE=ON -DXLITE_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)

test-release: build
	bash scripts/fetch-digits.sh || echo "the digits data could not be fetched: the test example_digits is skipped"
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# ThreadSanitizer on the tests that use threads or the state threads share. OpenMP teams of one thread:
# libgomp is not instrumented, so the synchronisation inside its teams would be invisible to TSan.
TSAN_TESTS = Threads.*:LiveTensors.*:CompileSoundness.*:CompileReplay.*:AutogradInPlace.*:Metrics.*:RuntimeContext.*:Devices.*:DataLoader.*
build-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXLITE_SANITIZE_THREAD=ON -DXLITE_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS)
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target xlite_tests

test-tsan: build-tsan
	OMP_NUM_THREADS=1 XLITE_NUM_CPU_DEVICES=4 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		$(TSAN_BUILD)/xlite_tests --gtest_filter='$(TSAN_TESTS)'

# Every C++ file of ours in the style of .clang-format (clang-format-19, installed by scripts/install-deps.sh).
FORMAT_FILES = git ls-files 'src/*.cpp' 'src/*.h' 'include/*.h' 'tests/*.cpp' 'tests/*.h' 'tools/*.cpp' \
	'testing/*.cpp' 'testing/*.h' 'python/src/*.cpp' 'python/src/*.h' 'fuzz/*.cpp' 'bench/*.cpp' 'bench/*.h' 'examples/*.cpp' 'examples/*.h'
format: deps
	$(FORMAT_FILES) | xargs clang-format-19 -i
format-check: deps
	$(FORMAT_FILES) | xargs clang-format-19 --dry-run -Werror

test: format-check test-release test-asan test-tsan test-python

# The Python package (pyproject.toml) built into .venv as a user's `pip install .` would, but from the build
# folder build-python/ that stays between runs, then its tests. --no-build-isolation: the pinned nanobind and
# scikit-build-core in .venv build it.
VENV_PYTHON = .venv/bin/python
python: deps
	$(VENV_PYTHON) -m pip install --no-build-isolation --no-deps --disable-pip-version-check -q \
		$(if $(CMAKE_FLAGS),--config-settings=cmake.args="$(CMAKE_FLAGS)") .

test-python: python
	cd python/tests && ../../$(VENV_PYTHON) -m pytest -q -p no:cacheprovider .

# libFuzzer on xlite::load (arbitrary bytes) and on the text IR (parse, verify, run on both backends).
# Each harness runs FUZZ_SECONDS from seeds that xlite's own code writes plus every regression input;
# a finding is written to $(FUZZ_BUILD)/findings/ and fails the target. fuzz-ci: one minute each (CI);
# fuzz: four hours each. A finding, once fixed, is copied into fuzz/regressions/<harness>/.
FUZZ_SECONDS ?= 60
build-fuzz:
	bash scripts/install-fuzz-deps.sh
	CC=clang-19 CXX=clang++-19 cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXLITE_FUZZ=ON \
		-DXLITE_BUILD_TESTS=OFF -DXLITE_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_load fuzz_ir xlite-fuzz-seeds

fuzz-ci: build-fuzz
	bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

fuzz: build-fuzz
	bash fuzz/run.sh $(FUZZ_BUILD) $(if $(filter command line,$(origin FUZZ_SECONDS)),$(FUZZ_SECONDS),14400)

demo: build
	./$(BUILD)/lazy_cos_sin
	./$(BUILD)/eager_and_metrics
	./$(BUILD)/chargpt 300
	$(MAKE) python
	$(VENV_PYTHON) examples/python/lazy_and_compile.py

# An MLP and a CNN on the handwritten digits that Debian's python3-sklearn ships (fetched, not installed).
digits: build
	bash scripts/fetch-digits.sh
	./$(BUILD)/digits data/digits.csv

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)

# make bench  installs the peers (libtorch, PyTorch 2.x) if missing, builds build-bench/ and prints the tables of goals
bench:
	bash scripts/install-bench-deps.sh
	bash bench/run.sh
	bash bench/attention.sh
	bash bench/python.sh
	bash bench/peers.sh
	bash bench/train_peers.sh
	$(MAKE) bench-cache

# The persistent compilation cache: chargpt's first training step, cold against warm (BENCHMARKS.md).
bench-cache: build
	bash bench/persistent_cache.sh $(BUILD) 5
