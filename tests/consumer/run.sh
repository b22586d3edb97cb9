#!/usr/bin/env bash
# tests/consumer/run.sh [shared|static|fetch]...: for shared and static, install
# holdfast into a temporary prefix, then build tests/consumer against it twice
# (CMake find_package, and a plain g++ line from pkg-config); for fetch, build
# it with holdfast as a FetchContent subproject. Each consumer takes and
# releases a lock on a throwaway redis-server. Also checks that a shared
# libholdfast exports the public API only.
set -euo pipefail
cd "$(dirname "$0")/../.."
JOBS=${JOBS:-2}
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(shared)

work=$(mktemp -d /tmp/holdfast-consumer-XXXXXX)
redis_pid=""
cleanup() {
    if [ -n "$redis_pid" ]; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "consumer: $*" >&2; exit 1; }
# Builds are quiet unless they fail.
quiet() { "$@" >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "failed: $*"; }; }

# A redis-server of our own on a free loopback port (never 6379): the port is
# ours once the server answering on it reports our process id.
start_redis() {
    for _ in 1 2 3 4 5; do
        port=$((20000 + RANDOM % 40000))
        redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
            --logfile "$work/redis.log" >/dev/null &
        redis_pid=$!
        for _ in $(seq 50); do
            kill -0 "$redis_pid" 2>/dev/null || break
            if redis-cli -h 127.0.0.1 -p "$port" info server 2>/dev/null | grep -q "^process_id:$redis_pid"; then
                return 0
            fi
            sleep 0.1
        done
        kill "$redis_pid" 2>/dev/null; wait "$redis_pid" 2>/dev/null || true
        redis_pid=""
    done
    fail "could not start redis-server on a free port (see $work/redis.log)"
}

# A shared libholdfast must export holdfast's public classes and nothing of
# its internals (holdfast::detail: transport, watchdog, kinds) or of Asio and hiredis.
check_exports() {
    local lib=$1 symbols leaked
    symbols=$(nm -D --defined-only -C "$lib" | cut -d' ' -f3-)
    grep -qF "holdfast::Lock::lock()" <<<"$symbols" || fail "$lib does not export holdfast::Lock::lock()"
    leaked=$(grep -E "asio::|^redis|^([a-z ]+ for )?holdfast::detail::" <<<"$symbols" || true)
    [ -z "$leaked" ] || fail "$lib exports internals:"$'\n'"$leaked"
    echo "consumer: $(basename "$lib") exports $(wc -l <<<"$symbols") symbols, no internals (Asio, hiredis, holdfast::detail)"
}

# holdfast::prometheus is built wherever prometheus-cpp is installed (./run installs it).
run_prometheus() {
    [ -x "$1/consumer_prometheus" ] || fail "holdfast::prometheus was not built or not found in $1"
    "$1/consumer_prometheus" "$url"
}

start_redis
url="redis://127.0.0.1:$port"
# holdfast as a subproject: only the library is built, none of our tools or tests.
fetch() {
    local dir=build-install-fetch
    quiet cmake -S tests/consumer -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCONSUMER_FETCH=ON \
        -DFETCHCONTENT_SOURCE_DIR_HOLDFAST="$PWD"
    local targets
    targets=$(cmake --build "$dir" --target help)
    if grep -E "holdfast_(tests|cli|check|support)|flash_sale|lock_bench" <<<"$targets"; then
        fail "holdfast as a subproject adds its tools or tests to the consumer's build"
    fi
    quiet cmake --build "$dir" -j"$JOBS"
    "$dir/consumer" "$url"
    run_prometheus "$dir"
    echo "consumer: FetchContent subproject passed"
}

for kind in "${kinds[@]}"; do
    if [ "$kind" = fetch ]; then
        fetch
        continue
    fi
    case "$kind" in
        shared) shared=ON; static_flag="" ;;
        static) shared=OFF; static_flag="--static" ;;
        *) fail "unknown kind $kind (shared, static or fetch)" ;;
    esac
    build="build-install-$kind" prefix="$work/prefix-$kind"
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS="$shared" -DHOLDFAST_SANITIZE= \
        -DHOLDFAST_BUILD_TESTS=OFF -DHOLDFAST_BUILD_EXAMPLES=OFF -DHOLDFAST_BUILD_BENCH=OFF \
        -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
    quiet cmake --build "$build" -j"$JOBS"
    quiet cmake --install "$build"
    libdir=$(dirname "$(find "$prefix" -name holdfast.pc)")/..
    if [ "$kind" = shared ]; then check_exports "$libdir/libholdfast.so"; fi
    version=$("$prefix/bin/holdfast" --version) && [[ "$version" =~ ^holdfast\ [0-9]+\.[0-9]+\.[0-9]+$ ]] ||
        fail "installed holdfast --version printed '$version'"
    quiet "$prefix/bin/holdfast-check" --help
    # The man page lists every subcommand's options.
    man=$(find "$prefix" -name holdfast.1)
    [ -n "$man" ] || fail "no holdfast.1 man page installed"
    for option in --tls-ca --lease --json --force; do
        grep -qF -e "$option" -e "${option//-/\\-}" "$man" || fail "the man page does not mention $option"
    done

    # 1. CMake: find_package(holdfast CONFIG) through CMAKE_PREFIX_PATH.
    quiet cmake -S tests/consumer -B "$work/cmake-$kind" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
    quiet cmake --build "$work/cmake-$kind"
    "$work/cmake-$kind/consumer" "$url"
    run_prometheus "$work/cmake-$kind"

    # 2. A plain compiler line from pkg-config (--static: hiredis too, for a static libholdfast).
    export PKG_CONFIG_PATH="$libdir/pkgconfig"
    quiet g++ -std=c++20 tests/consumer/main.cpp -o "$work/pkg-config-$kind" \
        $(pkg-config $static_flag --cflags --libs holdfast) -Wl,-rpath,"$(pkg-config --variable=libdir holdfast)"
    "$work/pkg-config-$kind" "$url"
    unset PKG_CONFIG_PATH

    # The installed command line sees the same server.
    "$prefix/bin/holdfast" status consumer:lock --url "$url" >/dev/null || fail "installed holdfast status"
    echo "consumer: $kind install passed (find_package and pkg-config)"
done
