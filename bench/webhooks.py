"""The webhook half of scripts/bench. Usage: webhooks.py summarize WITH.txt WITHOUT.txt [SLOW.txt],
webhooks.py drain PORT STAFF_KEY (waits for an empty backlog), or
webhooks.py keepup PORT STAFF_KEY SECONDS LABEL: while wrk runs for SECONDS against an
instance with an endpoint subscribed to every event, samples its /metrics each second (the
outbox backlog), then waits for the backlog to empty and prints the delivery lag's p50/p99
(from its histogram: the bucket bound each falls under), the largest backlog seen and what
was delivered."""
import re
import statistics
import sys
import time
import urllib.request


def metrics(port, key):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"x-api-key": key})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read().decode()


def value(text, pattern):
    match = re.search(pattern, text, re.M)
    return float(match.group(1)) if match else 0.0


def buckets(text):
    return [(float("inf") if bound == "+Inf" else float(bound), float(count)) for bound, count in
            re.findall(r'^cupcake_webhook_delivery_lag_seconds_bucket\{le="([^"]+)"\} (\d+)$', text, re.M)]


def quantile(before, after, q):
    """The bucket bound the q-quantile of the lags observed between two scrapes falls under."""
    old = dict(buckets(before))
    window = [(bound, count - old.get(bound, 0)) for bound, count in buckets(after)]
    total = window[-1][1] if window else 0
    for bound, count in window:
        if total and count >= q * total:
            return bound
    return float("nan")


if sys.argv[1] == "summarize":
    rows = lambda path: [float(line.split()[0]) for line in open(path) if line.strip()]
    with_hooks, without = statistics.median(rows(sys.argv[2])), statistics.median(rows(sys.argv[3]))
    print("  POST throughput with one endpoint subscribed to every event: %.0f req/s, without: %.0f req/s"
          % (with_hooks, without))
    print("  ratio with/without webhooks: %.2fx (target >= 0.90)" % (with_hooks / without))
    if len(sys.argv) > 4:
        slow = statistics.median(rows(sys.argv[4]))
        print("  with an endpoint that takes 5 s to answer: %.0f req/s, ratio to without: %.2fx" % (slow, slow / without))
    sys.exit(0)

if sys.argv[1] == "drain":
    # Waits (up to 10 minutes) until nothing is left to deliver.
    deadline = time.time() + 600
    while time.time() < deadline and value(metrics(sys.argv[2], sys.argv[3]), r"^cupcake_webhook_backlog (\d+)$"):
        time.sleep(0.5)
    sys.exit(0)

port, key, seconds, label = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
first = metrics(port, key)
peak = 0
start = time.time()
while time.time() - start < seconds:
    peak = max(peak, value(metrics(port, key), r"^cupcake_webhook_backlog (\d+)$"))
    time.sleep(1)
stopped = time.time()
deadline = stopped + 300
while time.time() < deadline:
    if value(metrics(port, key), r"^cupcake_webhook_backlog (\d+)$") == 0:
        break
    time.sleep(0.5)
last = metrics(port, key)
placed = r"^cupcake_orders_created_total (\d+)$"
delivered = r'^cupcake_webhook_attempts_total\{outcome="delivered"\} (\d+)$'
print("  %s, %d s: %d orders placed (%.0f/s), %d delivered; largest backlog %d; empty %.1f s after wrk stopped"
      % (label, seconds, value(last, placed) - value(first, placed), (value(last, placed) - value(first, placed)) / seconds,
         value(last, delivered) - value(first, delivered), peak, time.time() - stopped))
print("  %s: delivery lag (event to the receiver's 2xx) p50 <= %s s, p99 <= %s s (target p99 < 1 s)"
      % (label, quantile(first, last, 0.5), quantile(first, last, 0.99)))
