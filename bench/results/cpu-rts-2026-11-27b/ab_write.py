import sys, time, numpy as np
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "/work/main/bench")
import volccl, cc3d
from cpu_interleaved import images
runs = int(sys.argv[2])
def med(f):
    f(); t = []
    for _ in range(runs):
        s = time.perf_counter(); f(); t.append(time.perf_counter() - s)
    return sorted(t)[len(t) // 2] * 1e3
cases = []
for name in ["random-256-d30-g1", "random-256-d60-g1", "random-256-d30-g8", "connectomics", "mitochondria", "oasis-0455"]:
    v = np.load(f"/tmp/cd/{name}.npy")
    for c in (26, 6):
        cases.append((name, c, v))
imgs = dict(images())
for d in ("d30-g1", "d70-g1", "d90-g1", "d50-g4"):
    for c in (8, 4):
        cases.append(("image-2048-" + d, c, imgs["image-2048-" + d]))
for name, c, v in cases:
    a = volccl.connected_components(v, connectivity=c, device="cpu", threads=2, binary_image=True)
    b = cc3d.connected_components(v, connectivity=c, binary_image=v.ndim == 3)
    assert np.array_equal(a, b), (name, c)
    t2 = med(lambda: volccl.connected_components(v, connectivity=c, device="cpu", threads=2, binary_image=True))
    t1 = med(lambda: volccl.connected_components(v, connectivity=c, device="cpu", threads=1, binary_image=True))
    print(f"{name} c{c} 2t {t2:.2f} 1t {t1:.2f}", flush=True)
