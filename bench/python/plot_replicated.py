"""Plots of the replicated-cluster benchmarks (matplotlib; run by scripts/bench-all.sh).

    python plot_replicated.py RESULTS.jsonl PLOTS_DIR [SERIES.jsonl ...]

- ``replicated_peers.png``: per case (rows, buckets), the per-round ratio of fluss-writer callbacks
  to the peer (fluss-rs futures in Rust, pyfluss handles + flush in Python): median and min..max,
  from the ``peers_summary`` / ``py_cluster`` lines of RESULTS whose label starts with ``replicated``
  (one row per pass).
- ``dip.png`` (one per series file, ``dip-N.png`` after the first): records submitted/s and
  callbacks/s per 100 ms around the SIGKILL of a leader, from the series written by the ``dip``
  binary (``--series``), with the kill and the restart marked.
"""

from __future__ import annotations

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path: str) -> list:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def ratios(rows: list) -> list:
    """(name, median, min, max) of fluss-writer / peer per replicated case."""
    out = []
    for r in rows:
        label = str(r.get("label", ""))
        if not label.startswith("replicated"):
            continue
        tag = label[len("replicated"):].lstrip("-")
        tag = f" ({tag})" if tag else ""
        if r.get("bench") == "peers_summary" and r.get("client") == "fluss-writer/callback" and r.get("backend") == "cluster":
            rr = r.get("round_ratios_vs_fluss_rs_future") or []
            if rr:
                name = f"Rust {r['row_bytes']} B/{r['buckets']}b {r['compression']}{tag}"
                out.append((name, r["median_round_ratio_vs_fluss_rs_future"], min(rr), max(rr)))
        if r.get("bench") == "py_cluster" and r.get("client") == "fw/callback" and r.get("spread_vs_peer"):
            s = r["spread_vs_peer"]
            name = f"Python {r['row_bytes']} B/{r['buckets']}b{tag}"
            out.append((name, s["median_round_ratio"], s["min_round_ratio"], s["max_round_ratio"]))
    return out


def plot_ratios(rows: list, out: str) -> bool:
    data = ratios(rows)
    if not data:
        return False
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(data) + 1.5))
    for i, (_, med, lo, hi) in enumerate(data):
        ax.plot([lo, hi], [i, i], color="tab:blue", lw=2)
        ax.plot([med], [i], "o", color="tab:blue")
    ax.axvline(1.0, color="grey", lw=1, ls="--")
    ax.axvline(1.5, color="tab:orange", lw=1, ls=":", label="1.5x (Python target)")
    ax.set_yticks(range(len(data)))
    ax.set_yticklabels([d[0] for d in data])
    ax.invert_yaxis()
    ax.set_xlabel("fluss-writer callbacks / peer, per round (dot: median; bar: min..max)")
    ax.set_title("Replicated tables (RF 3, acks all), 3 tablet servers on 2 shared cores")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def plot_dip(series: str, out: str) -> None:
    rows = load(series)
    meta = next(r for r in rows if r.get("kind") == "meta")
    ev = {r["event"]: r["t"] for r in rows if r.get("kind") == "event"}
    s = [r for r in rows if r.get("kind") == "sample"]
    t0 = ev.get("kill", 0.0)
    t = [r["t"] - t0 for r in s]
    fig, ax = plt.subplots(figsize=(11, 5.5))
    # Per 100 ms (thin; batches are acknowledged in bursts, so single intervals jump between 0 and
    # 2x the mean) and the 1-s moving mean (thick; what the recovery figure uses).
    n = max(1, round(1.0 / meta.get("tick_s", 0.1)))

    def smooth(v: list) -> list:
        return [sum(v[max(0, i - n + 1) : i + 1]) / len(v[max(0, i - n + 1) : i + 1]) for i in range(len(v))]

    series = [
        ("records submitted/s", "records_per_s", "tab:blue"),
        ("callbacks/s", "callbacks_per_s", "tab:orange"),
        (f"callbacks/s of the killed leader's buckets {meta.get('buckets_led_by_killed')}",
         "killed_leader_buckets_callbacks_per_s", "tab:green"),
    ]
    if any(r["errors_per_s"] for r in s):
        series.append(("failed callbacks/s", "errors_per_s", "red"))
    for name, key, color in series:
        v = [r[key] / 1e3 for r in s]
        ax.plot(t, v, lw=0.6, alpha=0.35, color=color)
        ax.plot(t, smooth(v), lw=1.8, color=color, label=name + " (1-s mean; thin: per 100 ms)")
    for name, style in (("kill", "r"), ("start", "g"), ("started", "g")):
        if name in ev:
            ax.axvline(ev[name] - t0, color=style, ls="--" if name != "started" else ":", lw=1)
    ymax = ax.get_ylim()[1]
    if "kill" in ev:
        ax.text(0, ymax * 0.97, f" SIGKILL tablet {meta.get('killed_tablet')}", color="r", va="top")
    if "start" in ev:
        ax.text(ev["start"] - t0, ymax * 0.97, " start-tablet", color="g", va="top")
    ax.set_xlabel("seconds since the SIGKILL (per 100 ms)")
    ax.set_ylabel("thousands per second")
    ax.set_title(f"Leader crash: {meta['buckets']} buckets, {meta['row_bytes']} B rows, RF {meta['replication_factor']}, "
                 f"acks {meta['acks']}, fluss-writer callbacks")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.15), ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    results, plots = sys.argv[1], sys.argv[2]
    os.makedirs(plots, exist_ok=True)
    if os.path.exists(results) and plot_ratios(load(results), os.path.join(plots, "replicated_peers.png")):
        print(f"wrote {plots}/replicated_peers.png")
    for i, series in enumerate(sys.argv[3:]):
        out = os.path.join(plots, "dip.png" if i == 0 else f"dip-{i + 1}.png")
        plot_dip(series, out)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
