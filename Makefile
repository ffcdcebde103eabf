# Thin targets over cmake/ctest. `make run` and `make test` are all a new user needs;
# `make bench` times the workloads (docs/usage.md#bench).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=
CASE ?= cases/heat2d_plate.yaml

# Debian packages the build, the tests and postprocess/ need.
PACKAGES := cmake g++ make pkg-config git libcli11-dev libyaml-cpp-dev libmuparser-dev \
  libfmt-dev libspdlog-dev nlohmann-json3-dev libhdf5-openmpi-dev zlib1g-dev libdeflate-dev libvtk9-dev catch2 \
  libfftw3-dev libopenmpi-dev openmpi-bin python3-numpy python3-h5py python3-matplotlib python3-lz4 paraview xvfb xauth

# make test also builds and runs the CPU-only AddressSanitizer + UBSan build,
# at -O1 -g1 (the sanitizers' advice; it compiles about 40 % faster than -O2 -g,
# which keeps CI inside its time).
ASAN_BUILD ?= build-asan
ASAN_ARGS := -DGRIDFORGE_CUDA=OFF -DGRIDFORGE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
# make fuzz: the case-loader fuzzer (libFuzzer, clang), FUZZ_SECONDS long.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_PACKAGES := clang libclang-rt-dev libomp-dev
FUZZ_ARGS := -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DGRIDFORGE_CUDA=OFF \
  -DGRIDFORGE_FUZZ=ON -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: deps build run test test-asan bench fuzz fuzz-merge clean

# pvbatch needs ParaView's Python modules (python3-paraview), a package that
# conflicts with python3-vtk9, which libvtk9-dev needs; so it is unpacked
# beside the system, under .deps/, where tests/postprocess.cmake finds it.
PV_PY := .deps/python3-paraview
PV_SIMPLE := usr/lib/python3/dist-packages/paraview/simple.py

deps:
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "make deps: these Debian packages are missing: $$missing"; \
	    echo "make deps: run 'sudo make deps' (or apt-get install them) and try again"; exit 1; \
	  fi; \
	  echo "make deps: installing $$missing"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@if [ ! -f /$(PV_SIMPLE) ] && [ ! -f $(PV_PY)/$(PV_SIMPLE) ]; then \
	  echo "make deps: unpacking python3-paraview into $(PV_PY)"; \
	  mkdir -p .deps && cd .deps && rm -f python3-paraview_*.deb && \
	  { apt-get download -q python3-paraview || { apt-get update -q && apt-get download -q python3-paraview; }; } && \
	  dpkg-deb -x python3-paraview_*.deb python3-paraview && rm -f python3-paraview_*.deb; \
	fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/gridforge run $(CASE) --overwrite

test: build $(ASAN_BUILD)/CMakeCache.txt
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory test-asan

# Unit and end-to-end tests under ASan + UBSan (any report fails the test);
# the ParaView checks (every variant) read files, not code, so they are left to the main build,
# and so are the tests labelled `walkthrough` (a user's session replayed over
# code other tests run, or mostly Python: tests/e2e/e2e.cmake). The MPI tests
# run their 2-rank layouts here (GF_MPI_MAXNP=2: every exchange and gather
# path, at half the time); the main build runs 3 and 4 ranks too.
$(ASAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(ASAN_BUILD) $(ASAN_ARGS) $(CMAKE_ARGS)

test-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	GF_MPI_MAXNP=2 ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:$(ASAN_OPTIONS) \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:$(UBSAN_OPTIONS) \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -E '^(paraview_check.*|gpu)$$' -LE walkthrough

fuzz: deps
	@missing=$$(for p in $(FUZZ_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "make fuzz: run 'sudo apt-get install $$missing' first"; exit 1; fi; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@[ -f $(FUZZ_BUILD)/CMakeCache.txt ] || cmake -S . -B $(FUZZ_BUILD) $(FUZZ_ARGS)
	cmake --build $(FUZZ_BUILD) --target gridforge_fuzz_case -j $(JOBS)
	bash tests/fuzz/run.sh $(FUZZ_BUILD)/gridforge_fuzz_case $(FUZZ_SECONDS) $(FUZZ_BUILD)/work

# Folds the inputs of the last `make fuzz` that add coverage into tests/fuzz/corpus.
fuzz-merge:
	mkdir -p $(FUZZ_BUILD)/merged
	$(FUZZ_BUILD)/gridforge_fuzz_case -merge=1 $(FUZZ_BUILD)/merged tests/fuzz/corpus $(FUZZ_BUILD)/work/corpus
	rm -rf tests/fuzz/corpus && mv $(FUZZ_BUILD)/merged tests/fuzz/corpus

# gridforge bench into out/bench (table on stdout, bench.json, bench.csv) and
# its plots (bench_<workload>.png, bench_<workload>_sweep.png) beside them. BENCH_ARGS adds options, e.g.
# make bench BENCH_ARGS="--workload all --precision float32,float64"
BENCH_ARGS ?=
bench: build
	$(BUILD)/gridforge bench --out out/bench $(BENCH_ARGS)
	/usr/bin/python3 postprocess/plot_bench.py out/bench/bench.json --out out/bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) out .deps
