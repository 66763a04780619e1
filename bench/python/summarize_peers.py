"""Markdown tables of the side-by-side results (Rust ``peers`` and Python ``bench_cluster.py``).

    python summarize_peers.py RESULTS.jsonl [MORE.jsonl ...]

Per case (label, row size, compression, buckets; labels NAME-passN count as NAME), over every file
and pass given: median records/s of fluss-writer callbacks and of the peer (fluss-rs futures; pyfluss handles + flush), the ratio
taken per round (the two runs of a round are adjacent in time) with its median and min..max over
all rounds, the median of each pass (one invocation), client CPU per record of both sides (whole
process, every thread) and their ratio, and the 1-minute load average over the rounds. Then the
``dip`` summaries.
"""

from __future__ import annotations

import collections
import json
import re
import statistics as st
import sys


def rate(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e5 else f"{x / 1e3:.0f} k"


def group(label: str) -> str:
    """Passes of one series (labels NAME-pass1, NAME-pass2, ..., NAME-retry) are one group."""
    return re.sub(r"-(pass\d+|retry)$", "", label)


def verdict(lo: float, hi: float) -> str:
    """From the range of the per-pass medians (with fewer than 3 passes: of the round ratios)."""
    if lo <= 1.0 <= hi:
        return "parity"
    return "ahead" if lo > 1.0 else "behind"


def main() -> None:
    rows = []
    for path in sys.argv[1:]:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.startswith("{")]

    rust = collections.defaultdict(list)
    for r in rows:
        if r.get("bench") == "peers_summary" and r.get("backend") == "cluster":
            rust[(group(r.get("label", "single")), r["row_bytes"], r["compression"], r["buckets"])].append(r)
    if rust:
        print("| label | rows | compression | buckets | fluss-writer callback | fluss-rs future "
              "| ratio per round: median (min..max, n) | per-pass medians | verdict | CPU us/record fw / rs | CPU ratio | load |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k, v in sorted(rust.items()):
        fw = [r for r in v if r["client"] == "fluss-writer/callback"]
        rs = [r for r in v if r["client"] == "fluss-rs/future"]
        rr = [x for r in fw for x in r["round_ratios_vs_fluss_rs_future"]]
        fwr = [x for r in fw for x in r["rates"]]
        rsr = [x for r in rs for x in r["rates"]]
        fwc = [x for r in fw for x in r["cpu_us_per_record"]]
        rsc = [x for r in rs for x in r["cpu_us_per_record"]]
        pm = [r["median_round_ratio_vs_fluss_rs_future"] for r in fw]
        passes = ", ".join(f"{x:.2f}" for x in pm)
        v = verdict(min(pm), max(pm)) if len(pm) >= 3 else verdict(min(rr), max(rr))
        lo, hi = min(r["load1_min"] for r in fw), max(r["load1_max"] for r in fw)
        print(f"| {k[0]} | {k[1]} B | {k[2]} | {k[3]} | {rate(st.median(fwr))} | {rate(st.median(rsr))} "
              f"| **{st.median(rr):.2f}x** ({min(rr):.2f}..{max(rr):.2f}, n={len(rr)}) | {passes} | {v} "
              f"| {st.median(fwc):.2f} / {st.median(rsc):.2f} | {st.median(fwc) / st.median(rsc):.2f}x | {lo:.1f}-{hi:.1f} |")

    py = collections.defaultdict(list)
    for r in rows:
        if r.get("bench") == "py_cluster" and r.get("client") in ("fw/callback", "pyfluss/handles"):
            py[(group(r.get("label", "single")), r["row_bytes"], r["buckets"])].append(r)
    if py:
        print()
        print("| label | rows | buckets | fw callback | pyfluss handles + flush | ratio per round: median (min..max, n) "
              "| per-pass medians | verdict | CPU us/record fw / pyfluss | CPU ratio | load |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k, v in sorted(py.items()):
        fw = [r for r in v if r["client"] == "fw/callback" and r.get("spread_vs_peer")]
        pf = [r for r in v if r["client"] == "pyfluss/handles"]
        if not fw:
            continue
        rr = [x for r in fw for x in r["spread_vs_peer"]["round_ratios"]]
        fwr = [x for r in fw for x in r["rounds_records_per_s"]]
        pfr = [x for r in pf for x in r["rounds_records_per_s"]]
        fwc = [x for r in fw for x in r["rounds_client_cpu_us_per_record"]]
        pfc = [x for r in pf for x in r["rounds_client_cpu_us_per_record"]]
        pm = [r["spread_vs_peer"]["median_round_ratio"] for r in fw]
        passes = ", ".join(f"{x:.2f}" for x in pm)
        v = verdict(min(pm), max(pm)) if len(pm) >= 3 else verdict(min(rr), max(rr))
        lo, hi = min(r["loadavg_1m_rounds"][0] for r in fw), max(r["loadavg_1m_rounds"][1] for r in fw)
        print(f"| {k[0]} | {k[1]} B | {k[2]} | {rate(st.median(fwr))} | {rate(st.median(pfr))} "
              f"| **{st.median(rr):.2f}x** ({min(rr):.2f}..{max(rr):.2f}, n={len(rr)}) | {passes} | {v} "
              f"| {st.median(fwc):.2f} / {st.median(pfc):.2f} | {st.median(fwc) / st.median(pfc):.2f}x | {lo:.1f}-{hi:.1f} |")

    for r in rows:
        if r.get("bench") != "dip_summary":
            continue
        print()
        print(f"{r['label']}: SIGKILL of tablet server {r['killed_tablet']} (leader of buckets {r['buckets_led_by_killed']}), "
              f"{r['buckets']} buckets, {r['row_bytes']} B, RF {r['replication_factor']}, acks {r['acks']}; "
              f"load {r['load1_start']:.1f} -> {r['load1_end']:.1f}; client CPU {r['client_cpu_us_per_record']:.2f} us/record; "
              f"{r['submitted']} submitted, {r['callbacks_ok']} ok, {r['callbacks_failed']} failed; completed {r['completed']}")
        for key in ("kill_callbacks", "kill_records", "restart_callbacks", "restart_records"):
            d = r.get(key)
            if d:
                print(f"  {key}: " + ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in d.items()))


if __name__ == "__main__":
    main()
