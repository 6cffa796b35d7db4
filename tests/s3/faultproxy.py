#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for the S3 tests (issue 20 item 5; docs/object-storage.md).

    faultproxy.py UPSTREAM_PORT PORT_FILE SCHEDULE_FILE LOG_FILE [HOLD_FILE]

Listens on 127.0.0.1 (a free port, written to PORT_FILE) and forwards every request to
127.0.0.1:UPSTREAM_PORT unchanged (the Host header too, so SigV4 signatures stay valid). Before
each request it reads SCHEDULE_FILE: one fault per line, applied to the next requests in turn
(a line is used once; an empty file forwards everything; FAULT@TEXT applies to the next
request whose path contains TEXT, whatever its position):

    500 | 503 | 429    answer with that status and an S3 error document, forward nothing
    reset              read the request, then close the connection without an answer
    fwd-reset          forward the request, then close without an answer (a lost answer)
    truncate           forward, answer with the full Content-Length but half the body, close
    stall              wait 3 s before forwarding (the client's timeout should fire first)
    ok200              answer 200 with an ETag and store nothing (a server that ignores
                       If-None-Match and says yes to every write, as s3rver does)
    pass               forward normally

HOLD_FILE, when it exists and holds a number N, makes every request whose path has
"/commits/" wait until N such requests have arrived, then lets them all go at once: N writers
that commit to one root race on the same key at the server (tests/cli/s3_vortex.sh).

Each request is logged to LOG_FILE as "METHOD PATH [RANGE] -> what happened", with the bytes
of the answer's body when it was forwarded ("pass (upstream 206) 4096 B").
"""
import http.client
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UP = int(sys.argv[1])
PORT_FILE, SCHED, LOG = sys.argv[2], sys.argv[3], sys.argv[4]
HOLD = sys.argv[5] if len(sys.argv) > 5 else None
lock = threading.Lock()
held = threading.Condition()
arrived = [0]


def hold_commits(path):
    if not HOLD or "/commits/" not in path:
        return
    try:
        n = int(open(HOLD).read().strip() or 0)
    except (FileNotFoundError, ValueError):
        return
    with held:
        arrived[0] += 1
        held.notify_all()
        held.wait_for(lambda: arrived[0] >= n, timeout=60)


def next_fault(path):
    """The fault for this request: the first line "FAULT@SUBSTRING" whose substring is in the
    path, else the first line without '@'; either is used up."""
    with lock:
        try:
            lines = open(SCHED).read().splitlines()
        except FileNotFoundError:
            return "pass"
        pick = None
        for i, l in enumerate(lines):
            if "@" in l and l.split("@", 1)[1] in path:
                pick = i
                break
        if pick is None:
            pick = next((i for i, l in enumerate(lines) if "@" not in l), None)
        if pick is None:
            return "pass"
        fault = lines[pick].split("@", 1)[0].strip() or "pass"
        open(SCHED, "w").write("".join(l + "\n" for i, l in enumerate(lines) if i != pick))
        return fault


def log(line):
    with lock:
        with open(LOG, "a") as f:
            f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _forward(self, body):
        c = http.client.HTTPConnection("127.0.0.1", UP, timeout=30)
        hdrs = {k: v for k, v in self.headers.items()}
        c.request(self.command, self.path, body=body if body or self.command in ("PUT", "POST") else None,
                  headers=hdrs)
        r = c.getresponse()
        data = r.read()
        out = (r.status, r.getheaders(), data)
        c.close()
        return out

    def _reply(self, status, headers, data, cut=False):
        self.send_response_only(status)
        sent_len = False
        for k, v in headers:
            if k.lower() in ("transfer-encoding", "connection"):
                continue
            if k.lower() == "content-length":
                sent_len = True
            self.send_header(k, v)
        if not sent_len:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data[: len(data) // 2] if cut else data)
        self.wfile.flush()
        if cut:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

    def _handle(self):
        fault = next_fault(self.path)
        body = self._body()
        hold_commits(self.path)
        what = fault
        if fault in ("500", "503", "429"):
            doc = ("<?xml version=\"1.0\"?><Error><Code>Injected%s</Code><Message>fault proxy</Message></Error>"
                   % fault).encode()
            self._reply(int(fault), [("Content-Type", "application/xml")], doc)
        elif fault == "ok200":
            self._reply(200, [("ETag", '"00000000000000000000000000000000"')], b"")
        elif fault == "reset":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif fault == "fwd-reset":
            st, _, _ = self._forward(body)
            what = "fwd-reset (upstream %d)" % st
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        else:
            if fault == "stall":
                time.sleep(3)
            st, hdrs, data = self._forward(body)
            what = "%s (upstream %d) %d B" % (fault, st, len(data))
            self._reply(st, hdrs, data, cut=(fault == "truncate" and len(data) > 1))
        rng = self.headers.get("Range")
        log("%s %s%s -> %s" % (self.command, self.path, " " + rng if rng else "", what))

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass   # a client that gave up on a stalled or reset request: expected here


srv = Server(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
srv.serve_forever()
