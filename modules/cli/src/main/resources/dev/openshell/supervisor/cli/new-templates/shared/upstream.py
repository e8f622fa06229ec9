#!/usr/bin/env python3
"""A loopback upstream for trying a middleware stage: answers every request with what it received.

Usage: python3 upstream.py PORT    (listens on 127.0.0.1 only)
The answer is JSON: {"method", "path", "headers": {name: value}, "body"}, so that a header a stage wrote and a body
it replaced are visible to the client.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Echo(BaseHTTPRequestHandler):
    def _answer(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        out = json.dumps({"method": self.command, "path": self.path,
                          "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body},
                         indent=1).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, fmt, *args):
        sys.stderr.write("upstream: " + (fmt % args) + "\n")


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Echo)
    print("upstream listening on 127.0.0.1:%s" % sys.argv[1], flush=True)
    server.serve_forever()
