"""Prints 'requests_per_second p50_ms p99_ms non2xx' from wrk --latency output; given the
server's CPU ticks spent during the run as a second argument, also its CPU microseconds per
request."""
import os
import re
import sys

text = open(sys.argv[1]).read()


def ms(label):
    match = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$" % label, text, re.M)
    if not match:
        return float("nan")
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
fields = "%.0f %.3f %.3f %d" % (rps, ms("50"), ms("99"), int(non2xx.group(1)) if non2xx else 0)
if len(sys.argv) > 2:
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    fields += " %.1f" % (int(sys.argv[2]) * 1e6 / os.sysconf("SC_CLK_TCK") / max(requests, 1))
print(fields)
