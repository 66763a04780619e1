#!/usr/bin/env python3
"""Render the PNG plots of bench/README.md from one results file (JSON lines).

    scripts/bench-plot.py bench/results/<date>-<commit>.jsonl bench/plots

Reads the objects written by bench/rust-peers (peers_summary, dispatch, ack_latency, backlog_rss,
bytes_per_callback), by scripts/bench-all.sh (cargo_bench), bench/python (py_cluster) and bench/cpp
(cpp_cluster); ignores anything else.
"""
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {
    "fluss-writer/callback": "#1f77b4",
    "fluss-rs/future": "#d62728",
    "fluss-writer/detached": "#aec7e8",
    "fluss-rs/dropped": "#ff9896",
}


def load(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return out


def throughput(rows, outdir, backend, fname, title):
    s = [r for r in rows if r.get("bench") == "peers_summary" and r.get("backend") == backend]
    if not s:
        return None
    panels = sorted({(r["row_bytes"], r.get("compression", "NONE")) for r in s})
    clients = [c for c in COLORS if any(r["client"] == c for r in s)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.2), squeeze=False)
    for ax, (rb, comp) in zip(axes[0], panels):
        sub = [r for r in s if r["row_bytes"] == rb and r.get("compression", "NONE") == comp]
        buckets = sorted({r["buckets"] for r in sub})
        width = 0.8 / max(1, len(clients))
        for ci, c in enumerate(clients):
            xs, ys = [], []
            for bi, b in enumerate(buckets):
                m = [r for r in sub if r["client"] == c and r["buckets"] == b]
                if m:
                    xs.append(bi + (ci - (len(clients) - 1) / 2) * width)
                    ys.append(m[0]["median_records_per_s"] / 1e6)
            bars = ax.bar(xs, ys, width, label=c, color=COLORS[c])
            if c == "fluss-writer/callback" and backend == "cluster":
                for bar, b in zip(bars, buckets):
                    m = [r for r in sub if r["client"] == c and r["buckets"] == b]
                    ratio = m[0].get("ratio_vs_fluss_rs_future")
                    if ratio:
                        ax.annotate(f"{ratio:.2f}x", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(buckets)))
        ax.set_xticklabels([f"{b} bucket{'s' if b > 1 else ''}" for b in buckets])
        label = f"{rb} B rows" + (f", table compression {comp}" if backend == "cluster" else "")
        ax.set_title(label, fontsize=10)
        ax.set_ylabel("median M records/s")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    p = os.path.join(outdir, fname)
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def latency(rows, outdir):
    s = [r for r in rows if r.get("bench") == "ack_latency"]
    if not s:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    labels, p50, p99 = [], [], []
    for r in s:
        labels.append(f"{r['backend']}\nack->callback")
        p50.append(r["ack_to_callback_p50_ns"] / 1e3)
        p99.append(r["ack_to_callback_p99_ns"] / 1e3)
    for r in s:
        labels.append(f"{r['backend']}\nsubmit->callback")
        p50.append(r["submit_to_callback_p50_ns"] / 1e3)
        p99.append(r["submit_to_callback_p99_ns"] / 1e3)
    x = range(len(labels))
    ax.bar([i - 0.2 for i in x], p50, 0.4, label="p50")
    ax.bar([i + 0.2 for i in x], p99, 0.4, label="p99")
    ax.axhline(200, color="k", ls="--", lw=1, label="target: p99 ack->callback < 200 us")
    ax.set_yscale("log")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("microseconds (log)")
    rate = s[0].get("target_rate")
    ax.set_title(f"Latency, paced writer ({rate} records/s, batch-timeout 1 ms, 4 buckets)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3, which="both")
    fig.tight_layout()
    p = os.path.join(outdir, "latency.png")
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def backlog(rows, outdir):
    s = [r for r in rows if r.get("bench") == "backlog_rss"]
    if not s:
        return None
    by = defaultdict(list)
    for r in s:
        by[r["max_pending_callbacks"]].append(r)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for n in sorted(by):
        pts = sorted(by[n], key=lambda r: r["t_s"])
        t = [r["t_s"] for r in pts]
        a1.plot(t, [r["rss_bytes"] / 2**20 for r in pts], label=f"max_pending_callbacks={n:,}")
        a2.plot(t, [r["pending_callbacks"] for r in pts], label=f"max_pending_callbacks={n:,}")
        a2.axhline(n, ls=":", lw=0.8, color=a2.lines[-1].get_color())
    a1.set_xlabel("seconds")
    a1.set_ylabel("process RSS (MiB)")
    a1.set_title("RSS under a slow-callback backlog", fontsize=10)
    a2.set_xlabel("seconds")
    a2.set_ylabel("pending callbacks")
    a2.set_yscale("log")
    a2.set_title("pending callbacks (dotted: the bound)", fontsize=10)
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    sl = s[0].get("callback_sleep_us")
    fig.suptitle(f"Writer fed as fast as possible, callback sleeps {sl} us, wait-timeout unbounded ({s[0]['backend']})", fontsize=10)
    fig.tight_layout()
    p = os.path.join(outdir, "backlog_rss.png")
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def dispatch(rows, outdir):
    labels, vals = [], []
    for r in rows:
        if r.get("bench") == "dispatch":
            labels.append("full completion path\n(micro)")
            vals.append(r["median_callbacks_per_s"] / 1e6)
        elif r.get("bench") == "cargo_bench" and r.get("callbacks_per_s"):
            labels.append(r["label"].replace(", ", "\n"))
            vals.append(r["callbacks_per_s"] / 1e6)
    if not vals:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    ax.bar(range(len(vals)), vals, color="#1f77b4")
    for i, v in enumerate(vals):
        ax.annotate(f"{v:.1f}", (i, v), ha="center", va="bottom", fontsize=8)
    ax.axhline(10, color="k", ls="--", lw=1, label="target: 10 M callbacks/s (Rust)")
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("M callbacks/s, one FIFO worker")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    p = os.path.join(outdir, "dispatch.png")
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def bindings(rows, outdir, bench, fname, title, ratio_key, ref):
    """Python (py_cluster) or C++ (cpp_cluster) cluster cases: bars per client, panels per row size."""
    s = [r for r in rows if r.get("bench") == bench]
    if not s:
        return None
    clients = list(dict.fromkeys(r["client"] for r in s))
    sizes = sorted({r["row_bytes"] for r in s})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4.2), squeeze=False)
    for ax, rb in zip(axes[0], sizes):
        sub = [r for r in s if r["row_bytes"] == rb]
        buckets = sorted({r["buckets"] for r in sub})
        width = 0.8 / len(clients)
        for ci, c in enumerate(clients):
            for bi, b in enumerate(buckets):
                m = [r for r in sub if r["client"] == c and r["buckets"] == b]
                if not m:
                    continue
                x = bi + (ci - (len(clients) - 1) / 2) * width
                bar = ax.bar([x], [m[0]["median_records_per_s"] / 1e6], width, color=f"C{ci}", label=c if bi == 0 else None)[0]
                if c in ref and m[0].get(ratio_key):
                    ax.annotate(f"{m[0][ratio_key]:.2f}x", (x, bar.get_height()), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(buckets)))
        ax.set_xticklabels([f"{b} bucket{'s' if b > 1 else ''}" for b in buckets])
        ax.set_title(f"{rb} B rows", fontsize=10)
        ax.set_ylabel("median M records/s")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    p = os.path.join(outdir, fname)
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def main():
    rows = load(sys.argv[1])
    outdir = sys.argv[2] if len(sys.argv) > 2 else "bench/plots"
    os.makedirs(outdir, exist_ok=True)
    made = [
        throughput(rows, outdir, "cluster", "peers_cluster.png", "fluss-writer vs fluss-rs 1.0.0 on one Fluss 0.9.1 cluster (median records/s; label: callback vs fluss-rs future)"),
        throughput(rows, outdir, "embedded", "embedded.png", "fluss-writer on the embedded engine (median records/s)"),
        latency(rows, outdir),
        backlog(rows, outdir),
        dispatch(rows, outdir),
        bindings(rows, outdir, "py_cluster", "python_cluster.png", "Python: fluss_writer vs pyfluss 1.0.0 on one cluster (label: fluss_writer / pyfluss)", "ratio_vs_pyfluss", ("fw/callback", "fw/arrow")),
        bindings(rows, outdir, "cpp_cluster", "cpp_cluster.png", "C++: callbacks vs Append + Wait thread on the cluster (label: callback / wait)", "ratio_callback_vs_wait", ("fluss-writer-cpp/callback",)),
    ]
    for p in made:
        if p:
            print(p)


if __name__ == "__main__":
    main()
