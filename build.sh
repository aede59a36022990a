#!/usr/bin/env bash
# build.sh — the only entry point a new machine needs (see README).
#
#   ./build.sh run    install missing Debian packages, build Release, run the main job
#   ./build.sh test   install missing Debian packages, build Release and ASan+UBSan,
#                     run the whole test suite in both (slow tests: RACKDB_SLOW=1)
#   ./build.sh build  install and build Release only
#
# Idempotent: packages already installed are not touched, builds are
# incremental, so a second run with nothing changed takes seconds.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(cmake gcc g++ make pkg-config llvm-19-dev clang-19 libclang-rt-19-dev lemon
          libnuma-dev libjemalloc-dev libibverbs-dev librdmacm-dev libedit-dev
          zlib1g-dev libssl-dev libpq-dev)
JOBS=$(nproc)

install_missing() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "build.sh: installing ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}"
}

# build DIR [cmake options...]: configure once, then build incrementally.
build() {
    local dir=$1
    shift
    if [ ! -f "$dir/CMakeCache.txt" ]; then
        cmake -S . -B "$dir" "$@" >/dev/null
    fi
    cmake --build "$dir" -j "$JOBS"
}

build_release() { build build/release -DCMAKE_BUILD_TYPE=Release; }
build_asan() { build build/asan -DCMAKE_BUILD_TYPE=Debug -DRACKDB_SANITIZE=ON; }

run_tests() {
    local dir=$1 exclude=$2
    [ "${RACKDB_SLOW:-0}" = 1 ] && exclude=${exclude/slow|/}
    (cd "$dir" && ctest --output-on-failure -j "$JOBS" --timeout 900 -LE "$exclude")
}

# The main job: the 22 TPC-H queries at SF 0.01 on data generated in memory,
# every answer checked against the official ones.
main_job() {
    local bin=build/release/rackdb
    "$bin" --version
    "$bin" tpch run --sf 0.01 --check
}

case "${1:-}" in
run)
    install_missing
    build_release
    main_job
    ;;
test)
    install_missing
    build_release
    build_asan
    echo "== Release =="
    run_tests build/release 'slow|nothing'
    echo "== ASan+UBSan =="
    run_tests build/asan 'slow|nosan'
    ;;
build)
    install_missing
    build_release
    ;;
*)
    echo "usage: ./build.sh run|test|build" >&2
    exit 2
    ;;
esac
