"""Peak RSS of the Ray relabel command's worker processes at two corpus sizes."""
# usage: python python/bench/ray_memory.py N [N ...]   (the package and ray installed)
from pathlib import Path
import os, subprocess, sys, tempfile, time, shutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "tests"))
os.chdir(ROOT)
import test_relabel  # noqa: E402  (FLAT reads transcripts/ relative to the repo)

def tree_rss(root_pid):
    # every process whose ancestry reaches root_pid
    parents, rss, names = {}, {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            st = open(f"/proc/{d}/stat").read()
            ppid = int(st.rsplit(")", 1)[1].split()[1])
            comm = st[st.index("(") + 1: st.rindex(")")]
            status = open(f"/proc/{d}/status").read()
            kb = next((int(l.split()[1]) for l in status.splitlines() if l.startswith("VmRSS:")), 0)
        except Exception:
            continue
        parents[int(d)], rss[int(d)], names[int(d)] = ppid, kb, comm
    def under(p):
        while p > 1:
            if p == root_pid:
                return True
            p = parents.get(p, 0)
        return False
    mine = [p for p in rss if under(p) or p == root_pid]
    workers = [rss[p] for p in mine if names[p].startswith("ray::")]
    return sum(rss[p] for p in mine), max(workers, default=0)

for n in (int(a) for a in sys.argv[1:]):
    d = Path(tempfile.gettempdir()) / f"toolgate-ray-memory-{n}"
    shutil.rmtree(d, ignore_errors=True); d.mkdir(parents=True)
    test_relabel.generate(d, n, 8)
    t = time.time()
    p = subprocess.Popen([sys.executable, "-m", "toolgate.integrations.ray", "relabel", "logs/*.jsonl",
                          "--out", "out", "--num-cpus", "2", "--shard-lines", "4096"], cwd=d,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak_tree = peak_worker = 0
    while p.poll() is None:
        a, b = tree_rss(p.pid)
        peak_tree, peak_worker = max(peak_tree, a), max(peak_worker, b)
        time.sleep(0.2)
    lines = sum(1 for _ in open(d / "out" / "labels.jsonl", encoding="utf-8"))
    print(f"n={n}: rc={p.returncode} lines={lines} {time.time()-t:.0f}s peak worker RSS {peak_worker/1024:.0f} MiB, peak tree RSS {peak_tree/1024:.0f} MiB", flush=True)
    shutil.rmtree(d, ignore_errors=True)
