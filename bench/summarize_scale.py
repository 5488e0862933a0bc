"""Summarizes scripts/bench's scale-out rounds.

Arguments: the rounds file, the seconds each run lasted, then 'process=peak RSS MiB' pairs. Each line
of the rounds file: 'setup rps p50_ms p99_ms non2xx app_ticks db_ticks proxy_ticks busy_ticks
all_ticks', the ticks being CPU clock ticks spent during the run by the cupcake instances, by
PostgreSQL, by nginx, by the whole machine, and the machine's capacity (cores x time).
Prints each setup's medians over the rounds, the CPU each part spent per 1,000 requests, and
the throughput ratios the issue asks for."""
import os
import statistics
import sys

tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
duration = float(sys.argv[2])
rss = [arg.split("=", 1) for arg in sys.argv[3:]]
runs = {}
for line in open(sys.argv[1]):
    if line.strip():
        name, *values = line.split()
        runs.setdefault(name, []).append([float(v) for v in values])


def median(values):
    return statistics.median(values) if values else float("nan")


def cpu_per_thousand(rounds, column):
    return median([r[column] * tick_ms * 1000 / max(r[0] * duration, 1) for r in rounds])


print("  %-16s %7s %7s %7s %6s   %-17s %5s" % (
    "median", "req/s", "p50 ms", "p99 ms", "non2xx", "CPU ms/1000 req:", "busy"))
print("  %-16s %7s %7s %7s %6s   %5s %5s %5s" % ("", "", "", "", "", "app", "db", "nginx"))
rps = {}
for name, rounds in runs.items():
    rps[name] = median([r[0] for r in rounds])
    print("  %-16s %7.0f %7.2f %7.2f %6d   %5.0f %5.0f %5.0f %4.0f%%" % (
        name, rps[name], median([r[1] for r in rounds]), median([r[2] for r in rounds]),
        sum(r[3] for r in rounds), cpu_per_thousand(rounds, 4), cpu_per_thousand(rounds, 5),
        cpu_per_thousand(rounds, 6), 100 * median([r[7] / max(r[8], 1) for r in rounds])))
print("  peak RSS MiB: " + ", ".join("%s %s" % (name, value) for name, value in rss))

if "pgbench" in rps and "postgres-1" in rps:
    print("  one instance on PostgreSQL / pgbench (one order per commit): %.2fx (goal >= 1.50)" % (
        rps["postgres-1"] / rps["pgbench"]))
if "pgbench-own-cpu" in rps and "postgres-own-cpu" in rps:
    print("  the same, the database on a CPU of its own: %.2fx (goal >= 1.50)" % (
        rps["postgres-own-cpu"] / rps["pgbench-own-cpu"]))
for n in (2, 3):
    if "nginx-%d" % n in rps and "nginx-1" in rps:
        print("  %d instances / 1 behind nginx: %.2fx" % (n, rps["nginx-%d" % n] / rps["nginx-1"]))
if "sqlite-1" in rps and "postgres-1" in rps:
    print("  one instance on SQLite / on PostgreSQL: %.2fx" % (rps["sqlite-1"] / rps["postgres-1"]))
