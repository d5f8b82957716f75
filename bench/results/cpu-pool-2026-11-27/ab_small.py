import sys, time, numpy as np
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "/work/main/bench")
import volccl, cc3d, cv2
from cpu_interleaved import images
cv2.setNumThreads(2)
runs = int(sys.argv[2])
def med(f):
    f(); t = []
    for _ in range(runs):
        s = time.perf_counter(); f(); t.append(time.perf_counter() - s)
    return sorted(t)[len(t) // 2] * 1e3
cases = []
for name in ["hilbert-128-o5", "hilbert-128-o6", "oasis-0455", "random-256-d5-g8"]:
    v = np.load(f"/tmp/cd/{name}.npy")
    for c in (26, 6):
        cases.append((name, c, v))
for name, img in images():
    if name.endswith(("g1", "g4", "g16")) and ("d30" in name or "d70" in name):
        for c in (8, 4):
            cases.append((name, c, img))
for name, v, c in [(n, v, c) for n, c, v in cases]:
    a = volccl.connected_components(v, connectivity=c, device="cpu", threads=2)
    b = cc3d.connected_components(v, connectivity=c)
    assert np.array_equal(a, b), (name, c)
    t2 = med(lambda: volccl.connected_components(v, connectivity=c, device="cpu", threads=2))
    t1 = med(lambda: volccl.connected_components(v, connectivity=c, device="cpu", threads=1))
    print(f"{name} c{c} 2t {t2:.2f} 1t {t1:.2f}", flush=True)
