"""Plot of the partitions benchmark (``bench/rust-peers/src/bin/partitions.rs``, its ``--json``
output; matplotlib).

    python plot_partitions.py RESULTS.jsonl [MORE.jsonl ...] PLOTS_DIR

``partitions.png``: records per second of every timed round, per backend and mode (fluss-writer
callbacks into a table without partitions and into one with 3 partitions; on the cluster also
fluss-rs 1.0.0 futures into the partitioned table), the median as a bar. Several result files
(e.g. runs with ``--plain-buckets 4`` and ``12``) go into one plot; each mode is labelled with its
buckets (per partition for a partitioned table).
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    *results, out_dir = sys.argv[1:]
    rows = []
    for path in results:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip().startswith("{")]
    runs: dict[tuple[str, str], list[float]] = defaultdict(list)
    runs_order: list[str] = []
    for r in rows:
        if r.get("bench") == "partitions_run":
            per = " per partition" if "partitioned" in r["client"] else ""
            label = f"{r['client']}, {r.get('buckets', 4)} buckets{per}"
            if label not in runs_order:
                runs_order.append(label)
            runs[(r["backend"], label)].append(r["records"] / r["secs"] / 1e6)
    backends = [b for b in ("embedded", "cluster") if any(k[0] == b for k in runs)]
    fig, axes = plt.subplots(1, len(backends), figsize=(6 * len(backends), 4), squeeze=False)
    for ax, backend in zip(axes[0], backends):
        keys = sorted(
            (k for k in runs if k[0] == backend),
            key=lambda k: ("fluss-rs" in k[1], "partitioned" in k[1], runs_order.index(k[1])),
        )
        for i, k in enumerate(keys):
            v = sorted(runs[k])
            ax.bar(i, v[len(v) // 2], color="#9ecae1", width=0.6)
            ax.scatter([i] * len(v), v, color="#08519c", s=14, zorder=3)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([k[1].replace(" ", "\n") for k in keys], fontsize=8)
        ax.set_ylabel("million records/s (bar: median, dots: rounds)")
        ax.set_title(f"{backend}: 3 partitions vs none, ~100 B rows")
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    fig.savefig(os.path.join(out_dir, "partitions.png"), dpi=110)


if __name__ == "__main__":
    main()
