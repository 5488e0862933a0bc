"""Prints 'requests_per_second p50_ms p99_ms non2xx' from wrk --latency output."""
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
print("%.0f %.3f %.3f %d" % (rps, ms("50"), ms("99"), int(non2xx.group(1)) if non2xx else 0))
