#!/usr/bin/env python3
"""Holds N TCP connections that each sent 40 bytes of a TLS ClientHello (the
red team's memory attack of issue 23), while an honest client posts an
AdmissionReview over TLS every 0.5 s. Prints one JSON object.

    partial_handshakes.py PORT N HOLD_SECONDS BODY_FILE

"opened": connections made (the kernel accepted them), "closed_by_server":
how many the webhook closed meanwhile (handshake timeout, or eviction to make
room), "admissions": the honest client's results (status or error, latency).
"""
import json
import os
import resource
import selectors
import socket
import ssl
import sys
import time

PORT, COUNT, HOLD, BODY = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]

# A ClientHello's first 40 bytes: a record header announcing 512 bytes, the
# handshake header, the version and the start of the random.
PARTIAL_HELLO = bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]) + os.urandom(29)
assert len(PARTIAL_HELLO) == 40

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def admit(body):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=10) as raw:
            with ctx.wrap_socket(raw) as tls:
                tls.sendall(b"POST /validate?timeout=10s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
                answer = b""
                while True:
                    chunk = tls.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
        status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
        return {"status": status, "ms": round((time.monotonic() - start) * 1000, 1)}
    except Exception as e:  # noqa: BLE001 - any failure is a result here
        return {"error": type(e).__name__ + ": " + str(e), "ms": round((time.monotonic() - start) * 1000, 1)}


body = open(BODY, "rb").read()
sel = selectors.DefaultSelector()
opened = failed = closed = 0
start = time.monotonic()
pending = []
for i in range(COUNT):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", PORT))
    pending.append(s)
    sel.register(s, selectors.EVENT_WRITE)
    # Keep the backlog from overflowing: settle what is connected as we go.
    if len(pending) % 256 == 0 or i == COUNT - 1:
        deadline = time.monotonic() + 5
        while sel.get_map() and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=0.5):
                sock = key.fileobj
                sel.unregister(sock)
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    try:
                        sock.send(PARTIAL_HELLO)
                        opened += 1
                        continue
                    except OSError:
                        pass
                failed += 1
                sock.close()
        for key in list(sel.get_map().values()):
            sel.unregister(key.fileobj)
            key.fileobj.close()
            failed += 1
setup_seconds = round(time.monotonic() - start, 2)
live = [s for s in pending if s.fileno() >= 0]

admissions = []
end = time.monotonic() + HOLD
while time.monotonic() < end:
    admissions.append(admit(body))
    time.sleep(0.5)

for s in live:  # how many did the server close meanwhile?
    try:
        if s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
            closed += 1
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
for s in live:
    s.close()
ok = sum(1 for a in admissions if a.get("status") == 200)
print(json.dumps({"opened": opened, "connect_failed": failed, "setup_seconds": setup_seconds,
                  "closed_by_server": closed, "admissions_ok": ok, "admissions": len(admissions),
                  "admission_ms_max": max((a["ms"] for a in admissions), default=0),
                  "failures": [a for a in admissions if a.get("status") != 200][:5]}))
