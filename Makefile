# make demo   builds and runs the examples (the last trains a character-level GPT for 300 steps)
# make test   builds everything and runs every test, then again under AddressSanitizer and UBSan
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan

.PHONY: all deps build build-asan build-tsan test test-release test-asan test-tsan demo digits install clean bench

all: build

deps:
	bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXLITE_SANITIZE=ON -DXLITE_BUILD_EXAMPLES=OFF
	cmake --build $(ASAN_BUILD) -j $(JOBS)

test-release: build
	bash scripts/fetch-digits.sh || echo "the digits data could not be fetched: the test example_digits is skipped"
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# ThreadSanitizer on the tests that use threads or the state threads share. OpenMP teams of one thread:
# libgomp is not instrumented, so the synchronisation inside its teams would be invisible to TSan.
TSAN_TESTS = Threads.*:LiveTensors.*:CompileSoundness.*:CompileReplay.*:AutogradInPlace.*:Metrics.*
build-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXLITE_SANITIZE_THREAD=ON -DXLITE_BUILD_EXAMPLES=OFF
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target xlite_tests

test-tsan: build-tsan
	OMP_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		$(TSAN_BUILD)/xlite_tests --gtest_filter='$(TSAN_TESTS)'

test: test-release test-asan test-tsan

demo: build
	./$(BUILD)/lazy_cos_sin
	./$(BUILD)/eager_and_metrics
	./$(BUILD)/chargpt 300

# An MLP and a CNN on the handwritten digits that Debian's python3-sklearn ships (fetched, not installed).
digits: build
	bash scripts/fetch-digits.sh
	./$(BUILD)/digits data/digits.csv

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)

# make bench  installs the libtorch peer if missing, builds build-bench/ and prints the table of goals
bench:
	bash scripts/install-bench-deps.sh
	bash bench/run.sh
