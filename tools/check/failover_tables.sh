#!/bin/sh
# The failover tables of RELIABILITY.md ("Failover tables (issue 10)"):
# sentinel-failover and sentinel-kill-master, RLock and FencedLock with replica
# sync off and required; one run at a time (a shared machine).
#   tools/check/failover_tables.sh [BUILD_DIR] [RUNS] [OUT_DIR]
set -eu
build=${1:-build-asan}
runs=${2:-20}
out=${3:-$(mktemp -d /tmp/holdfast-failover-XXXXXX)}
check="$build/tools/check/holdfast-check"
[ -x "$check" ] || { echo "no $check: build the holdfast_check target first" >&2; exit 2; }
for case in "rlock off" "rlock required" "fenced off" "fenced required"; do
    set -- $case
    "$check" --nemesis sentinel-failover,sentinel-kill-master --primitive "$1" --replica-sync "$2" \
        --runs "$runs" --seed 1 --lease 500ms --duration 8s --quiet --out "$out/$1-$2" >/dev/null || true
    echo "== $1, replica sync $2 ($out/$1-$2/report.md)"
    cat "$out/$1-$2/report.md"
done
# Each failover as the nemesis logged it: until the sentinels named the new
# master, and until the old one was back as its replica (min/median/max ms).
for kind in sentinel-failover sentinel-kill-master; do
    cat "$out"/*/"$kind"-*/nemesis.log 2>/dev/null | awk -v kind="$kind" '
        { for (i = 1; i <= NF; ++i) {
              if ($i == "named" && $(i + 1) == "in") named[n++] = $(i + 2) + 0
              if ($i == "after") back[m++] = $(i + 1) + 0
              if ($i == "within") late++ } }
        function show(what, a, c,   i, j, t) {
            for (i = 0; i < c; ++i) for (j = i + 1; j < c; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            if (c) printf "  %s: %d, %d/%d/%d ms\n", what, c, a[0], a[int(c / 2)], a[c - 1] }
        END { print kind ":"; show("new master named", named, n); show("old master back as replica", back, m)
              printf "  old master not back within 10 s: %d\n", late }'
done
