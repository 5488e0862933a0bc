"""Webhooks from outside: real `cupcake serve` processes (SQLite, and PostgreSQL when
CUPCAKE_TEST_POSTGRES_URL is set) deliver to a receiver on loopback that checks every delivery
with `standardwebhooks`, the Standard Webhooks specification's own Python library. Run by
scripts/webhooks (and so by scripts/test)."""

import glob
import http.server
import json
import os
import re
import shutil
import signal
import sqlite3
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

CUPCAKE = os.environ.get("CUPCAKE_BIN", ".build/debug/cupcake")
POSTGRES = os.environ.get("CUPCAKE_TEST_POSTGRES_URL")
DOWN_SECONDS = float(os.environ.get("CUPCAKE_WEBHOOK_DOWN_SECONDS", "60"))
APP, STAFF = "app-key-for-webhook-tests", "staff-key-for-webhook-tests"
ORDER = {"type": 1, "quantity": 3, "name": "Ada", "streetAddress": "1 Loop Rd", "city": "Nashville", "zip": "37201"}


def report(*words):
    """One WEBHOOKS line for docs/RELIABILITY.md's figures."""
    print("WEBHOOKS", *words, file=sys.stderr, flush=True)


def wait_until(condition, seconds, message):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(message)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def new_postgres_database():
    """A fresh database on the test PostgreSQL (dropped by nobody: the cluster is the test's)."""
    name = f"cupcake_webhooks_{os.getpid()}_{int(time.time() * 1000) % 10**9}"
    parsed = urllib.parse.urlparse(POSTGRES)
    psql = shutil.which("psql") or sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    subprocess.run([psql, POSTGRES, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    return parsed._replace(path="/" + name).geturl()


class Receiver:
    """An HTTP receiver on 127.0.0.1 that verifies each delivery with standardwebhooks and keeps
    it. `hold` (an Event) makes it wait before answering; `answer` is the status it gives."""

    def __init__(self, secret=None, port=0):
        self.secrets = [secret] if secret else []
        self.lock = threading.Lock()
        self.deliveries = []   # (webhook-id, payload, headers, body) of verified deliveries
        self.started = []      # webhook-ids whose request arrived (before any hold)
        self.refused = []      # why a delivery failed verification
        self.answer = 204
        self.hold = None
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver.lock:
                    receiver.started.append(headers.get("webhook-id"))
                    secrets = list(receiver.secrets)
                if receiver.hold is not None:
                    receiver.hold.wait(60)
                errors = []
                for secret in secrets:
                    try:
                        payload = Webhook(secret).verify(body, headers)
                        with receiver.lock:
                            receiver.deliveries.append((headers["webhook-id"], payload, headers, body))
                        break
                    except WebhookVerificationError as error:
                        errors.append(str(error))
                else:
                    with receiver.lock:
                        receiver.refused.append("; ".join(errors) or "no secret")
                self.send_response(receiver.answer)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hooks"

    def ids(self):
        with self.lock:
            return [delivery[0] for delivery in self.deliveries]

    def stop(self):
        if self.hold is not None:
            self.hold.set()
        self.server.shutdown()
        self.server.server_close()


class Server:
    """`cupcake serve` on 127.0.0.1 and a free port, with the keys and the webhook settings given."""

    def __init__(self, database, allow_private=True, port=0, **settings):
        self.database = database
        config = {"apiKey": APP, "staffKey": STAFF, "webhookRetryScale": 0.001, "webhookTimeoutSeconds": 3,
                  "webhookConnectTimeoutSeconds": 1, "webhookAllowPrivateAddresses": allow_private}
        config.update(settings)
        handle, self.config = tempfile.mkstemp(prefix="cupcake-webhooks-", suffix=".json")
        with os.fdopen(handle, "w") as file:
            json.dump(config, file)
        self.process = subprocess.Popen(
            [CUPCAKE, "serve", "--host", "127.0.0.1", "--port", str(port), "--no-pin-threads", "--quiet",
             "--database", database, "--config", self.config],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        deadline = time.time() + 30
        self.url = None
        while time.time() < deadline and self.url is None:
            line = self.process.stderr.readline()
            if not line:
                break
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
            if match:
                self.url = match.group(1)
        if self.url is None:
            self.kill()
            raise RuntimeError("cupcake serve did not start")
        # Keep reading its log so that it never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.process.stderr], daemon=True).start()

    def kill(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()

    def api(self, method, path, body=None, key=STAFF):
        request = urllib.request.Request(self.url + path, method=method)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        request.add_header("x-api-key", key)
        try:
            with urllib.request.urlopen(request, data=data, timeout=20) as response:
                text = response.read()
                if "json" not in response.headers.get("Content-Type", ""):
                    return response.status, text.decode()
                return response.status, (json.loads(text) if text else None)
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, (json.loads(text) if text else None)

    def place(self):
        status, order = self.api("POST", "/api/cupcakes", ORDER, key=APP)
        assert status == 201, (status, order)
        return order["id"]

    def move(self, order_id, status):
        code, body = self.api("PATCH", f"/api/cupcakes/{order_id}", {"status": status})
        assert code == 200, (code, body)

    def events(self):
        """Every event in the feed, page by page."""
        found, after = [], ""
        for _ in range(10_000):
            status, page = self.api("GET", f"/api/events?limit=500&after={after}")
            assert status == 200, (status, page)
            found += page["data"]
            if not page["data"]:
                return found
            after = page["next_after"]
        raise AssertionError("the feed did not end")

    def add_endpoint(self, url, types=None):
        body = {"url": url}
        if types is not None:
            body["eventTypes"] = types
        return self.api("POST", "/api/webhook-endpoints", body)


class WebhookTest(unittest.TestCase):
    engine = "sqlite"

    def database(self):
        if self.engine == "postgres":
            if not POSTGRES:
                self.skipTest("no PostgreSQL (CUPCAKE_TEST_POSTGRES_URL)")
            return new_postgres_database()
        return os.path.join(tempfile.mkdtemp(prefix="cupcake-webhooks-"), "orders.sqlite")

    def serve(self, database, **settings):
        server = Server(database, **settings)
        self.addCleanup(server.stop)
        return server

    def receiver(self, secret=None, port=0):
        receiver = Receiver(secret, port)
        self.addCleanup(receiver.stop)
        return receiver

    def subscribe(self, server, receiver, types=None):
        status, endpoint = server.add_endpoint(receiver.url, types)
        self.assertEqual(status, 201, endpoint)
        self.assertTrue(endpoint["secret"].startswith("whsec_"))
        receiver.secrets.append(endpoint["secret"])
        return endpoint

    def assert_in_order(self, receiver):
        """Each order's events reached the receiver in the order they happened (by version)."""
        seen, versions = set(), {}
        for webhook_id, payload, _, _ in list(receiver.deliveries):
            if webhook_id in seen:
                continue
            seen.add(webhook_id)
            order = payload["data"]
            self.assertGreater(order["version"], versions.get(order["id"], 0),
                               f"order {order['id']}: version {order['version']} after {versions.get(order['id'])}")
            versions[order["id"]] = order["version"]

    # ---- signatures ------------------------------------------------------------------------

    def test_every_delivery_verifies_and_the_library_refuses_forgeries(self):
        server = self.serve(self.database())
        receiver = self.receiver()
        endpoint = self.subscribe(server, receiver)
        ids = [server.place() for _ in range(5)]
        server.move(ids[0], "baking")
        server.move(ids[1], "baking")
        code, _ = server.api("DELETE", f"/api/cupcakes/{ids[2]}")
        self.assertIn(code, (200, 204))
        wait_until(lambda: len(receiver.ids()) >= 8, 30, f"8 deliveries expected, got {receiver.ids()}")
        self.assertEqual(receiver.refused, [])
        types = sorted(payload["type"] for _, payload, _, _ in receiver.deliveries)
        self.assertEqual(types, ["order.cancelled"] + ["order.placed"] * 5 + ["order.status_changed"] * 2)
        self.assertEqual(len(set(receiver.ids())), len(receiver.ids()))
        # The feed holds the same events under the same ids.
        feed = server.events()
        self.assertEqual(sorted(event["id"] for event in feed), sorted(receiver.ids()))
        self.assert_in_order(receiver)

        webhook_id, _, headers, body = receiver.deliveries[0]
        verifier = Webhook(endpoint["secret"])
        verifier.verify(body, headers)
        with self.assertRaises(WebhookVerificationError):
            verifier.verify(body.replace(b'"quantity":3', b'"quantity":30'), headers)
        with self.assertRaises(WebhookVerificationError):
            Webhook("whsec_" + "QUJD" * 8).verify(body, headers)
        old = datetime.now(tz=timezone.utc) - timedelta(hours=1)
        stale = dict(headers, **{"webhook-timestamp": str(int(old.timestamp())),
                                 "webhook-signature": verifier.sign(webhook_id, old, body.decode())})
        with self.assertRaises(WebhookVerificationError):
            verifier.verify(body, stale)

        # A rotated secret: both sign for a grace period, so a receiver on either verifies.
        code, rotated = server.api("POST", f"/api/webhook-endpoints/{endpoint['id']}/rotate-secret")
        self.assertEqual(code, 200)
        self.assertNotEqual(rotated["secret"], endpoint["secret"])
        receiver.secrets = [rotated["secret"]]
        server.place()
        wait_until(lambda: len(receiver.ids()) >= 9, 30, "the delivery after the rotation did not come")
        _, _, headers, body = receiver.deliveries[-1]
        self.assertEqual(len(headers["webhook-signature"].split(" ")), 2)
        Webhook(endpoint["secret"]).verify(body, headers)
        Webhook(rotated["secret"]).verify(body, headers)

        # Each attempt is listed; a redelivery sends the event again under its id.
        code, attempts = server.api("GET", f"/api/webhook-endpoints/{endpoint['id']}/deliveries")
        self.assertEqual(code, 200)
        self.assertTrue(all(attempt["status"] == 204 for attempt in attempts["data"]))
        code, answer = server.api("POST", f"/api/events/{webhook_id}/redeliver")
        self.assertEqual((code, answer["deliveries"]), (202, 1))
        wait_until(lambda: receiver.ids().count(webhook_id) == 2, 30, "the redelivery did not come")

    def test_an_endpoint_gets_only_the_types_it_asked_for_and_410_disables_it(self):
        server = self.serve(self.database())
        receiver = self.receiver()
        endpoint = self.subscribe(server, receiver, ["order.cancelled"])
        placed = server.place()
        cancelled = server.place()
        server.api("DELETE", f"/api/cupcakes/{cancelled}")
        wait_until(lambda: len(receiver.ids()) >= 1, 30, "the cancellation was not delivered")
        time.sleep(0.5)  # anything wrongly sent would have come by now (each poll is 0.1 s)
        self.assertEqual([p["type"] for _, p, _, _ in receiver.deliveries], ["order.cancelled"])
        self.assertEqual(receiver.deliveries[0][1]["data"]["id"], cancelled)
        self.assertNotEqual(placed, cancelled)
        receiver.answer = 410
        server.api("DELETE", f"/api/cupcakes/{server.place()}")
        wait_until(lambda: server.api("GET", f"/api/webhook-endpoints/{endpoint['id']}")[1]["enabled"] is False, 30,
                   "a 410 did not disable the endpoint")
        _, shown = server.api("GET", f"/api/webhook-endpoints/{endpoint['id']}")
        self.assertIn("410", shown["disabledReason"])
        self.assertNotIn("secret", shown)

    # ---- nothing lost ----------------------------------------------------------------------

    def test_a_receiver_down_for_a_minute_gets_everything_in_order_when_back(self):
        server = self.serve(self.database())
        receiver = self.receiver()
        port = receiver.port
        self.subscribe(server, receiver)
        secret = receiver.secrets[0]
        receiver.stop()
        orders, started = [], time.time()
        while time.time() - started < DOWN_SECONDS:
            orders.append(server.place())
            if len(orders) % 3 == 0:
                server.move(orders[-2], "baking")
            time.sleep(0.2)
        back = self.receiver(secret, port=port)
        expected = {event["id"] for event in server.events()}
        self.assertGreater(len(expected), len(orders))
        wait_until(lambda: expected <= set(back.ids()), DOWN_SECONDS + 120,
                   f"{len(expected - set(back.ids()))} of {len(expected)} events never arrived")
        self.assertEqual(back.refused, [])
        self.assert_in_order(back)
        report(self.engine, f"receiver down {DOWN_SECONDS:.0f} s: {len(orders)} orders, {len(expected)} events, "
               f"{len(back.ids())} deliveries after it came back, {len(expected - set(back.ids()))} missing, "
               f"per-order order kept")
        # /metrics saw the retries and the deliveries, and nothing is left to send.
        status, metrics = server.api("GET", "/metrics")
        self.assertEqual(status, 200)
        counts = dict(re.findall(r'^cupcake_webhook_attempts_total\{outcome="(\w+)"\} (\d+)$', metrics, re.M))
        self.assertGreaterEqual(int(counts["delivered"]), len(expected))
        self.assertGreater(int(counts["retry"]), 0)
        wait_until(lambda: re.search(r"^cupcake_webhook_backlog 0$", server.api("GET", "/metrics")[1], re.M), 30,
                   "the backlog did not empty")

    def test_kill_9_during_deliveries_loses_none(self):
        database = self.database()
        server = self.serve(database)
        receiver = self.receiver()
        self.subscribe(server, receiver)
        receiver.hold = threading.Event()
        for _ in range(20):
            server.place()
        wait_until(lambda: len(receiver.started) >= 4, 30, "no delivery started")
        in_flight = set(receiver.started)
        server.kill()
        receiver.hold.set()
        receiver.hold = None
        restarted = self.serve(database)
        expected = {event["id"] for event in restarted.events()}
        self.assertEqual(len(expected), 20)
        wait_until(lambda: expected <= set(receiver.ids()), 60,
                   f"{len(expected - set(receiver.ids()))} events never arrived after the restart")
        ids = receiver.ids()
        duplicates = {webhook_id for webhook_id in ids if ids.count(webhook_id) > 1}
        self.assertLessEqual(duplicates, in_flight, "only deliveries in flight at the kill may come twice")
        self.assert_in_order(receiver)
        report(self.engine, f"kill -9 with {len(in_flight)} deliveries in flight: {len(expected)} events, "
               f"all delivered after the restart, {len(duplicates)} sent twice (each one in flight at the kill)")

    def test_at_volume_past_wal_restarts_and_a_kill_9_mid_load_every_event_arrives(self):
        """The outbox's rows share SQLite's WAL with the orders: 8 clients post while deliveries
        flow until the WAL has been started over 3 times, the server is killed with -9 mid-load,
        and after the restart every event of every stored order arrives, in order; the database
        is sound. (PostgreSQL has no WAL of ours to restart: its kills are the tests above.)"""
        if self.engine != "sqlite":
            self.skipTest("WAL restarts are SQLite's")
        database = self.database()
        server = self.serve(database)
        receiver = self.receiver()
        self.subscribe(server, receiver)

        def wal_restarts():
            try:
                with open(database + "-wal", "rb") as wal:
                    header = wal.read(32)
            except OSError:
                return 0
            return int.from_bytes(header[12:16], "big") if len(header) == 32 else 0

        stop, acknowledged, lock = threading.Event(), [], threading.Lock()

        def client():
            while not stop.is_set():
                try:
                    status, order = server.api("POST", "/api/cupcakes", ORDER, key=APP)
                except OSError:
                    continue  # the kill
                if status == 201:
                    with lock:
                        acknowledged.append(order["id"])

        clients = [threading.Thread(target=client, daemon=True) for _ in range(8)]
        for thread in clients:
            thread.start()
        first = wal_restarts()
        wait_until(lambda: wal_restarts() >= first + 3, 240, "the WAL was not started over 3 times")
        server.kill()
        stop.set()
        for thread in clients:
            thread.join(30)
        restarts = wal_restarts() - first
        restarted = self.serve(database)
        events = restarted.events()
        stored = {event["data"]["id"] for event in events if event["type"] == "order.placed"}
        self.assertLessEqual(set(acknowledged), stored, "an acknowledged order is missing")
        expected = {event["id"] for event in events}
        wait_until(lambda: expected <= set(receiver.ids()), 300,
                   f"{len(expected - set(receiver.ids()))} of {len(expected)} events never arrived")
        self.assertEqual(receiver.refused, [])
        self.assert_in_order(receiver)
        ids = receiver.ids()
        restarted.stop()
        check = sqlite3.connect(database)
        self.assertEqual(check.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        check.close()
        report(self.engine, f"8 clients past {restarts} WAL restarts, kill -9 mid-load: {len(acknowledged)} "
               f"orders acknowledged, all stored; {len(expected)} events, all delivered, "
               f"{len(ids) - len(set(ids))} sent twice; integrity ok")

    def test_a_receiver_that_never_answers_does_not_hold_up_orders(self):
        server = self.serve(self.database())
        receiver = self.receiver()
        self.subscribe(server, receiver)
        receiver.hold = threading.Event()
        ids = [server.place() for _ in range(60)]
        # Every order was answered 201 while each delivery thread waits on the receiver.
        self.assertEqual(len(set(ids)), 60)
        self.assertEqual(receiver.ids(), [])
        receiver.hold.set()
        receiver.hold = None
        wait_until(lambda: len(set(receiver.ids())) >= 60, 60, "deliveries did not resume")
        report(self.engine, "60 orders answered 201 while every delivery thread waited on the receiver")

    # ---- where deliveries may go -----------------------------------------------------------

    def test_loopback_receivers_are_refused_without_the_setting(self):
        server = self.serve(self.database(), allow_private=False)
        receiver = self.receiver()
        for url in (f"http://127.0.0.1:{receiver.port}/", f"http://[::1]:{receiver.port}/",
                    f"http://localhost:{receiver.port}/", f"http://169.254.169.254/latest/meta-data/",
                    f"http://[::ffff:127.0.0.1]:{receiver.port}/", "http://10.1.2.3/", "ftp://example.com/"):
            status, problem = server.add_endpoint(url)
            self.assertEqual(status, 422, (url, problem))
        # A name that resolves to loopback passes the check of the URL, and is refused when
        # resolved, at connect time: nothing reaches the receiver.
        def loopback_only(candidate):
            try:
                found = socket.getaddrinfo(candidate, receiver.port)
            except OSError:
                return False
            return bool(found) and all(info[4][0].startswith("127.") or info[4][0] == "::1" for info in found)

        name = next((candidate for candidate in (socket.gethostname(), "localhost.") if loopback_only(candidate)), None)
        if name is None:
            self.skipTest("no name here resolves to loopback only")
        status, endpoint = server.add_endpoint(f"http://{name}:{receiver.port}/hooks")
        self.assertEqual(status, 201, endpoint)
        server.place()

        def refused():
            _, attempts = server.api("GET", f"/api/webhook-endpoints/{endpoint['id']}/deliveries")
            return attempts["data"] and "loopback" in (attempts["data"][-1]["error"] or "")

        wait_until(refused, 30, "the delivery to a name resolving to loopback was not refused")
        self.assertEqual(receiver.started, [])


class PostgresWebhookTest(WebhookTest):
    engine = "postgres"

    def test_two_instances_share_the_work_and_a_killed_ones_passes_on(self):
        database = self.database()
        first, second = self.serve(database), self.serve(database)
        receiver = self.receiver()
        self.subscribe(first, receiver)
        for index in range(40):
            (first if index % 2 else second).place()
        expected = {event["id"] for event in first.events()}
        wait_until(lambda: expected <= set(receiver.ids()), 60, "not every event arrived")
        self.assertEqual(sorted(receiver.ids()), sorted(expected), "an event was sent twice")
        receiver.hold = threading.Event()
        for index in range(20):
            (first if index % 2 else second).place()
        wait_until(lambda: len(receiver.started) >= len(expected) + 4, 30, "no delivery started")
        in_flight = set(receiver.started[len(expected):])
        first.kill()
        receiver.hold.set()
        receiver.hold = None
        expected = {event["id"] for event in second.events()}
        wait_until(lambda: expected <= set(receiver.ids()), 90, "the killed instance's deliveries never arrived")
        ids = receiver.ids()
        duplicates = {webhook_id for webhook_id in ids if ids.count(webhook_id) > 1}
        self.assertLessEqual(duplicates, in_flight)
        self.assert_in_order(receiver)
        report(self.engine, f"two instances: 40 orders' events delivered once each; one killed with "
               f"{len(in_flight)} in flight: all {len(expected)} delivered, {len(duplicates)} twice")


if __name__ == "__main__":
    unittest.main()
