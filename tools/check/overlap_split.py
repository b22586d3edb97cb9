#!/usr/bin/env python3
# tools/check/overlap_split.py OUT_DIR: splits the overlaps of a holdfast-check
# run (its worker histories) as RELIABILITY.md does. The report's "overlaps untold/told"
# column counts the same, with "lost on arrival" (doa here) among the told.
# Overlaps per run dir: a hold B granted while another hold A (same lock) was
# not yet released. told: A's lease_lost ("lost ok") came before B's grant;
# doa: B's own lease_lost came before its acquire returned; else untold.
import sys, glob, collections
tot = collections.Counter()
for run in sorted(glob.glob(sys.argv[1] + "/*-seed*")):
    holds = {}; lost = {}
    for f in glob.glob(run + "/worker-*.log"):
        for line in open(f):
            p = line.split()
            if len(p) < 6: continue
            t, op, st, lock, seq = int(p[0]), p[2], p[3], p[4], p[5]
            k = (f, lock, seq)
            if op == "acquire" and st == "ok": holds[k] = [t, None]
            elif op == "release" and st == "invoke" and k in holds: holds[k][1] = t
            elif op == "lost" and st == "ok": lost[k] = t
    for a, (s, e) in holds.items():
        for b, (s2, _) in holds.items():
            if a[0] == b[0] or a[1] != b[1] or not (s < s2 < (e if e is not None else float("inf"))): continue
            if a in lost and lost[a] < s2: tot["told"] += 1
            elif b in lost and lost[b] <= s2: tot["doa"] += 1
            else: tot["untold"] += 1
print(sys.argv[1], dict(tot), "total", sum(tot.values()))
