"""Summarizes alternating wrk rounds: medians for each server, then the ratios."""
import statistics
import sys

def load(path):
    rows = [list(map(float, line.split())) for line in open(path) if line.strip()]
    return [statistics.median(column) for column in zip(*rows)], sum(row[3] for row in rows)

(c_rps, c_p50, c_p99, _, c_cpu), c_bad = load(sys.argv[1])
(n_rps, n_p50, n_p99, _, n_cpu), _ = load(sys.argv[2])
c_rss, n_rss = float(sys.argv[3]), float(sys.argv[4])
print("  %-16s %10s %10s %10s %12s %14s" % ("median", "req/s", "p50 ms", "p99 ms", "peak RSS MiB", "CPU us/req"))
print("  %-16s %10.0f %10.3f %10.3f %12.1f %14.1f" % ("cupcake serve", c_rps, c_p50, c_p99, c_rss, c_cpu))
print("  %-16s %10.0f %10.3f %10.3f %12.1f %14.1f" % ("node echo", n_rps, n_p50, n_p99, n_rss, n_cpu))
print("  throughput ratio cupcake/node: %.2fx (target >= 1.00)" % (c_rps / n_rps))
print("  p99 ratio cupcake/node:        %.2fx (target <= 1.00)" % (c_p99 / n_p99))
print("  cupcake peak RSS:              %.1f MiB (target <= 64)" % c_rss)
if c_bad:
    print("  WARNING: cupcake answered %d non-2xx responses" % c_bad)
