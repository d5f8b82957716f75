import collections, statistics, sys
d = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 7 or f[3] != "2t": continue
    v = f[0][0]; key = (f[1], f[2]); d[key][v+"2"].append(float(f[4])); d[key][v+"1"].append(float(f[6]))
for key, m in d.items():
    med = {k: statistics.median(x) for k, x in m.items()}
    print(f"{key[0]:22s} {key[1]:4s} 2t A {med['A2']:7.2f} B {med['B2']:7.2f} ({med['B2']/med['A2']:.2f})   1t A {med['A1']:7.2f} B {med['B1']:7.2f} ({med['B1']/med['A1']:.2f})")
