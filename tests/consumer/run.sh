#!/usr/bin/env bash
# tests/consumer/run.sh [shared|static|deb|fetch]...: build tests/consumer, a
# user's project, against holdfast as users get it, and run it (each consumer
# takes and releases a lock on a throwaway redis-server):
#   shared, static  `cmake --install` into a temporary prefix, then CMake
#                   find_package and a plain g++ line from pkg-config
#   deb             the .debs cpack makes, unpacked with dpkg-deb -x, then the same
#   fetch           README.md's FetchContent example, exactly as written, on the
#                   source tarball `package_source` makes
# Also checks that a shared libholdfast exports the public API only.
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
        # Gone already when the port was taken: not a failure of this script (set -e).
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
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
# The Release build the package and the source tarball come from.
package_build=build-package
configure_package_build() {
    quiet cmake -S . -B "$package_build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DHOLDFAST_SANITIZE= \
        -DCMAKE_INSTALL_PREFIX=/usr -DHOLDFAST_BUILD_TESTS=OFF -DHOLDFAST_BUILD_EXAMPLES=OFF -DHOLDFAST_BUILD_BENCH=OFF
}

# README.md's FetchContent example, as written, is the project's
# CMakeLists.txt; the tarball it names comes from `package_source`. Only the
# library is built, none of holdfast's tools or tests.
fetch() {
    local dir="$work/fetch" tarball example
    configure_package_build
    rm -f "$package_build"/holdfast-*.tar.gz
    quiet cmake --build "$package_build" --target package_source
    tarball=$(cd "$package_build" && ls holdfast-*.tar.gz)
    example=$(awk '/^```/ { if (inside && block ~ /FetchContent_Declare/) { printf "%s", block; exit }
                            inside = !inside; block = ""; next }
                   inside { block = block $0 "\n" }' README.md)
    [ -n "$example" ] || fail "README.md has no FetchContent example"
    grep -qF "$tarball" <<<"$example" || fail "README.md's FetchContent example does not name $tarball:"$'\n'"$example"
    mkdir -p "$dir"
    cp "$package_build/$tarball" "$dir/"
    cp tests/consumer/main.cpp "$dir/app.cpp"
    cp tests/consumer/prometheus.cpp "$dir/"
    { printf '%s\n' "$example"
      echo '# Added by tests/consumer/run.sh: the optional component, where it was built.'
      echo 'if(TARGET holdfast::prometheus)'
      echo '  add_executable(consumer_prometheus prometheus.cpp)'
      echo '  target_link_libraries(consumer_prometheus PRIVATE holdfast::holdfast holdfast::prometheus)'
      echo 'endif()'; } >"$dir/CMakeLists.txt"
    quiet cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release
    local targets
    targets=$(cmake --build "$dir/build" --target help)
    if grep -E "holdfast_(tests|cli|check|support)|flash_sale|lock_bench" <<<"$targets"; then
        fail "holdfast as a subproject adds its tools or tests to the consumer's build"
    fi
    quiet cmake --build "$dir/build" -j"$JOBS"
    "$dir/build/app" "$url"
    run_prometheus "$dir/build"
    echo "consumer: README's FetchContent example passed on $tarball"
}

# What an installed holdfast offers under `prefix`: the tools and their man
# page, and a consumer built with find_package and with pkg-config.
check_installed() {
    local prefix=$1 kind=$2 static_flag=$3 libdir
    libdir=$(dirname "$(find "$prefix" -name holdfast.pc)")/..
    if [ -e "$libdir/libholdfast.so" ]; then check_exports "$libdir/libholdfast.so"; fi
    version=$("$prefix/bin/holdfast" --version) && [[ "$version" =~ ^holdfast\ [0-9]+\.[0-9]+\.[0-9]+$ ]] ||
        fail "installed holdfast --version printed '$version'"
    quiet "$prefix/bin/holdfast-check" --help
    # The man pages, compressed as Debian wants them; holdfast(1) lists every subcommand's options.
    man=$(find "$prefix" -name holdfast.1.gz)
    [ -n "$man" ] || fail "no holdfast.1.gz man page installed"
    [ -n "$(find "$prefix" -name holdfast-check.1.gz)" ] || fail "no holdfast-check.1.gz man page installed"
    for option in --tls-ca --lease --json --force; do
        zcat "$man" | grep -qF -e "$option" -e "${option//-/\\-}" || fail "the man page does not mention $option"
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
}

# The .debs: holdfast (library, headers, CMake package, holdfast.pc, the tool
# and its man page) and holdfast-check, which depends on that very holdfast.
deb() {
    local root="$work/deb-root" main check
    configure_package_build
    quiet cmake --build "$package_build" -j"$JOBS"
    rm -f "$package_build"/*.deb
    (cd "$package_build" && quiet cpack -G DEB)
    main=$(ls "$package_build"/holdfast_*.deb 2>/dev/null || true)
    check=$(ls "$package_build"/holdfast-check_*.deb 2>/dev/null || true)
    [ -n "$main" ] && [ -n "$check" ] ||
        fail "cpack made $(cd "$package_build" && ls ./*.deb 2>/dev/null | tr '\n' ' '), not holdfast_*.deb and holdfast-check_*.deb"
    local listed
    listed=$(dpkg-deb -c "$main" | awk '{ print $6 }')  # the name, also of a symlink
    for want in /bin/holdfast /include/holdfast/lock.hpp /include/holdfast/version.hpp /libholdfast.so \
                /cmake/holdfast/holdfastConfig.cmake /pkgconfig/holdfast.pc /man1/holdfast.1.gz; do
        grep -qE -- "${want//./\\.}\$" <<<"$listed" || fail "$(basename "$main") has no ...$want"
    done
    if grep -q "holdfast-check" <<<"$listed"; then fail "$(basename "$main") holds holdfast-check (its own package)"; fi
    local check_listed
    check_listed=$(dpkg-deb -c "$check" | awk '{ print $6 }')  # whole: grep -q would cut the pipe
    grep -q "/bin/holdfast-check$" <<<"$check_listed" || fail "$(basename "$check") has no holdfast-check"
    grep -q "/man1/holdfast-check.1.gz$" <<<"$check_listed" || fail "$(basename "$check") has no holdfast-check(1)"
    local version depends
    version=$(dpkg-deb -f "$main" Version)
    depends=$(dpkg-deb -f "$check" Depends)
    grep -qF "holdfast (= $version)" <<<"$depends" || fail "holdfast-check depends on '$depends', not holdfast (= $version)"
    dpkg-deb -f "$main" Depends | grep -q hiredis || fail "$(basename "$main") does not depend on hiredis"
    for doc in copyright changelog.gz; do
        grep -qxF "./usr/share/doc/holdfast/$doc" <<<"$listed" || fail "$(basename "$main") has no /usr/share/doc/holdfast/$doc"
        grep -qxF "./usr/share/doc/holdfast-check/$doc" <<<"$check_listed" ||
            fail "$(basename "$check") has no /usr/share/doc/holdfast-check/$doc"
    done
    # Debian's own checks: no error (the warnings the packages are allowed are
    # overridden, with why, in cmake/debian/holdfast.lintian-overrides).
    lintian --fail-on error --tag-display-limit 0 "$main" "$check" >"$work/lintian" 2>&1 ||
        { cat "$work/lintian" >&2; fail "lintian finds errors in the .debs"; }
    grep -E "^[EW]:" "$work/lintian" >&2 || true
    dpkg-deb -x "$main" "$root"
    dpkg-deb -x "$check" "$root"
    check_installed "$root/usr" deb ""
    # A Debian package of the user's that links libholdfast: dpkg-shlibdeps
    # finds the library's dependency in the .deb's shlibs (its control files
    # beside the unpacked tree, as in a package being built).
    dpkg-deb -e "$main" "$root/DEBIAN"
    local libdir shlibdeps
    libdir=$(cd "$(dirname "$(find "$root" -name holdfast.pc)")/.." && pwd)
    mkdir -p "$work/shlibdeps/debian" && : >"$work/shlibdeps/debian/control"
    shlibdeps=$(cd "$work/shlibdeps" && dpkg-shlibdeps -O -l"$libdir" "$work/pkg-config-deb" 2>"$work/log") ||
        { cat "$work/log" >&2; fail "dpkg-shlibdeps fails for a program linking the .deb's libholdfast"; }
    local want="holdfast (>= $(dpkg-deb -f "$main" Version))"
    grep -qF "$want" <<<"$shlibdeps" ||
        fail "dpkg-shlibdeps gives '$shlibdeps' for a program linking libholdfast, not $want"
    echo "consumer: $(basename "$main") and $(basename "$check") unpacked and used (find_package and pkg-config);" \
         "lintian finds no error; dpkg-shlibdeps: $shlibdeps"
}

for kind in "${kinds[@]}"; do
    case "$kind" in
        fetch) fetch; continue ;;
        deb) deb; continue ;;
        shared) shared=ON; static_flag="" ;;
        static) shared=OFF; static_flag="--static" ;;
        *) fail "unknown kind $kind (shared, static, deb or fetch)" ;;
    esac
    build="build-install-$kind" prefix="$work/prefix-$kind"
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS="$shared" -DHOLDFAST_SANITIZE= \
        -DHOLDFAST_BUILD_TESTS=OFF -DHOLDFAST_BUILD_EXAMPLES=OFF -DHOLDFAST_BUILD_BENCH=OFF \
        -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
    quiet cmake --build "$build" -j"$JOBS"
    quiet cmake --install "$build"
    check_installed "$prefix" "$kind" "$static_flag"
    echo "consumer: $kind install passed (find_package and pkg-config)"
done
