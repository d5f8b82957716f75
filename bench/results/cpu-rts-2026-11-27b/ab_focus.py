import sys, time, numpy as np
sys.path.insert(0, sys.argv[1])
import volccl
runs = int(sys.argv[2])
for name, c in [("connectomics", 6), ("connectomics", 26), ("mitochondria", 6)]:
    v = np.load(f"/tmp/cd/{name}.npy")
    f = lambda: volccl.connected_components(v, connectivity=c, device="cpu", threads=1, binary_image=True)
    f(); t = []
    for _ in range(runs):
        s = time.perf_counter(); f(); t.append(time.perf_counter() - s)
    print(f"{name} c{c} 2t 0 1t {sorted(t)[len(t)//2]*1e3:.2f}", flush=True)
