# Profile helper of bench/README.md ("Python on the Fluss cluster"): per-record CPU of the client and of the
# tablet server. Usage: python profile_cluster.py <tablet-server-pid> <row_bytes> <buckets> <records> <mode,mode>
# (modes of bench_cluster.py, e.g. fw/callback,pyfluss/handles); FLUSS_BOOTSTRAP_SERVERS defaults to 127.0.0.1:9323.
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cluster as bc
import fluss_writer as fw

TS = int(sys.argv[1])
RB = int(sys.argv[2])
NB = int(sys.argv[3])
N = int(sys.argv[4])
modes = sys.argv[5].split(",")
tick = os.sysconf("SC_CLK_TCK")


def jcpu():
    f = open(f"/proc/{TS}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick


def allcpu():
    a = open("/proc/stat").readline().split()[1:]
    a = list(map(int, a))
    return sum(a) / tick, (a[3] + a[4]) / tick


b = bc.Bench(os.environ.get("FLUSS_BOOTSTRAP_SERVERS", "127.0.0.1:9323"))
path = f"{bc.DB}.prof{RB}_{NB}_{int(time.time()) % 100000}"
b.conn.admin().create_table(
    path,
    fw.TableDescriptor(
        fw.Schema([("id", "BIGINT", False), ("payload", "STRING")]),
        bucket_count=NB,
        bucket_keys=["id"],
        properties={"table.log.arrow.compression.type": "NONE"},
    ),
)
pool = bc.Pool(RB - 8)
base = 0
for rnd in range(4):
    for m in modes:
        rows = pool.rows(base, N)
        base += N
        j0, c0, (t0, i0) = jcpu(), time.process_time(), allcpu()
        secs = getattr(b, m.replace("/", "_").replace("-", "_"))(path, rows, [])
        j1, c1, (t1, i1) = jcpu(), time.process_time(), allcpu()
        busy = (t1 - t0) - (i1 - i0)
        if rnd:
            print(
                f"{m:16s} {N / secs / 1e3:7.0f} k rec/s"
                f"  client {((c1 - c0) / N * 1e6):5.2f} us/rec ({(c1 - c0) / secs:.2f} cores)"
                f"  tablet server {((j1 - j0) / N * 1e6):5.2f} us/rec ({(j1 - j0) / secs:.2f} cores)"
                f"  machine busy {busy / secs:.2f} of 2 cores",
                flush=True,
            )
b.conn.admin().drop_table(path, ignore_if_not_exists=True)
