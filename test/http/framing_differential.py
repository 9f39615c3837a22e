#!/usr/bin/env python3
"""Differential HTTP/1.1 framing test (request smuggling corpus).

Sends the same bytes, each case on a fresh TLS connection, to
  - gpuguard-webhook (its own HTTP/1.1 parser, https/internal/http1.cpp),
  - gpuguard-httplib-reference (cpp-httplib 0.11's parser),
  - nginx, when installed (nginx-light on the CI machine),
and compares the framing verdicts: the responses in order, each either
"ok" (the server framed a request and answered it, whatever its status) or
"reject" (a framing error: 400, 411, 413, 431, 501, 505), a reject ending
the connection.

gpuguard must agree with each peer, or be the stricter one: the same
verdicts up to a request gpuguard rejects and the peer answers (or waits
on). Every such difference must be listed in docs/reliability.md, section
"HTTP framing against other servers", subsection "gpuguard is stricter" (a
table row naming the case in backticks). Two peer behaviours are not
differences of framing and are accepted when another peer frames exactly
what gpuguard frames:
  - the peer answers fewer requests without rejecting one (it stopped
    reading: cpp-httplib 0.11 answers only the first of requests written at
    once);
  - the peer rejects what RFC 9112 says a server should accept; each such
    case is listed under "A peer is stricter", with the clause.
Anything else (gpuguard answering what every peer rejects, or framing
requests differently) fails.

  test/http/framing_differential.py BUILD_DIR      exit 0 pass, 1 fail, 77 skipped
"""
import concurrent.futures
import os
import pathlib
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
FRAMING_STATUSES = {400, 411, 413, 431, 501, 505}
SILENCE = 0.6  # seconds without a byte: the server waits for more


def req(head, body=b""):
    return head.replace(b"\n", b"\r\n") + body


H = b"Host: a\n"
GET = req(b"GET /healthz HTTP/1.1\n" + H + b"\n")

# (name, bytes): each a whole connection's input.
CASES = [
    ("plain-get", GET),
    ("pipelined-three", GET * 3),
    ("post-with-body-then-get", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: 5\n\n", b"hello") + GET),
    ("cl-te", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: 6\nTransfer-Encoding: chunked\n\n", b"0\r\n\r\nX") + GET),
    ("te-cl", req(b"POST /healthz HTTP/1.1\n" + H + b"Transfer-Encoding: chunked\nContent-Length: 3\n\n",
                  b"8\r\nSMUGGLED\r\n0\r\n\r\n") + GET),
    ("te-chunked", req(b"POST /healthz HTTP/1.1\n" + H + b"Transfer-Encoding: chunked\n\n", b"5\r\nhello\r\n0\r\n\r\n") + GET),
    ("te-chunked-identity", req(b"POST /healthz HTTP/1.1\n" + H + b"Transfer-Encoding: chunked, identity\n\n",
                                b"0\r\n\r\n") + GET),
    ("te-identity", req(b"POST /healthz HTTP/1.1\n" + H + b"Transfer-Encoding: identity\nContent-Length: 5\n\n", b"hello") + GET),
    ("te-xchunked", req(b"POST /healthz HTTP/1.1\n" + H + b"Transfer-Encoding: xchunked\nContent-Length: 5\n\n", b"hello") + GET),
    ("te-space-before-colon", req(b"POST /healthz HTTP/1.1\n" + H + b"Transfer-Encoding : chunked\nContent-Length: 5\n\n",
                                  b"0\r\n\r\n") + GET),
    ("te-obs-fold", req(b"POST /healthz HTTP/1.1\n" + H + b"X-A: b\n Transfer-Encoding: chunked\nContent-Length: 5\n\n",
                        b"0\r\n\r\n") + GET),
    ("duplicate-cl-equal", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: 5\nContent-Length: 5\n\n", b"hello") + GET),
    ("duplicate-cl-different", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: 5\nContent-Length: 50\n\n", b"hello") + GET),
    ("cl-comma-list", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: 5, 5\n\n", b"hello") + GET),
    ("cl-space-before-colon", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length : 5\n\n", b"hello") + GET),
    ("cl-plus", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: +5\n\n", b"hello") + GET),
    ("cl-negative", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: -1\n\n") + GET),
    ("cl-hex", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: 0x5\n\n", b"hello") + GET),
    ("cl-leading-zeros", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: 005\n\n", b"hello") + GET),
    ("cl-huge", req(b"POST /healthz HTTP/1.1\n" + H + b"Content-Length: 99999999999999999999\n\n") + GET),
    ("obs-fold", req(b"GET /healthz HTTP/1.1\n" + H + b"X-A: b\n c\n\n") + GET),
    ("bare-lf", b"GET /healthz HTTP/1.1\nHost: a\n\n" + GET),
    ("bare-cr-in-value", req(b"GET /healthz HTTP/1.1\n" + H + b"X-A: b\rc\n\n") + GET),
    ("nul-in-value", req(b"GET /healthz HTTP/1.1\n" + H + b"X-A: b\0c\n\n") + GET),
    ("space-in-header-name", req(b"GET /healthz HTTP/1.1\n" + H + b"X A: b\n\n") + GET),
    ("missing-host", req(b"GET /healthz HTTP/1.1\n\n") + GET),
    ("duplicate-host", req(b"GET /healthz HTTP/1.1\nHost: a\nHost: b\n\n") + GET),
    ("http10-without-host", req(b"GET /healthz HTTP/1.0\nConnection: keep-alive\n\n") + GET),
    ("connection-close-then-more", req(b"GET /healthz HTTP/1.1\n" + H + b"Connection: close\n\n") + GET),
    ("connection-close-and-keep-alive", req(b"GET /healthz HTTP/1.0\nConnection: close, keep-alive\n\n") + GET),
    ("request-line-double-space", req(b"GET  /healthz HTTP/1.1\n" + H + b"\n") + GET),
    ("absolute-form-target", req(b"GET http://a/healthz HTTP/1.1\n" + H + b"\n") + GET),
    ("http2-preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
    ("unknown-version", req(b"GET /healthz HTTP/1.2\n" + H + b"\n") + GET),
    ("huge-header", req(b"GET /healthz HTTP/1.1\n" + H + b"X-Big: " + b"b" * 70000 + b"\n\n") + GET),
    ("leading-empty-lines", b"\r\n\r\n" + GET),
    ("expect-continue", req(b"POST /healthz HTTP/1.1\n" + H + b"Expect: 100-continue\nContent-Length: 5\n\n", b"hello") + GET),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def read_port(log_path, pattern, proc, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        m = re.search(pattern, pathlib.Path(log_path).read_text(errors="replace"))
        if m:
            return int(m.group(1))
        if proc.poll() is not None:
            return None
        time.sleep(0.05)
    return None


def parse_responses(data):
    """The statuses of the complete responses in `data` (each with a Content-Length)."""
    statuses = []
    while data:
        end = data.find(b"\r\n\r\n")
        if end < 0 or not data.startswith(b"HTTP/1."):
            break
        head = data[:end].decode("latin-1")
        status = int(head.split(" ", 2)[1])
        m = re.search(r"(?im)^content-length:\s*(\d+)", head)
        length = int(m.group(1)) if m else 0
        data = data[end + 4 + length:]
        if status == 100:
            continue  # 100 Continue is not an answer
        statuses.append(status)
    return statuses


def send(port, payload):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw) as s:
            try:
                s.sendall(payload)
            except OSError:
                pass  # the server may close while we still send (a huge header)
            s.settimeout(SILENCE)
            while True:
                try:
                    chunk = s.recv(65536)
                except (socket.timeout, TimeoutError):
                    break
                except (ssl.SSLError, OSError):
                    break
                if not chunk:
                    break
                received += chunk
    return parse_responses(received)


def verdict(statuses):
    out = []
    for st in statuses:
        if st in FRAMING_STATUSES:
            out.append("reject")
            break
        out.append("ok")
    return out


def first_reject(verdicts):
    return verdicts.index("reject") if "reject" in verdicts else None


def compare(ours, theirs):
    """'agree', 'stricter', 'fewer', 'peer-stricter' or 'differs'."""
    if ours == theirs:
        return "agree"
    k = first_reject(ours)
    if k is not None and ours[:k] == theirs[:k] and (len(theirs) <= k or theirs[k] == "ok"):
        return "stricter"
    if "reject" not in theirs and len(theirs) < len(ours) and ours[:len(theirs)] == theirs:
        return "fewer"
    k = first_reject(theirs)
    if k is not None and theirs[:k] == ours[:k] and len(ours) > k and ours[k] == "ok":
        return "peer-stricter"
    return "differs"


def listed_cases(subsection):
    """Case names in the rows of one subsection of the doc's framing section."""
    text = (ROOT / "docs" / "reliability.md").read_text()
    m = re.search(r"## HTTP framing against other servers\n(.*?)(\n## |\Z)", text, re.S)
    if not m:
        return set()
    sub = re.search(r"### " + re.escape(subsection) + r"\n(.*?)(\n### |\Z)", m.group(1), re.S)
    return set(re.findall(r"^\|\s*`([a-z0-9-]+)`", sub.group(1), re.M)) if sub else set()


def make_certs(tmp):
    key, crt = tmp / "tls.key", tmp / "tls.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(key), "-out", str(crt), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return crt, key


def start_servers(build, tmp, crt, key):
    servers, procs = {}, []
    log = tmp / "webhook.log"
    p = subprocess.Popen([str(build / "gpuguard-webhook"), f"--tls-cert-file={crt}", f"--tls-private-key-file={key}",
                          "--bind-address=127.0.0.1", "--port=0", "--request-timeout=5s"],
                         stdout=open(log, "w"), stderr=subprocess.STDOUT)
    procs.append(p)
    port = read_port(log, r'"msg":"serving".*?"port":(\d+)', p)
    if port is None:
        raise SystemExit(f"gpuguard-webhook did not start: {log.read_text()[-2000:]}")
    servers["gpuguard-webhook"] = port

    log = tmp / "httplib.log"
    p = subprocess.Popen([str(build / "test" / "gpuguard-httplib-reference"), f"--cert={crt}", f"--key={key}", "--port=0"],
                         stdout=open(log, "w"), stderr=subprocess.STDOUT)
    procs.append(p)
    port = read_port(log, r"listening on (\d+)", p)
    if port is None:
        raise SystemExit(f"gpuguard-httplib-reference did not start: {log.read_text()[-2000:]}")
    servers["cpp-httplib 0.11"] = port

    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if nginx:
        port = free_port()
        conf = tmp / "nginx.conf"
        conf.write_text(f"""daemon off; worker_processes 1; pid {tmp}/nginx.pid; error_log {tmp}/nginx-error.log;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fcgi;
  uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {crt}; ssl_certificate_key {key};
    location / {{ return 200 "ok\\n"; }}
  }}
}}
""")
        p = subprocess.Popen([nginx, "-p", str(tmp), "-c", str(conf), "-e", str(tmp / "nginx-error.log")],
                             stdout=subprocess.DEVNULL, stderr=open(tmp / "nginx.log", "w"))
        procs.append(p)
        if wait_for_port(port, p):
            servers["nginx " + subprocess.run([nginx, "-v"], capture_output=True, text=True).stderr.split("/")[-1].strip()] = port
        else:
            print(f"note: nginx did not start: {(tmp / 'nginx.log').read_text()[-500:]}")
    else:
        print("note: nginx not installed: comparing with cpp-httplib only")
    return servers, procs


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build").resolve()
    for binary in (build / "gpuguard-webhook", build / "test" / "gpuguard-httplib-reference"):
        if not os.access(binary, os.X_OK):
            print(f"SKIP: {binary} not built")
            return 77
    if not shutil.which("openssl"):
        print("SKIP: openssl not found")
        return 77
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="gpuguard-framing-"))
    procs = []
    try:
        crt, key = make_certs(tmp)
        servers, procs = start_servers(build, tmp, crt, key)
        jobs = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
            for name, payload in CASES:
                for server, port in servers.items():
                    jobs[(name, server)] = pool.submit(send, port, payload)
        results = {k: f.result() for k, f in jobs.items()}
        listed_stricter = listed_cases("gpuguard is stricter")
        listed_peer_stricter = listed_cases("A peer is stricter")
        failures, stricter, peer_stricter = [], set(), set()
        ours_name = "gpuguard-webhook"
        peers = [s for s in servers if s != ours_name]
        for name, _ in CASES:
            ours = verdict(results[(name, ours_name)])
            outcomes = {peer: compare(ours, verdict(results[(name, peer)])) for peer in peers}
            confirmed = "agree" in outcomes.values()  # another peer frames exactly what gpuguard frames
            print(f"{name}: {ours_name} {results[(name, ours_name)]}; " +
                  "; ".join(f"{p} {results[(name, p)]} ({o})" for p, o in outcomes.items()))
            for peer, outcome in outcomes.items():
                theirs = verdict(results[(name, peer)])
                if outcome == "stricter":
                    stricter.add(name)
                elif outcome == "peer-stricter":
                    peer_stricter.add(name)
                    if not confirmed:
                        failures.append(f"{name}: {peer} rejects what gpuguard answers ({theirs}), and no peer agrees with gpuguard")
                elif outcome == "fewer" and not confirmed and len(peers) > 1:
                    failures.append(f"{name}: {peer} answers fewer requests ({theirs}), and no peer agrees with gpuguard")
                elif outcome == "differs":
                    failures.append(f"{name}: gpuguard {ours} but {peer} {theirs}")
        for name in sorted(stricter - listed_stricter):
            failures.append(f"{name}: gpuguard is stricter than a peer, but docs/reliability.md does not list it")
        for name in sorted(peer_stricter - listed_peer_stricter):
            failures.append(f"{name}: a peer is stricter than gpuguard, but docs/reliability.md does not list it")
        for name in sorted((listed_stricter | listed_peer_stricter) - {n for n, _ in CASES}):
            failures.append(f"{name}: listed in docs/reliability.md but not a case here")
        print(f"{len(CASES)} cases, {len(servers)} servers ({', '.join(servers)}); gpuguard stricter than a peer on "
              f"{len(stricter)}, a peer stricter on {len(peer_stricter)}")
        for f in failures:
            print("FAIL:", f)
        return 1 if failures else 0
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
