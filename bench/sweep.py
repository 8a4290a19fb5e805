"""A hostile sweep against a running server: every probe must end in a clear refusal or a clean result.

    make run                              # in another shell (embedded default, loopback)
    .venv/bin/python bench/sweep.py       # prints each problem and a summary; exit 1 if any

It makes two users (``sweep-a``, ``sweep-b``) with tokens through ``manage.py``
on this machine, then sends, as an attacker would:

* malformed, malicious and mislabelled files (truncations of every format,
  flipped bytes, bombs, encrypted and empty PDFs, polyglots, foreign formats,
  hostile file names): each must answer 202 (and its job must then end, never
  with ``internal_error``) or a 4xx with a JSON ``code``; never a 5xx;
* SSRF spellings of loopback, private, link-local and metadata addresses (IPv6
  forms of IPv4 ones too: NAT64, IPv4-compatible, -mapped, -translated, 6to4)
  and non-HTTP schemes as ``file_url`` and ``webhook_url``: 400, with a message
  that tells nothing about the target's ports;
* JSON nested 200,000 deep on the JSON routes: a 4xx with a ``code``, never a 5xx;
* 60 MB bodies without credentials: 413 before they are stored;
* every job route as the other user by token, by session and over WebSocket,
  and anonymously: 404/401/403/302 to the login, never the job;
* CSRF: session POSTs without the token: 403;
* throttling: a burst of anonymous requests gets 429 with ``Retry-After``, and
  repeated wrong passwords lock the login, though each request names another
  client in ``X-Forwarded-For`` (only a trusted proxy's is believed).
* the upload form refuses more files a post than it takes (400) and, its files spending the
  submit rate, bursts of them (429 with ``Retry-After`` and a sentence saying when).
* WebSocket frames over ``--ws-max-size`` and not JSON, and a PDF whose pages carry odd ``/Rotate`` values
  through its PDF/A export (``bench/sweep_sockets_rotation.py``).
* batches (``bench/sweep_batches.py``): bzip2 and LZMA members, a directory claiming a million
  entries, a member name of 65,000 characters: each refused at once with its code.
* ``ocr-client mcp --http``, started by the sweep on ``0.0.0.0`` as user a (``bench/sweep_mcp.py``): it
  must not start without ``--allowed-host``; a request without its own token gets 401, a Host or Origin
  not allowed 421/403; with b's token no tool reads a's job or a path of its machine.

DNS rebinding, slow-drip and gzip-bomb URLs need a hostile server on a public
address; with the default SSRF guard a local one is refused before any byte
moves, so those are covered by ``tests/jobs/test_outbound.py`` instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402

import requests  # noqa: E402

from bench.sweep_batches import batch_probes  # noqa: E402
from bench.sweep_mcp import mcp_http  # noqa: E402
from bench.sweep_sockets_rotation import rotated_pdf_export, websocket_frames  # noqa: E402
from tests.ocr_engine import bad_files, samples  # noqa: E402

USERS = ("sweep-a", "sweep-b")
PASSWORD = "sweep-pw-Kx81"
CLEAN_4XX = {400, 401, 403, 404, 405, 409, 413, 415, 422, 429}
# What a port scanner would read from an answer.
LEAKS = re.compile(r"connection refused|reset by peer|errno|timed out|no route|unreachable|\bport \d+", re.I)


class Sweep:
    def __init__(self, url: str):
        self.url = url.rstrip("/")
        self.checks = 0
        self.problems: list[str] = []

    def expect(self, name: str, ok: bool, detail: str = "") -> None:
        self.checks += 1
        if not ok:
            self.problems.append(f"{name}: {detail}")
            print(f"PROBLEM {name}: {detail}", flush=True)


def users(manage: list[str]) -> dict[str, str]:
    """Create (or reset) the two sweep users; their API tokens by name."""
    code = (
        "from axes.utils import reset\n"
        "from django.contrib.auth import get_user_model; from rest_framework.authtoken.models import Token\n"
        f"for name in {USERS!r}:\n"
        "    user, _ = get_user_model().objects.get_or_create(username=name)\n"
        f"    user.set_password({PASSWORD!r}); user.save(); reset(username=name)\n"  # lifts the last run's lockout
        "    print(name, Token.objects.get_or_create(user=user)[0].key)\n"
    )
    out = subprocess.run([*manage, "shell", "-c", code], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return dict(re.findall(r"^(sweep-[ab]) (\w+)$", out, re.M))


def hostile_files() -> list[tuple[str, bytes]]:
    """(name, bytes) of 100+ files no one should be able to break the service with."""
    valid = {
        "page.png": samples.encode(samples.text_page(dpi=50).image, "PNG"),
        "page.jpg": samples.encode(samples.text_page(dpi=50).image, "JPEG"),
        "page.webp": samples.encode(samples.text_page(dpi=50).image, "WEBP"),
        "page.bmp": samples.encode(samples.text_page(dpi=40).image, "BMP"),
        "report.pdf": samples.report_pdf(pages=2, dpi=40).data,
        "pages.tiff": samples.multipage_tiff(dpi=40).data,
    }
    files: list[tuple[str, bytes]] = []
    for name, data in valid.items():
        for keep in (0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
            files.append((f"cut{int(keep * 100)}-{name}", bad_files.truncated(data, keep) if keep else data[:16]))
        rng = random.Random(name)
        for seed in range(3):
            flipped = bytearray(data)
            for _ in range(20):
                at = rng.randrange(len(flipped) // 10, len(flipped))
                flipped[at] ^= 0xFF
            files.append((f"flipped{seed}-{name}", bytes(flipped)))
    # Mislabelled: every valid file under every other format's name.
    names = list(valid)
    for i, name in enumerate(names):
        files.append((names[(i + 1) % len(names)], valid[name]))
    files += [
        ("bomb.png", bad_files.bomb_png()),
        ("empty.pdf", bad_files.zero_page_pdf()),
        ("locked.pdf", bad_files.encrypted_pdf()),
        ("no-xref.pdf", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n"),
        ("loop.pdf", bad_files.pdf_from_objects([b"<< /Type /Catalog /Pages 2 0 R >>",
                                                 b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"])),
        ("huge-count.pdf", bad_files.pdf_from_objects([b"<< /Type /Catalog /Pages 2 0 R >>",
                                                       b"<< /Type /Pages /Kids [] /Count 999999999 >>"])),
        ("empty.png", b""),
        ("one-byte.pdf", b"%"),
        ("html.pdf", b"<html><script>alert(1)</script></html>"),
        ("image.svg", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
        ("archive.zip", b"PK\x03\x04" + bytes(200)),
        ("program.png", b"\x7fELF" + bytes(200)),
        ("anim.gif", b"GIF89a" + bytes(200)),
        ("polyglot.png", valid["page.png"] + valid["report.pdf"]),
        ("polyglot.pdf", valid["report.pdf"][:9] + valid["page.png"]),
        ("random-1k.pdf", random.Random(1).randbytes(1024)),
        ("random-100k.png", random.Random(2).randbytes(100_000)),
        ("zeros.tiff", bytes(50_000)),
    ]
    # Hostile names on a valid file.
    for name in ('a".png; filename*=UTF-8\'\'evil.txt', "cr\r\nlf.png", "nul\x00.png", "../../etc/passwd.png",
                 "x" * 1000 + ".png", "\u202egnp.exe.png", "<script>.png", "con.png"):
        files.append((name, valid["page.png"]))
    return files


def submit_files(sweep: Sweep, api: requests.Session, pause: float) -> list[str]:
    accepted, refused = [], Counter()
    for name, data in hostile_files():
        try:
            reply = api.post(f"{sweep.url}/api/v1/jobs", files={"file": (name, data)}, data={"pipeline": "ocr"},
                             timeout=60)
        except requests.RequestException as exc:
            sweep.expect(f"file {name!r}", False, f"no answer: {exc}")
            continue
        label = f"file {name[:60]!r}"
        if reply.status_code in (200, 201, 202):
            accepted.append(reply.json()["id"])
            sweep.expect(label, True)
        else:
            sweep.expect(label, reply.status_code in CLEAN_4XX and "code" in _json(reply),
                         f"HTTP {reply.status_code}: {reply.text[:200]}")
            refused[f"{reply.status_code} {_json(reply).get('code')}"] += 1
        time.sleep(pause)  # stay under the submit throttle: this part probes files, not rates
    print(f"files: {len(accepted)} accepted, refused at submit: {dict(refused)}", flush=True)
    return accepted


def wait_for_jobs(sweep: Sweep, api: requests.Session, ids: list[str], timeout: float) -> None:
    deadline, pending, outcomes = time.monotonic() + timeout, set(ids), Counter()
    while pending and time.monotonic() < deadline:
        for job_id in list(pending):
            job = api.get(f"{sweep.url}/api/v1/jobs/{job_id}", timeout=30).json()
            if job["status"] in ("succeeded", "failed", "canceled"):
                pending.discard(job_id)
                error = json.dumps(job.get("error"))  # a failed page's code is in the job's detail
                sweep.expect(f"job {job_id} ends cleanly", "internal_error" not in error, error)
                outcomes[job["status"] + (f" ({job['error']['code']})" if job.get("error") else "")] += 1
        time.sleep(2)
    for job_id in pending:
        sweep.expect(f"job {job_id} ends", False, f"still active after {timeout:.0f} s")
    print(f"accepted jobs ended: {dict(outcomes)}", flush=True)


def ssrf(sweep: Sweep, api: requests.Session) -> None:
    targets = [
        "http://127.0.0.1:8000/healthz", "http://localhost:8000/", "http://[::1]:8000/", "http://2130706433/",
        "http://0x7f000001/", "http://0177.0.0.1/", "http://127.1/", "http://0/", "http://0.0.0.0:8000/",
        "http://[::ffff:127.0.0.1]/", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/",
        "http://192.168.1.1/", "http://172.16.0.1/", "http://[fd00::1]/", "http://100.64.0.1/",
        "http://127.0.0.1:5432/", "http://127.0.0.1:6379/", "http://user:pw@example.com/",
        "file:///etc/passwd", "gopher://127.0.0.1:6379/_INFO", "ftp://127.0.0.1/", "dict://127.0.0.1:11211/",
        "http://127.0.0.1:99999/", "http://LOCALHOST./", "http://127.0.0.1%2f@example.com/",
        # IPv4 addresses inside IPv6 ones: NAT64 (10.10.0.1), compatible, translated, 6to4, local-use NAT64.
        "http://[64:ff9b::a0a:1]/", "http://[::127.0.0.1]/", "http://[::ffff:0:7f00:1]/", "http://[2002:a00:1::1]/",
        "http://[64:ff9b:1::a0a:1]/", "http://[fec0::1]/", "http://[feff::1]/",  # site-local (deprecated)
    ]
    for url in targets:
        reply = api.post(f"{sweep.url}/api/v1/jobs", data={"file_url": url, "pipeline": "ocr"}, timeout=60)
        body = _json(reply)
        sweep.expect(f"file_url {url}", reply.status_code == 400 and "code" in body,
                     f"HTTP {reply.status_code}: {reply.text[:200]}")
        sweep.expect(f"file_url {url} says nothing of ports", not LEAKS.search(str(body.get("detail", ""))),
                     str(body.get("detail")))
        reply = api.post(f"{sweep.url}/api/v1/jobs", files={"file": ("w.png", _png())},
                         data={"pipeline": "ocr", "webhook_url": url}, timeout=60)
        sweep.expect(f"webhook_url {url}", reply.status_code == 400, f"HTTP {reply.status_code}: {reply.text[:200]}")
        time.sleep(1.0)  # two submissions per target, under the submit throttle


def deep_json(sweep: Sweep, api: requests.Session, job_id: str) -> None:
    deep = "[" * 200_000  # Python's JSON parser gives up with a RecursionError, not a ValueError
    for method, path in (("POST", "/api/v1/jobs"), ("PATCH", f"/api/v1/jobs/{job_id}/pages/1/lines/p1-l1"),
                         ("POST", f"/api/v1/jobs/{job_id}/pages/1/lines")):
        reply = api.request(method, sweep.url + path, data=deep, headers={"Content-Type": "application/json"},
                            timeout=30)
        sweep.expect(f"deep JSON to {method} {path}", reply.status_code in CLEAN_4XX and "code" in _json(reply),
                     f"HTTP {reply.status_code}: {reply.text[:200]}")


def big_bodies(sweep: Sweep) -> None:
    host, port = sweep.url.removeprefix("http://").split(":")
    for path in ("/healthz", "/api/v1/jobs", "/upload/", "/accounts/login/"):
        status = _declared_post(host, int(port), path, 60 * 1024 * 1024)
        sweep.expect(f"60 MB to {path} without credentials", status == 413, f"HTTP {status}")


def other_users(sweep: Sweep, a: requests.Session, b: requests.Session, b_web: requests.Session,
                job_id: str) -> None:
    api = f"{sweep.url}/api/v1/jobs/{job_id}"
    routes = [
        ("GET", ""), ("DELETE", ""), ("POST", "/cancel"), ("POST", "/retry"), ("GET", "/result"),
        ("GET", "/result.json"), ("GET", "/export.txt"), ("GET", "/export.pdf"), ("GET", "/pages/1"),
        ("GET", "/pages/1/image"), ("GET", "/pages/1/thumbnail"), ("GET", "/webhooks"), ("POST", "/pages/1/lines"),
        ("PATCH", "/pages/1/lines/p1-l1"), ("POST", "/pages/1/lines/merge"), ("PATCH", "/pages/1/regions/p1-r1"),
        ("GET", "/cer"), ("POST", "/reviewed"), ("POST", "/corrections/1/undo"),
    ]
    anonymous = requests.Session()
    for method, suffix in routes:
        reply = b.request(method, api + suffix, json={"text": "x"}, timeout=30)
        sweep.expect(f"{method} {suffix or '/'} as the other user (token)", reply.status_code in (403, 404),
                     f"HTTP {reply.status_code}")
        reply = anonymous.request(method, api + suffix, json={"text": "x"}, timeout=30)
        sweep.expect(f"{method} {suffix or '/'} anonymously", reply.status_code in (401, 403),
                     f"HTTP {reply.status_code}")
    reply = b_web.get(f"{sweep.url}/jobs/{job_id}/", timeout=30, allow_redirects=False)
    sweep.expect("review page as the other user (session)", reply.status_code == 404, f"HTTP {reply.status_code}")
    reply = anonymous.get(f"{sweep.url}/jobs/{job_id}/", timeout=30, allow_redirects=False)
    sweep.expect("review page anonymously", reply.status_code == 302 and "/accounts/login/" in reply.headers.get(
        "Location", ""), f"HTTP {reply.status_code}")
    sweep.expect("WebSocket as the other user", not _websocket_open(sweep.url, f"/ws/jobs/{job_id}/", b_web),
                 "the other user's job stream opened")
    sweep.expect("WebSocket anonymously", not _websocket_open(sweep.url, f"/ws/jobs/{job_id}/", anonymous),
                 "the job stream opened without a session")
    sweep.expect("the owner still sees the job", a.get(api, timeout=30).status_code == 200)


def csrf(sweep: Sweep, web: requests.Session, job_id: str) -> None:
    reply = web.post(f"{sweep.url}/upload/", files={"files": ("c.png", _png())}, timeout=30,
                     headers={"Referer": f"{sweep.url}/"})
    sweep.expect("upload form without the CSRF token", reply.status_code == 403, f"HTTP {reply.status_code}")
    reply = web.post(f"{sweep.url}/api/v1/jobs/{job_id}/cancel", timeout=30)
    sweep.expect("API call by session without the CSRF token", reply.status_code == 403, f"HTTP {reply.status_code}")
    reply = web.post(f"{sweep.url}/settings/webhook-secret/", timeout=30)
    sweep.expect("secret rotation without the CSRF token", reply.status_code == 403, f"HTTP {reply.status_code}")


def throttling(sweep: Sweep) -> None:
    # Each request claims another client; the server straight on its port believes no X-Forwarded-For.
    anonymous = requests.Session()
    replies = [anonymous.get(f"{sweep.url}/api/v1/pipelines", headers={"X-Forwarded-For": _spoofed()}, timeout=30)
               for _ in range(80)]
    limited = [r for r in replies if r.status_code == 429]
    sweep.expect("anonymous burst is throttled", bool(limited), "80 requests in a row, none refused")
    sweep.expect("throttled answers say when to retry", all("Retry-After" in r.headers for r in limited))
    for _ in range(7):
        reply = _login(sweep.url, USERS[1], "wrong-password", headers={"X-Forwarded-For": _spoofed()})
    sweep.expect("login lockout after repeated failures", reply.status_code in (403, 429),
                 f"HTTP {reply.status_code} after 7 wrong passwords")


def upload_form_limits(sweep: Sweep, web: requests.Session) -> None:
    """The upload form: at most its number of files a post, and each file spends a job of the submit rate.

    Bursts of files no reader accepts, so that the server stores and reads nothing while the budget runs out.
    """
    page = web.get(f"{sweep.url}/upload/", timeout=30).text
    most = int(re.search(r"up to (\d+) at once", page).group(1))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)

    def post(count: int) -> requests.Response:
        files = [("files", (f"junk-{n}.png", b"not an image %d" % n, "image/png")) for n in range(count)]
        return web.post(f"{sweep.url}/upload/", files=files, timeout=60, headers={"Referer": f"{sweep.url}/upload/"},
                        data={"csrfmiddlewaretoken": token, "pipeline": "ocr", "lang": "en"})

    reply = post(most + 1)
    sweep.expect(f"upload form with {most + 1} files",
                 reply.status_code == 400 and f"At most {most} files" in reply.text, f"HTTP {reply.status_code}")
    statuses = []
    while len(statuses) < 40 and 429 not in statuses:
        reply = post(most)
        statuses.append(reply.status_code)
    sweep.expect("upload form bursts are throttled", statuses[-1] == 429, f"{len(statuses)} posts of {most} files: "
                 f"{Counter(statuses)}")
    sweep.expect("the form's 429 says when to retry", statuses[-1] != 429 or (
        "Retry-After" in reply.headers and "Try again in" in reply.text), reply.headers.get("Retry-After", "none"))
    sweep.expect("refused files before the limit are 400s", set(statuses[:-1]) <= {400}, str(Counter(statuses)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--manage", default=f"{ROOT}/.venv/bin/python manage.py",
                        help="how to run manage.py against the server's database")
    parser.add_argument("--job-timeout", type=float, default=900, help="seconds for accepted files' jobs to end")
    parser.add_argument("--pause", type=float, default=0.55, help="seconds between file submissions")
    args = parser.parse_args()
    sweep = Sweep(args.url)
    tokens = users(args.manage.split())
    a, b = (_api(tokens[name]) for name in USERS)
    started = time.monotonic()

    accepted = submit_files(sweep, a, args.pause)
    ssrf(sweep, a)
    big_bodies(sweep)
    batch_probes(sweep, a)
    reference = a.post(f"{sweep.url}/api/v1/jobs", files={"file": ("mine.png", _png())},
                       data={"pipeline": "ocr"}, timeout=60).json()["id"]
    wait_for_jobs(sweep, a, [reference, *accepted], args.job_timeout)
    a_web, b_web = _login_session(sweep.url, USERS[0]), _login_session(sweep.url, USERS[1])
    other_users(sweep, a, b, b_web, reference)
    csrf(sweep, a_web, reference)
    deep_json(sweep, a, reference)
    mcp_http(sweep, tokens[USERS[0]], tokens[USERS[1]], reference)
    websocket_frames(sweep, tokens[USERS[0]], reference)
    rotated_pdf_export(sweep, a)
    throttling(sweep)
    upload_form_limits(sweep, b_web)  # the other user's budget: the sweep submits nothing after it

    print(f"\n{sweep.checks} checks in {time.monotonic() - started:.0f} s against {sweep.url}: "
          f"{len(sweep.problems)} problem(s)")
    sys.exit(1 if sweep.problems else 0)


# --- plumbing ------------------------------------------------------------------------------------

def _api(token: str) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Token {token}"
    return session


def _json(reply: requests.Response) -> dict:
    try:
        body = reply.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _png() -> bytes:
    # Distinct each time: identical uploads would be answered from deduplication.
    image = samples.text_page(dpi=40).image
    image.putpixel((0, 0), (random.randrange(256), 0, 0))
    return samples.encode(image, "PNG")


def _login(url: str, username: str, password: str, session: requests.Session | None = None,
           headers: dict[str, str] | None = None) -> requests.Response:
    session = session or requests.Session()
    page = session.get(f"{url}/accounts/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return session.post(f"{url}/accounts/login/", data={"username": username, "password": password,
                                                        "csrfmiddlewaretoken": token},
                        headers={"Referer": f"{url}/accounts/login/", **(headers or {})}, timeout=30,
                        allow_redirects=False)


def _spoofed() -> str:
    """An address from TEST-NET-3, as a client would name itself in X-Forwarded-For."""
    return f"203.0.113.{random.randrange(1, 255)}"


def _login_session(url: str, username: str) -> requests.Session:
    session = requests.Session()
    reply = _login(url, username, PASSWORD, session)
    if reply.status_code != 302:
        raise SystemExit(f"cannot log in as {username}: HTTP {reply.status_code}")
    return session


def _declared_post(host: str, port: int, path: str, length: int) -> int:
    """Status of a POST that declares ``length`` bytes and sends the first MB of them."""
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {length}\r\n"
                     "Content-Type: application/octet-stream\r\n\r\n".encode())
        try:
            for _ in range(16):
                sock.sendall(b"x" * 65536)
        except OSError:
            pass  # refused mid-body: the server closed the connection
        answer = b""
        try:
            while b"\r\n" not in answer and (data := sock.recv(4096)):
                answer += data
        except OSError:
            pass
    match = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
    return int(match.group(1)) if match else 0


def _websocket_open(url: str, path: str, session: requests.Session) -> bool:
    """Whether a WebSocket handshake on ``path`` with the session's cookies is accepted and stays open."""
    host, port = url.removeprefix("http://").split(":")
    cookies = "; ".join(f"{c.name}={c.value}" for c in session.cookies)
    request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Origin: {url}\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
               f"Cookie: {cookies}\r\n\r\n")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request.encode())
        head = sock.recv(4096)
        if not head.startswith(b"HTTP/1.1 101"):
            return False
        sock.settimeout(2)
        try:
            frame = head.split(b"\r\n\r\n", 1)[1] or sock.recv(2)
        except socket.timeout:
            return True  # accepted and nothing closed it
        return not (frame and frame[0] & 0x0F == 0x8)  # a close frame: refused right after the handshake


if __name__ == "__main__":
    main()
