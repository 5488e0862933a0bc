"""A webhook receiver that takes 5 s to answer each delivery (scripts/bench, section 7): the
server's delivery threads all wait on it, and placing orders must not notice.
Usage: slow-receiver.py PORT [SECONDS]"""
import http.server
import sys
import time

delay = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        time.sleep(delay)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *arguments):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
server.daemon_threads = True
server.serve_forever()
