#!/usr/bin/env python3
"""Server-Sent Event streams at volume against a running `cupcake serve` (scripts/bench,
section 6): N streams of every order's events held open from several loopback addresses (63
each, under the server's 64 connections a client may hold); then, round after round, one order
placed and moved, and the time from the move's answer to its message on every stream. Prints
the p50, p99 and max over every (round, stream), and the server's resident memory with the
streams open (from /proc).

Usage: bench/streams.py PORT SERVER_PID [STREAMS] [ROUNDS]"""

import asyncio
import json
import sys
import time
import urllib.request


async def open_stream(port, index):
    source = f"127.0.0.{2 + index // 63}"
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(b"GET /api/events/stream HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    if b" 200 " not in head.split(b"\r\n", 1)[0]:
        raise SystemExit(f"stream {index}: {head[:80]!r}")
    return reader, writer


async def wait_for(reader, order_id, status):
    """Reads messages until the one for (order_id, status); the monotonic time it arrived."""
    while True:
        block = await reader.readuntil(b"\n\n")
        for line in block.split(b"\n"):
            if line.startswith(b"data: "):
                event = json.loads(line[6:])
                if event.get("orderId") == order_id and event.get("status") == status:
                    return time.monotonic()


def call(port, method, path, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, data=json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def main():
    port, pid = int(sys.argv[1]), int(sys.argv[2])
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    streams = [await open_stream(port, index) for index in range(count)]
    await asyncio.sleep(0.5)
    rss = rss_mib(pid)
    order = {"type": 2, "quantity": 5, "name": "Streamed", "streetAddress": "1 Main St", "city": "Nashville",
             "zip": "37201"}
    delays = []
    loop = asyncio.get_running_loop()
    for _ in range(rounds):
        placed = await loop.run_in_executor(None, call, port, "POST", "/api/cupcakes", order)
        order_id = placed["id"]
        waiting = [asyncio.ensure_future(wait_for(reader, order_id, "baking")) for reader, _ in streams]
        await asyncio.sleep(0.2)  # every stream has had the placement by now
        await loop.run_in_executor(None, call, port, "PATCH", f"/api/cupcakes/{order_id}", {"status": "baking"})
        answered = time.monotonic()
        arrived = await asyncio.wait_for(asyncio.gather(*waiting), timeout=30)
        delays += [max(0.0, at - answered) * 1000 for at in arrived]
    for _, writer in streams:
        writer.close()
    delays.sort()
    p50 = delays[len(delays) // 2]
    p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
    print(f"  {count} streams, {rounds} moves: from the move's answer to its message on every stream: "
          f"p50 {p50:.1f} ms, p99 {p99:.1f} ms (target < 100), max {delays[-1]:.1f} ms; "
          f"server RSS with the streams open {rss:.1f} MiB (target < 64)")


asyncio.run(main())
