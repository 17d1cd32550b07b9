# Shared by bench/peers.sh and bench/train_peers.sh (sourced): builds xlite's side of a peer comparison and
# sets the environment every program of it runs in.
#
#   peer_setup BUILD_DIR TARGET OUT_DIR THREADS
#
# Builds TARGET in BUILD_DIR (Release, benchmarks on), checks for the project's .venv-bench, empties OUT_DIR of
# earlier results, and exports the thread count, the inductor cache folder of this run, and nothing of
# OpenBLAS. Afterwards "${peer_env[@]}" prefixes a peer's command with the settings of every Python peer.
peer_setup() {
  local build=$1 target=$2 out=$3 threads=$4
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLITE_BUILD_BENCH=ON -DXLITE_BUILD_TESTS=OFF \
    -DXLITE_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$build" --target "$target"
  [ -x .venv-bench/bin/python ] || { echo "no .venv-bench: run scripts/install-bench-deps.sh" >&2; exit 1; }
  mkdir -p "$out"
  rm -f "$out"/*.txt "$out"/*.err
  export OMP_NUM_THREADS=$threads
  unset OPENBLAS_CORETYPE
  # Inductor's compiled kernels and JAX's executables are cached between repeats in folders of this run's own.
  export TORCHINDUCTOR_CACHE_DIR="$out/inductor-cache"
  # Every peer in its strongest settings (bench/run.sh gives libtorch the same): without the malloc
  # tunables each fresh 64 MiB result is a new mapping, and in this VM its page faults cost more than the
  # op itself (JAX's tanh on 16M floats: 67 ms without, 14.5 ms with). THP_MEM_ALLOC_ENABLE=1 gives
  # PyTorch's large buffers transparent huge pages, as xlite's allocator does for its own.
  peer_env=(env OMP_WAIT_POLICY=PASSIVE
    GLIBC_TUNABLES="glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=17179869184"
    THP_MEM_ALLOC_ENABLE=1)
}

# The Python that runs a peer: PyTorch/XLA needs the torch it was built with (.venv-xla), the others .venv-bench.
peer_python() {
  case "$1" in
    torch_xla*) echo .venv-xla/bin/python ;;
    *) echo .venv-bench/bin/python ;;
  esac
}

# Where the peer list $peers names libtorch: builds its program TARGET in BUILD_DIR, or, where CMake found no Torch
# (libtorch-dev) and so defined no TARGET, leaves libtorch out of $peers with a message.
#
#   libtorch_setup BUILD_DIR TARGET
libtorch_setup() {
  local build=$1 target=$2
  [[ " $peers " == *" libtorch "* ]] || return 0
  if grep -q "^build $target:" "$build/build.ninja"; then
    cmake --build "$build" --target "$target"
  else
    echo "CMake found no Torch (libtorch-dev): the libtorch peer is left out" >&2
    peers=$(echo " $peers " | sed 's/ libtorch / /')
  fi
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
