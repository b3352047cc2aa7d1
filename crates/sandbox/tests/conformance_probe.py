#!/usr/bin/env python3
"""Black-box conformance probe for the Payments, Trading and Cards Service API v2 sandbox.

Written from the documents alone (payments-api-v2.md, sandbox-rules.md,
open-paths.md, DESIGN.md), without reading the sandbox's code, as an
independent check of it; run by tests/conformance.rs against a sandbox
started with tests/conformance_fixture.json. Standard library only.
Usage: python3 conformance_probe.py BASE_URL. Exits 1 if any check fails.
"""
import hashlib, hmac, json, re, secrets, sys, threading, time, traceback, uuid
import urllib.error, urllib.request
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8090"
A = ("aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "secret-acme-0123456789")
B = ("bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", "secret-beta-0123456789")
HOOK_PORT = 0  # the webhook receiver's port, chosen when it starts
HOOK_SECRET_A = "whsec-A-probe"
HOOK_SECRET_B = "whsec-B-probe"
RUN = uuid.uuid4().hex[:8]

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")

# ---------------------------------------------------------------- reporting
RESULTS = []
WARNS = []
SERVER_ERRORS = []


def check(name, cond, detail="", ambiguous=False):
    """ambiguous=True: the documents do not clearly fix this; a miss prints WARN and is not a FAIL."""
    ok = bool(cond)
    if ambiguous and not ok:
        WARNS.append((name, detail))
        print("WARN " + name + "  -- " + str(detail)[:700])
        return ok
    RESULTS.append((ok, name, detail))
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else "  -- " + str(detail)[:700]))
    return ok


def section(title):
    print("\n=== " + title + " ===")


# ---------------------------------------------------------------- HTTP + signing
class Resp:
    def __init__(s, method, path, status, headers, raw):
        s.method, s.path, s.status, s.headers, s.raw = method, path, status, headers, raw
        try:
            s.json = json.loads(raw) if raw else None
        except Exception:
            s.json = None

    @property
    def data(s):
        return (s.json or {}).get("data") if isinstance(s.json, dict) else None

    def hdr(s, name):
        for k, v in s.headers.items():
            if k.lower() == name.lower():
                return v
        return None

    def __repr__(s):
        return "%s %s -> %s %s" % (s.method, s.path, s.status, s.raw[:400].decode("utf-8", "replace"))


def sign(cred, ts, nonce, raw):
    cid, sec = cred
    msg = ("%s:%s:%s:" % (cid, ts, nonce)).encode() + raw
    return hmac.new(sec.encode(), msg, hashlib.sha256).hexdigest()


def call(method, path, body=None, cred=A, raw=None, sign_it=True, ts=None, nonce=None, sig=None,
         signed_raw=None, extra_headers=None, ctype="application/json", client_id=None):
    if raw is None:
        raw = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
    ts = str(int(time.time())) if ts is None else ts
    nonce = secrets.token_hex(16) if nonce is None else nonce
    s = sign(cred, ts, nonce, raw if signed_raw is None else signed_raw) if sig is None else sig
    h = {"accept": "application/json"}
    if sign_it:
        h.update({"X-Auth-Client": client_id or cred[0], "X-Auth-Timestamp": ts,
                  "X-Auth-Nonce": nonce, "X-Auth-Signature": s})
    if raw and ctype:
        h["content-type"] = ctype
    if extra_headers:
        h.update(extra_headers)
    data = raw if raw else None
    r = urllib.request.Request(BASE + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(r, timeout=90) as resp:
            out = Resp(method, path, resp.status, dict(resp.headers), resp.read())
    except urllib.error.HTTPError as e:
        out = Resp(method, path, e.code, dict(e.headers), e.read())
    if out.status >= 500:
        SERVER_ERRORS.append(out)
    return out


GET = lambda p, **k: call("GET", p, **k)
POST = lambda p, b=None, **k: call("POST", p, b, **k)
PUT = lambda p, b=None, **k: call("PUT", p, b, **k)
DELETE = lambda p, b=None, **k: call("DELETE", p, b, **k)


def ex(r, n=260):
    return "%s %s -> %s %s" % (r.method, r.path, r.status, r.raw[:n].decode("utf-8", "replace"))


def is_envelope(r):
    j = r.json
    return (isinstance(j, dict) and j.get("success") is True and isinstance(j.get("message"), str)
            and "data" in j and isinstance(j.get("timestamp"), str) and TS_RE.match(j["timestamp"]) is not None)


def problem(r, status, code=None):
    """True when r is an RFC 7807 body with the given status (and code if given)."""
    j = r.json
    if r.status != status or not isinstance(j, dict):
        return False
    for f in ("type", "title", "status", "detail", "correlation_id", "timestamp"):
        if f not in j:
            return False
    if j.get("status") != status:
        return False
    if code and j.get("code") != code:
        return False
    return True


def chk_problem(name, r, status, code=None):
    return check(name, problem(r, status, code), ex(r))


def ref(tag):
    return "%s-%s-%s" % (tag, RUN, uuid.uuid4().hex[:10])


def advance(seconds, cred=A):
    r = POST("/sandbox/clock/advance", {"seconds": seconds}, cred=cred)
    if r.status != 200:
        print("  (clock advance failed: %s)" % ex(r))
    return r


def sandbox_now():
    r = GET("/sandbox/clock")
    return datetime.fromisoformat(r.data["now"].replace("Z", "+00:00"))


def parse_ts(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def bal(cur, cred=A):
    r = GET("/api/balances/" + cur, cred=cred)
    if r.status != 200:
        return None
    return int(r.data["available_balance"])


def luhn_ok(num):
    total = 0
    for i, ch in enumerate(reversed(num)):
        d = int(ch)
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def dec(x):
    return Decimal(str(x))


def approx(a, b, tol=Decimal("0.000001")):
    try:
        a, b = dec(a), dec(b)
    except Exception:
        return False
    return abs(a - b) <= tol * max(Decimal(1), abs(b))


# ---------------------------------------------------------------- webhook receiver
HOOKS = []  # (path, headers, raw, json)
HOOK_LOCK = threading.Lock()


class HookHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        raw = self.rfile.read(n)
        try:
            j = json.loads(raw)
        except Exception:
            j = None
        with HOOK_LOCK:
            HOOKS.append((self.path, {k.lower(): v for k, v in self.headers.items()}, raw, j))
        code = 500 if self.path.startswith("/fail") else 200
        self.send_response(code)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *a):
        pass


def start_hooks():
    global HOOK_PORT
    srv = ThreadingHTTPServer(("127.0.0.1", 0), HookHandler)
    HOOK_PORT = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def hooks(event=None, path_prefix=None, pred=None):
    with HOOK_LOCK:
        out = list(HOOKS)
    res = []
    for p, h, raw, j in out:
        if path_prefix and not p.startswith(path_prefix):
            continue
        if event and not (isinstance(j, dict) and j.get("event") == event):
            continue
        if pred and not pred(j):
            continue
        res.append((p, h, raw, j))
    return res


def wait_hooks(timeout=3.0, **kw):
    end = time.time() + timeout
    while time.time() < end:
        got = hooks(**kw)
        if got:
            return got
        time.sleep(0.1)
    return hooks(**kw)


def sig_ok(h, raw, secret):
    want = hmac.new(secret.encode(), raw, hashlib.sha512).hexdigest()
    return h.get("x-service-signature") == want


# ---------------------------------------------------------------- BOLT11 (for a foreign, valid invoice)
B32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values):
    gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1ffffff) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if ((b >> i) & 1) else 0
    return chk


def _hrp_expand(hrp):
    return [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]


def bech32_encode(hrp, data):
    pm = _polymod(_hrp_expand(hrp) + data + [0] * 6) ^ 1
    return hrp + "1" + "".join(B32[d] for d in data + [(pm >> 5 * (5 - i)) & 31 for i in range(6)])


def to5(bs):
    acc = bits = 0
    out = []
    for b in bs:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            out.append((acc >> bits) & 31)
    if bits:
        out.append((acc << (5 - bits)) & 31)
    return out


def int5(v, n):
    return [(v >> 5 * (n - 1 - i)) & 31 for i in range(n)]


def words_to_bytes(words):
    acc = bits = 0
    out = bytearray()
    for w in words:
        acc = (acc << 5) | w
        bits += 5
        while bits >= 8:
            bits -= 8
            out.append((acc >> bits) & 0xff)
    if bits:
        out.append((acc << (8 - bits)) & 0xff)
    return bytes(out)


P = 2 ** 256 - 2 ** 32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def _add(p1, p2):
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    if p1[0] == p2[0] and (p1[1] + p2[1]) % P == 0:
        return None
    if p1 == p2:
        l = 3 * p1[0] * p1[0] * pow(2 * p1[1], P - 2, P) % P
    else:
        l = (p2[1] - p1[1]) * pow(p2[0] - p1[0], P - 2, P) % P
    x = (l * l - p1[0] - p2[0]) % P
    return (x, (l * (p1[0] - x) - p1[1]) % P)


def _mul(k, pt):
    r = None
    while k:
        if k & 1:
            r = _add(r, pt)
        pt = _add(pt, pt)
        k >>= 1
    return r


def make_bolt11(hrp_prefix, amount_sat, desc, expiry, priv, ts=None):
    """A correctly signed BOLT11 invoice (amount in sat, expressed in 'n' units)."""
    hrp = "%s%dn" % (hrp_prefix, amount_sat * 10)
    ts = int(time.time()) if ts is None else ts
    data = int5(ts, 7)

    def tag(t, words):
        return [B32.index(t)] + int5(len(words), 2) + words
    data += tag("p", to5(secrets.token_bytes(32)))
    data += tag("s", to5(secrets.token_bytes(32)))
    data += tag("d", to5(desc.encode()))
    ew = []
    e = expiry
    while e:
        ew.insert(0, e & 31)
        e >>= 5
    data += tag("x", ew or [0])
    data += tag("9", [16, 8, 0])  # var_onion_optin + payment_secret required
    msg = hrp.encode() + words_to_bytes(data)
    z = int.from_bytes(hashlib.sha256(msg).digest(), "big")
    while True:
        k = secrets.randbelow(N - 1) + 1
        R = _mul(k, G)
        r = R[0] % N
        s = pow(k, N - 2, N) * (z + r * priv) % N
        if r and s:
            break
    recid = R[1] & 1
    if s > N // 2:
        s = N - s
        recid ^= 1
    sig = r.to_bytes(32, "big") + s.to_bytes(32, "big") + bytes([recid])
    return bech32_encode(hrp, data + to5(sig))


def pubkey_hex(priv):
    pt = _mul(priv, G)
    return ("02" if pt[1] % 2 == 0 else "03") + "%064x" % pt[0]


# ================================================================ probes
CTX = {}


def probe_auth_and_errors():
    section("Authentication and generic errors")
    r = GET("/healthz", sign_it=False)
    check("healthz without signature is 200", r.status == 200, ex(r))
    r = GET("/api/whoami")
    check("whoami 200 envelope message 'Authenticated'", r.status == 200 and is_envelope(r)
          and r.json["message"] == "Authenticated", ex(r))
    d = r.data or {}
    check("whoami identity fields", d.get("auth_method") == "hmac" and d.get("client_id") == A[0]
          and d.get("environment") == "sandbox" and "permissions" in d and d.get("active") is True
          and UUID_RE.match(d.get("active_company_id", "")), ex(r))
    r = POST("/api/whoami", {"anything": [1, 2]})
    check("whoami accepts any method and payload (POST with body -> 200)", r.status == 200, ex(r))
    r = GET("/api/whoami", sign_it=False)
    chk_problem("no auth headers -> 401 RFC7807", r, 401)
    check("401 carries code UNAUTHORIZED", (r.json or {}).get("code") == "UNAUTHORIZED", ex(r))
    r = GET("/api/whoami", sig="0" * 64)
    chk_problem("bad signature -> 401", r, 401)
    r = GET("/api/whoami", sig=sign(A, str(int(time.time())), "x" * 32, b"").upper(), nonce="x" * 32)
    chk_problem("uppercase-hex signature is not the lowercase hex formula -> 401", r, 401)
    r = GET("/api/whoami", client_id=str(uuid.uuid4()))
    chk_problem("unknown client id -> 401", r, 401)
    r = GET("/api/whoami", ts=str(int(time.time()) - 1000))
    chk_problem("timestamp 1000 s in the past -> 401", r, 401)
    r = GET("/api/whoami", ts=str(int(time.time()) + 1000))
    chk_problem("timestamp 1000 s in the future -> 401", r, 401)
    r = GET("/api/whoami", ts=str(int(time.time()) - 200))
    check("timestamp 200 s old (inside 300 s skew) -> 200", r.status == 200, ex(r))
    r = GET("/api/whoami", ts=str(int(time.time() * 1000)))
    chk_problem("millisecond timestamp -> 401", r, 401)
    n = secrets.token_hex(16)
    r1 = GET("/api/whoami", nonce=n)
    r2 = GET("/api/whoami", nonce=n)
    check("fresh nonce accepted", r1.status == 200, ex(r1))
    chk_problem("replayed nonce -> 401", r2, 401)
    r = GET("/api/whoami", nonce="abc123")
    chk_problem("nonce shorter than 16 chars -> 401", r, 401)
    r = GET("/api/whoami", nonce="a" * 129)
    chk_problem("nonce longer than 128 chars -> 401", r, 401)
    r = GET("/api/whoami", nonce="Ab_-" * 5)
    check("nonce of 20 chars [A-Za-z0-9_-] accepted", r.status == 200, ex(r))
    r = GET("/api/whoami", nonce="abc!" * 5)
    chk_problem("nonce with '!' -> 401", r, 401)
    body = {"email": "x@example.com", "customer_type": "individual"}
    signed = json.dumps({"customer_type": "individual", "email": "x@example.com"}, separators=(",", ":")).encode()
    r = POST("/api/customers", body, signed_raw=signed)
    chk_problem("signature over reordered keys (body changed) -> 401", r, 401)
    r = POST("/api/customers", raw=b'{"email": "sp@example.com", "customer_type": "individual"}')
    check("signature covers exact bytes even with non-compact JSON (accepted or validated, not 401)",
          r.status != 401, ex(r))
    r = GET("/api/no-such-route")
    chk_problem("unknown route -> 404", r, 404)
    r = call("PATCH", "/api/customers")
    chk_problem("known path, wrong method (PATCH /api/customers) -> 405", r, 405)
    r = DELETE("/api/balances")
    chk_problem("DELETE /api/balances -> 405", r, 405)
    r = POST("/api/customers", raw=b'{"email":')
    chk_problem("malformed JSON -> 400", r, 400)
    r = POST("/api/customers", raw=b'email=a@b.c', ctype="text/plain")
    chk_problem("non-JSON content-type -> 415", r, 415)
    big = json.dumps({"email": "big@example.com", "customer_type": "individual", "pad": "x" * (1024 * 1024 + 10)},
                     separators=(",", ":")).encode()
    r = POST("/api/customers", raw=big)
    chk_problem("body over 1 MiB -> 413", r, 413)
    r = GET("/api/balances/EUR")
    chk_problem("balance for currency with no wallet -> 404", r, 404)
    r = GET("/api/balances")
    curs = sorted(a["currency"] for a in (r.data or {}).get("accounts", []))
    check("balances list holds exactly fixture currencies", curs == ["BTC", "NGN", "USDC", "USDT"], curs)
    r = GET("/api/balances/USDT")
    d = r.data or {}
    check("single balance fields and total = available + pending",
          r.status == 200 and all(k in d for k in ("account_number", "available_balance", "company_id", "currency",
                                                   "pending_balance", "total_balance"))
          and int(d["total_balance"]) == int(d["available_balance"]) + int(d["pending_balance"]), ex(r))
    r = GET("/api/transactions/OPENING_USDT")
    d = r.data or {}
    d = d.get("transaction", d)
    check("opening balance recorded as DEPOSIT_CONFIRMED/SETTLED ref OPENING_USDT",
          r.status == 200 and d.get("type") == "DEPOSIT_CONFIRMED" and d.get("state") == "SETTLED", ex(r))
    r = GET("/api/cards/not-a-uuid")
    chk_problem("non-UUID card id -> 400", r, 400)
    r = GET("/api/customers/not-a-uuid")
    chk_problem("non-UUID customer id -> 400", r, 400)
    r = GET("/api/cards/" + str(uuid.uuid4()))
    chk_problem("unknown card id -> 404", r, 404)
    r = POST("/sandbox/clock/advance", {"seconds": 1})
    r2 = GET("/api/whoami")
    check("advancing sandbox clock never breaks signing", r.status == 200 and r2.status == 200, ex(r2))
    r = POST("/sandbox/clock/advance", {"seconds": -5})
    check("clock advance with negative seconds refused (400)", r.status == 400, ex(r))


def mk_customer(cred=A, **over):
    body = {"email": "c-%s-%s@example.com" % (RUN, uuid.uuid4().hex[:8]), "customer_type": "individual",
            "first_name": "Ada", "last_name": "Lovelace", "phone_number": "+2348012345678",
            "country_code": "NGA", "reference": ref("cust")}
    body.update(over)
    return POST("/api/customers", body, cred=cred), body


KYC = {"country": "NGA", "date_of_birth": "1990-01-01", "id_type": "passport", "id_number": "A1234567",
       "dial_code": "+234", "phone_number": "8012345678", "line1": "1 Main St", "city": "Lagos",
       "state": "LA", "postal_code": "100001"}


def probe_customers():
    section("Customers and card KYC")
    r, body = mk_customer()
    check("create customer 2xx with envelope", r.status in (200, 201) and is_envelope(r), ex(r))
    c = r.data or {}
    check("create customer returns the customer at data (not data.customer)", "id" in c and "email" in c, ex(r))
    check("customer fields", UUID_RE.match(c.get("id", "")) and c.get("customer_type") == "individual"
          and c.get("company_id") and c.get("created_by") and c.get("is_active") is True
          and c.get("metadata") == "{}" and c.get("created_at") and c.get("updated_at"), ex(r))
    check("create customer response has metadata.request_id", isinstance((r.json or {}).get("metadata"), dict)
          and (r.json["metadata"].get("request_id")), ex(r))
    cid = c.get("id")
    CTX["c1"] = cid
    # idempotency
    r2 = POST("/api/customers", body)
    check("customer: same reference+same body replays byte-for-byte with original status",
          r2.status == r.status and r2.raw == r.raw, ex(r2))
    b2 = dict(body, first_name="Other")
    r3 = POST("/api/customers", b2)
    chk_problem("customer: same reference different body -> 409 IDEMPOTENCY_CONFLICT", r3, 409, "IDEMPOTENCY_CONFLICT")
    # validation
    r = POST("/api/customers", {"customer_type": "individual", "reference": ref("cust")})
    chk_problem("customer without email -> 400", r, 400)
    check("validation error carries errors[{field,message}] naming email",
          any(e.get("field") == "email" for e in (r.json or {}).get("errors", [])), ex(r))
    r = POST("/api/customers", {"email": "not-an-email", "customer_type": "individual"})
    chk_problem("customer with invalid email -> 400", r, 400)
    r = POST("/api/customers", {"email": "z%s@example.com" % RUN, "customer_type": "alien"})
    chk_problem("customer with unknown customer_type -> 400", r, 400)
    r = POST("/api/customers", {"email": body["email"], "customer_type": "individual"})
    check("duplicate email refused (4xx; status not fixed by docs)", r.status in (400, 409, 422), ex(r))
    # refusal stores nothing
    rf = ref("cust")
    r = POST("/api/customers", {"email": "bad", "customer_type": "individual", "reference": rf})
    r2 = POST("/api/customers", {"email": "ok-%s@example.com" % uuid.uuid4().hex[:8], "customer_type": "individual",
                                 "reference": rf})
    check("refused customer create stores nothing: corrected retry with same reference succeeds",
          r.status == 400 and r2.status in (200, 201), ex(r2))
    # GET
    r = GET("/api/customers/" + cid)
    check("GET customer returns customer directly at data", r.status == 200 and (r.data or {}).get("id") == cid, ex(r))
    r = GET("/api/customers?email=" + body["email"])
    d = r.data or {}
    lst = d.get("customers", [])
    check("list customers filter email exact match", r.status == 200 and len(lst) == 1 and lst[0]["id"] == cid, ex(r))
    keys = ("has_more", "next_cursor", "prev_cursor", "page_size", "total")
    check("list customers carries has_more,next_cursor,prev_cursor,page_size,total",
          all(k in d or k in (r.json or {}) for k in keys), ex(r, 600))
    r = GET("/api/customers?email=" + body["email"][:-4])
    check("email filter is exact (prefix finds nothing)", r.status == 200 and len((r.data or {}).get("customers", [])) == 0, ex(r))
    r = GET("/api/customers?reference=" + body["reference"])
    check("list customers filter reference", r.status == 200 and [x["id"] for x in r.data.get("customers", [])] == [cid], ex(r))
    r = GET("/api/customers?id=" + cid)
    check("list customers filter id", r.status == 200 and [x["id"] for x in r.data.get("customers", [])] == [cid], ex(r))
    r = GET("/api/customers?customer_type=business")
    check("list customers filter customer_type=business excludes individuals",
          r.status == 200 and all(x["customer_type"] == "business" for x in r.data.get("customers", [])), ex(r))
    # update
    r = PUT("/api/customers/" + cid, {"first_name": "Augusta"})
    d = r.data or {}
    d = d.get("customer", d)
    check("PUT update customer changes first_name, keeps last_name", r.status == 200 and d.get("first_name") == "Augusta"
          and d.get("last_name") == "Lovelace", ex(r))
    # blacklist
    r0, _ = mk_customer()
    bid = r0.data["id"]
    r = POST("/api/customers/blacklist/" + bid, {"blacklist": True})
    g = GET("/api/customers/" + bid)
    check("blacklist -> customer is_active false", r.status == 200 and g.data.get("is_active") is False, ex(r))
    r = GET("/api/customers?is_active=false")
    check("filter is_active=false lists the blacklisted customer",
          r.status == 200 and bid in [x["id"] for x in r.data.get("customers", [])], ex(r))
    r = POST("/api/customers/blacklist/" + bid, {"blacklist": False})
    g = GET("/api/customers/" + bid)
    check("un-blacklist -> is_active true", r.status == 200 and g.data.get("is_active") is True, ex(r))
    r = PUT("/api/customers/" + bid, {"is_active": False})
    g = GET("/api/customers/" + bid)
    check("update is_active=false via PUT", r.status == 200 and g.data.get("is_active") is False, ex(r))
    # delete
    r = DELETE("/api/customers/" + bid)
    g = GET("/api/customers/" + bid)
    check("delete customer 200 then GET 404", r.status == 200 and g.status == 404, ex(r) + " | " + ex(g))
    # cross-company
    r = GET("/api/customers/" + cid, cred=B)
    chk_problem("another company's customer id -> 404", r, 404)
    r = GET("/api/customers?id=" + cid, cred=B)
    check("another company's customer absent from its list", r.status == 200 and r.data.get("customers") == [], ex(r))
    # card KYC
    r = POST("/api/customers/%s/card-kyc" % cid, KYC)
    d = r.data or {}
    check("card KYC submit -> {customer_id, status 'pending'}", r.status in (200, 201) and d.get("customer_id") == cid
          and d.get("status") == "pending", ex(r))
    r = GET("/api/customers/%s/card-kyc" % cid)
    check("card KYC read right after submit still pending", r.status == 200 and r.data.get("status") == "pending", ex(r))
    CTX["kyc_pending_customer"] = cid
    r2, _ = mk_customer()
    rej = r2.data["id"]
    r = POST("/api/customers/%s/card-kyc" % rej, dict(KYC, id_number="B12340000"))
    CTX["c_rej"] = rej
    r3, _ = mk_customer()
    CTX["c_nokyc"] = r3.data["id"]
    r = GET("/api/customers/%s/card-kyc" % CTX["c_nokyc"])
    check("card KYC read for customer who never submitted -> 404 (or status missing)", r.status in (404,) or
          (r.status == 200 and r.data.get("status") not in ("approved",)), ex(r))
    r = POST("/api/customers/%s/card-kyc" % CTX["c_nokyc"], dict(KYC, id_type="library_card"))
    chk_problem("card KYC with unknown id_type -> 400", r, 400)
    k = dict(KYC)
    del k["date_of_birth"]
    r = POST("/api/customers/%s/card-kyc" % CTX["c_nokyc"], k)
    chk_problem("card KYC missing date_of_birth -> 400", r, 400)
    r = POST("/api/customers/%s/card-kyc" % CTX["c_nokyc"], dict(KYC, country="NG"))
    chk_problem("card KYC with 2-letter country (needs alpha-3) -> 400", r, 400)
    r = POST("/api/customers/%s/card-kyc" % str(uuid.uuid4()), KYC)
    chk_problem("card KYC unknown customer -> 404", r, 404)


def card_body(cid, amount=5000000, **over):
    b = {"amount": amount, "card_type": "virtual", "currency": "USD", "customer_id": cid, "card_brand": "visa",
         "reference": ref("card"), "webhook_url": "http://127.0.0.1:%d/card" % HOOK_PORT,
         "created_by": str(uuid.UUID(A[0]))}
    b.update(over)
    return b


def lite_body(cid, amount=2000000, days=3, **over):
    today = sandbox_now().date()
    b = {"card_type": "lite", "customer_id": cid, "amount": amount, "currency": "USD", "card_brand": "visa",
         "swipe_count": 2, "terminate_date": (today + timedelta(days=days)).isoformat(), "reference": ref("lite"),
         "webhook_url": "http://127.0.0.1:%d/card" % HOOK_PORT}
    b.update(over)
    return b


def card_get(card_id, cred=A):
    r = GET("/api/cards/" + card_id, cred=cred)
    d = r.data or {}
    return r, d.get("card", d)


def card_txs(card_id):
    r = GET("/api/cards/%s/transactions" % card_id)
    return r, (r.data or {}).get("transactions", [])


def fund(card_id, amount, typ="fund", reference=None):
    return POST("/api/cards/%s/balance" % card_id, {"amount": amount, "type": typ,
                                                    "reference": reference or ref("bal")})


def txn_of(r):
    j = r.json or {}
    if isinstance(j.get("data"), dict) and isinstance(j["data"].get("transaction"), dict):
        return j["data"]["transaction"]
    return j.get("transaction") if isinstance(j.get("transaction"), dict) else {}


def spend(card_id, amount, cred=A):
    return POST("/sandbox/cards/%s/spend" % card_id, {"amount": amount, "merchant": "Probe Shop"}, cred=cred)


def probe_cards():
    section("Cards: KYC gating, create, provisioning")
    pend = CTX["kyc_pending_customer"]
    u0 = bal("USDT")
    r = POST("/api/cards", card_body(pend))
    chk_problem("virtual card for customer with pending KYC -> 422 KYC_NOT_APPROVED", r, 422, "KYC_NOT_APPROVED")
    check("refused card create moves nothing", bal("USDT") == u0, (u0, bal("USDT")))
    advance(300)
    r = GET("/api/customers/%s/card-kyc" % pend)
    check("card KYC approved after 300 s advance", r.status == 200 and r.data.get("status") == "approved", ex(r))
    r = GET("/api/customers/%s/card-kyc" % CTX["c_rej"])
    check("card KYC id_number ending 0000 -> rejected", r.status == 200 and r.data.get("status") == "rejected", ex(r))
    r = POST("/api/cards", card_body(CTX["c_rej"]))
    chk_problem("card for rejected-KYC customer -> 422 KYC_NOT_APPROVED", r, 422, "KYC_NOT_APPROVED")
    r = POST("/api/cards", card_body(CTX["c_nokyc"]))
    chk_problem("card for customer with no KYC -> 422 KYC_NOT_APPROVED", r, 422, "KYC_NOT_APPROVED")
    u1 = bal("USDT")
    r = POST("/api/cards", lite_body(CTX["c_nokyc"]))
    chk_problem("lite card without approved KYC -> 422 KYC_NOT_APPROVED", r, 422, "KYC_NOT_APPROVED")
    check("refused lite card create moves nothing", bal("USDT") == u1, (u1, bal("USDT")))

    cid = pend
    CTX["card_customer"] = cid
    # validation
    for label, over in [("missing currency", {"currency": None}), ("missing amount", {"amount": None}),
                        ("negative amount", {"amount": -5}), ("zero amount", {"amount": 0}),
                        ("fractional micro-units amount", {"amount": 1.5}),
                        ("card_type 'bogus'", {"card_type": "bogus"}),
                        ("non-HTTPS non-loopback webhook_url", {"webhook_url": "http://example.com/h"}),
                        ("amount as string 'abc'", {"amount": "abc"})]:
        b = card_body(cid)
        for k, v in over.items():
            if v is None:
                del b[k]
            else:
                b[k] = v
        r = POST("/api/cards", b)
        chk_problem("create card %s -> 400" % label, r, 400)
    r = POST("/api/cards", card_body(str(uuid.uuid4())))
    check("create card for unknown customer_id -> 404 (or 422)", r.status in (404, 422), ex(r))
    r = POST("/api/cards", card_body(cid, amount=10 ** 15))
    chk_problem("create card with amount above wallet -> 422 INSUFFICIENT_BALANCE", r, 422, "INSUFFICIENT_BALANCE")

    u0 = bal("USDT")
    body = card_body(cid, amount=5000000, card_limits={"daily_limit": 100000000})
    r = POST("/api/cards", body)
    check("create virtual card 2xx envelope", r.status in (200, 201) and is_envelope(r), ex(r))
    c = (r.data or {}).get("card", {})
    card_id = c.get("id", "")
    CTX["card"] = card_id
    check("new card status 'pending', created_status 'processing'", c.get("status") == "pending"
          and c.get("created_status") == "processing", ex(r))
    check("new card masked_pan empty while processing", c.get("masked_pan") == "", ex(r))
    check("new card balance_amount '0' (string)", c.get("balance_amount") == "0", ex(r))
    check("card reference is CARD_CREATE_<id>", c.get("reference") == "CARD_CREATE_" + card_id, c.get("reference"))
    cust = GET("/api/customers/" + cid).data or {}
    check("card name defaults to customer's name; preferred_name defaults to name",
          c.get("name") == "%s %s" % (cust.get("first_name"), cust.get("last_name"))
          and c.get("preferred_name") == c.get("name"), (c.get("name"), cust.get("first_name")))
    check("card created_by echoes request", c.get("created_by") == body["created_by"], c.get("created_by"))
    check("card webhook_url echoed", c.get("webhook_url") == body["webhook_url"], c.get("webhook_url"))
    check("card user_metadata is '{}' string", c.get("user_metadata") == "{}", c.get("user_metadata"))
    check("card billing_address keys", isinstance(c.get("billing_address"), dict) and all(
        k in c["billing_address"] for k in ("line1", "line2", "city", "state", "postal_code", "country")), ex(r))
    check("card card_type virtual, balance_currency USD, contactless boolean, card_brand visa",
          c.get("card_type") == "virtual" and c.get("balance_currency") == "USD"
          and isinstance(c.get("contactless_payment"), bool) and c.get("card_brand") == "visa", ex(r))
    check("card spending_limits is an object (create)", isinstance(c.get("spending_limits"), dict), ex(r))
    check("card display_amount is a number", isinstance(c.get("display_amount"), (int, float)), ex(r))
    u1 = bal("USDT")
    check("card create debits wallet amount + 1% fee (5,050,000)", u0 - u1 == 5050000, (u0, u1, u0 - u1))
    r2 = POST("/api/cards", body)
    check("card create same reference+body replays byte-for-byte", r2.status == r.status and r2.raw == r.raw, ex(r2))
    check("card create replay does not debit again", bal("USDT") == u1, (u1, bal("USDT")))
    r3 = POST("/api/cards", dict(body, amount=6000000))
    chk_problem("card create same reference different body -> 409", r3, 409, "IDEMPOTENCY_CONFLICT")
    r, c = card_get(card_id)
    check("GET card right after create still pending (async >= 10 s)", r.status == 200 and c.get("status") == "pending", ex(r))
    check("GET card has no PAN or CVV", "card_number" not in (r.raw.decode()) and "cvv" not in r.raw.decode(), ex(r))
    r = POST("/api/cards/%s/status" % card_id, {"status": "frozen"})
    chk_problem("freezing a pending card -> 422 (transition the state machine forbids)", r, 422)
    r = GET("/api/cards/%s/secure" % card_id)
    check("secure details of a pending card refused (4xx)", 400 <= r.status < 500, ex(r))

    # second card for list pagination
    r = POST("/api/cards", card_body(cid, amount=3000000))
    CTX["card2"] = (r.data or {}).get("card", {}).get("id")
    advance(300)
    r, c = card_get(card_id)
    check("after 300 s: status active, created_status completed", c.get("status") == "active"
          and c.get("created_status") == "completed", ex(r))
    mp = c.get("masked_pan", "")
    check("masked_pan = 6 digits + 6 '*' + 4 digits", re.match(r"^\d{6}\*{6}\d{4}$", mp or "") is not None, mp)
    check("balance_amount equals initial amount after provisioning", c.get("balance_amount") == "5000000", c.get("balance_amount"))
    check("display_amount 5.0 for 5000000 micro-units", c.get("display_amount") == 5 or c.get("display_amount") == 5.0,
          c.get("display_amount"))
    check("card_limits echoed (daily_limit)", (c.get("card_limits") or c.get("spending_limits") or {}).get("daily_limit")
          in (100000000, "100000000"), ex(r, 2000))
    CTX["masked_pan"] = mp
    # webhooks
    got = wait_hooks(event="virtualcard.created.completed", path_prefix="/card",
                     pred=lambda j: (j.get("data") or {}).get("card_id") == card_id)
    check("card-ready webhook virtualcard.created.completed delivered to card webhook_url", got, len(HOOKS))
    if got:
        p, h, raw, j = got[0]
        check("card-ready webhook body {event,event_id,company_id,data,created_at}",
              all(k in j for k in ("event", "event_id", "company_id", "data", "created_at")), raw[:300])
        check("card-ready webhook data carries card record (masked_pan populated)",
              isinstance(j["data"], dict) and (j["data"].get("masked_pan") or (j["data"].get("card") or {}).get("masked_pan")),
              raw[:400])
        check("card webhook x-service-signature = hex HMAC-SHA512(secret given to PUT /sandbox/webhook)",
              sig_ok(h, raw, HOOK_SECRET_A), h.get("x-service-signature"))
    got = wait_hooks(event="virtualcard.created.completed", path_prefix="/hooks/A",
                     pred=lambda j: (j.get("data") or {}).get("card_id") == card_id)
    check("card-ready webhook also delivered to company webhook URL", got, len(HOOKS))

    section("Cards: lists, secure details")
    r = GET("/api/customers/%s/cards" % cid)
    d = r.data or {}
    cards = d.get("cards", [])
    pi = d.get("page_info", {})
    check("cards of customer: data.cards[] + page_info keys", r.status == 200 and isinstance(cards, list) and all(
        k in pi for k in ("has_next_page", "has_previous_page", "previous_cursor", "next_cursor", "total")), ex(r))
    me = [x for x in cards if x.get("id") == card_id]
    check("by-customer list first_six_digit/last_four_digit agree with masked_pan", me and mp and
          me[0].get("first_six_digit") == mp[:6] and me[0].get("last_four_digit") == mp[-4:], me[:1])
    r = GET("/api/cards?limit=1")
    d = r.data or {}
    pi = d.get("page_info", {})
    check("GET /api/cards?limit=1 -> 1 card, has_next_page true", r.status == 200 and len(d.get("cards", [])) == 1
          and pi.get("has_next_page") is True and pi.get("next_cursor"), ex(r, 500))
    if pi.get("next_cursor"):
        r2 = GET("/api/cards?limit=1&cursor=" + urllib.request.quote(pi["next_cursor"]))
        d2 = r2.data or {}
        check("next page via cursor gives a different card, has_previous_page true",
              r2.status == 200 and d2.get("cards") and d2["cards"][0]["id"] != d["cards"][0]["id"]
              and d2.get("page_info", {}).get("has_previous_page") is True, ex(r2, 500))
    r = GET("/api/cards?limit=0")
    chk_problem("cards limit=0 -> 400", r, 400)
    r = GET("/api/cards?limit=101")
    chk_problem("cards limit=101 -> 400", r, 400)
    r = GET("/api/cards?status=bogus")
    chk_problem("cards status=bogus -> 400", r, 400)
    r = GET("/api/cards?status=active&card_type=virtual")
    check("cards filter status=active&card_type=virtual", r.status == 200 and all(
        x["status"] == "active" and x["card_type"] == "virtual" for x in r.data.get("cards", []))
        and card_id in [x["id"] for x in r.data.get("cards", [])], ex(r))
    r = GET("/api/cards?search=" + mp[-4:])
    check("cards search by last 4 digits finds card", r.status == 200 and card_id in [x["id"] for x in r.data.get("cards", [])], ex(r))
    r = GET("/api/cards", cred=B)
    check("company B's card list does not include A's card", r.status == 200 and card_id not in
          [x["id"] for x in r.data.get("cards", [])], ex(r))
    r, _ = card_get(card_id, cred=B)
    chk_problem("company B GET A's card -> 404", r, 404)

    r1 = GET("/api/cards/%s/secure" % card_id)
    det = (r1.data or {}).get("details", {})
    check("secure details data.details {card_id, card_number, cvv, expiry_month, expiry_year, name}",
          r1.status == 200 and all(k in det for k in ("card_id", "card_number", "cvv", "expiry_month", "expiry_year", "name")),
          ex(r1))
    pan = det.get("card_number", "")
    check("secure card_number 16 digits, Luhn-valid, agrees with masked_pan",
          re.match(r"^\d{16}$", pan or "") and luhn_ok(pan) and pan[:6] == mp[:6] and pan[-4:] == mp[-4:], (pan, mp))
    check("secure cvv 3 digits, expiry_month 'MM', expiry_year 'YYYY'",
          re.match(r"^\d{3}$", str(det.get("cvv"))) and re.match(r"^(0[1-9]|1[0-2])$", str(det.get("expiry_month")))
          and re.match(r"^\d{4}$", str(det.get("expiry_year"))), det)
    r2 = GET("/api/cards/%s/secure" % card_id)
    r3 = GET("/api/cards/%s/secure" % card_id)
    check("secure details 2nd call within 60 s allowed", r2.status == 200, ex(r2))
    chk_problem("secure details 3rd call within 60 s -> 429", r3, 429, "RATE_LIMITED")
    ra = r3.hdr("Retry-After")
    check("429 has Retry-After integer seconds in (0,60]", ra is not None and ra.isdigit() and 0 < int(ra) <= 60, ra)
    advance(int(ra) if ra and ra.isdigit() else 60)
    r4 = GET("/api/cards/%s/secure" % card_id)
    check("secure details retried after waiting exactly Retry-After (%s s) succeeds" % ra, r4.status == 200, ex(r4))
    advance(61)
    r4 = GET("/api/cards/%s/secure" % card_id)
    check("secure details allowed again after 60 s", r4.status == 200, ex(r4))
    r = GET("/api/cards/%s/details" % card_id)
    chk_problem("v1 details path not served -> 404", r, 404)

    section("Cards: fund / withdraw")
    advance(61)
    r = fund(card_id, 1000000, typ="topup")
    chk_problem("balance type 'topup' -> 400", r, 400)
    r = POST("/api/cards/%s/balance" % card_id, {"amount": 1000000, "type": "fund"})
    chk_problem("balance without reference -> 400", r, 400)
    r = fund(card_id, 0)
    chk_problem("fund amount 0 -> 400", r, 400)
    r = fund(card_id, -100)
    chk_problem("fund negative amount -> 400", r, 400)
    r = fund(card_id, 1.5)
    chk_problem("fund fractional micro-units -> 400", r, 400)
    r = fund(card_id, 10 ** 12)
    chk_problem("fund above wallet balance (10^12) -> 422 INSUFFICIENT_BALANCE", r, 422, "INSUFFICIENT_BALANCE")
    r = fund(card_id, 10 ** 16)
    check("fund 10^16 micro-units (a positive integer) -> 422 not 400", r.status == 422, ex(r), ambiguous=True)
    rf = ref("fund")
    r = fund(card_id, 1000000, typ="bogus", reference=rf)
    u0 = bal("USDT")
    r = fund(card_id, 10000000, reference=rf)
    check("fund after a refused call with the same reference succeeds (refusal stored nothing)",
          r.status in (200, 201), ex(r))
    j = r.json or {}
    t = txn_of(r)
    check("fund envelope success true with message and timestamp", j.get("success") is True and "message" in j
          and "timestamp" in j, ex(r))
    check("fund response has request_id (top-level or metadata)", j.get("request_id") or (j.get("metadata") or {}).get("request_id"), ex(r))
    check("fund transaction pending, type funding, balance_before == balance_after",
          t.get("status") == "pending" and t.get("type") == "funding" and t.get("balance_before") == t.get("balance_after")
          and t.get("balance_before") is not None, ex(r, 900))
    check("fund fee_amount 1% ('100000') and fee_type funding_fee", t.get("fee_amount") == "100000"
          and t.get("fee_type") == "funding_fee", t)
    check("fund provider-level success flag (data.success) false while processing, with a message",
          (j.get("data") or {}).get("success") is False and isinstance((j.get("data") or {}).get("message"), str), ex(r, 900))
    check("data.transaction location (spec table says data.transaction)",
          isinstance((j.get("data") or {}).get("transaction"), dict), list(j.keys()))
    u1 = bal("USDT")
    check("fund debits wallet amount + 1% (10,100,000)", u0 - u1 == 10100000, (u0, u1))
    rr = fund(card_id, 10000000, reference=rf)
    check("fund same reference returns original transaction byte-for-byte (not 429)", rr.status == r.status and rr.raw == r.raw, ex(rr))
    check("fund replay did not debit again", bal("USDT") == u1, (u1, bal("USDT")))
    rc = fund(card_id, 20000000, reference=rf)
    chk_problem("fund same reference different amount -> 409", rc, 409, "IDEMPOTENCY_CONFLICT")
    r2 = fund(card_id, 1000000)
    chk_problem("second fund within 30 s -> 429 RATE_LIMITED", r2, 429, "RATE_LIMITED")
    ra = r2.hdr("Retry-After")
    check("fund 429 Retry-After in (0,30]", ra and ra.isdigit() and 0 < int(ra) <= 30, ra)
    check("rate-limited fund moved nothing", bal("USDT") == u1, (u1, bal("USDT")))
    tx_id = t.get("id") or t.get("transaction_id")
    r, txs = card_txs(card_id)
    d = r.data or {}
    check("card transactions: data.transactions[] + data.page_info", r.status == 200 and isinstance(txs, list)
          and all(k in d.get("page_info", {}) for k in ("has_next_page", "has_previous_page", "previous_cursor", "next_cursor", "total")),
          ex(r))
    mine = [x for x in txs if (x.get("id") or x.get("transaction_id")) == tx_id]
    check("card transaction listed as pending before settlement", mine and mine[0].get("status") == "pending", mine[:1])
    r, c = card_get(card_id)
    check("card balance unchanged while fund pending", c.get("balance_amount") == "5000000", c.get("balance_amount"))
    advance(300)
    r, txs = card_txs(card_id)
    mine = [x for x in txs if (x.get("id") or x.get("transaction_id")) == tx_id]
    check("fund completed after 300 s; balance_after updated (15,000,000)",
          mine and mine[0].get("status") == "completed" and mine[0].get("balance_after") == "15000000"
          and mine[0].get("balance_before") == "5000000", mine[:1])
    r, c = card_get(card_id)
    check("card balance_amount 15000000 after fund settles", c.get("balance_amount") == "15000000", c.get("balance_amount"))
    if tx_id:
        r = GET("/api/cards/%s/transactions/%s" % (card_id, tx_id))
        d = r.data or {}
        d = d.get("transaction", d)
        check("GET single card transaction", r.status == 200 and d.get("status") == "completed", ex(r))
    got = wait_hooks(event="virtualcard.topup.completed", pred=lambda j: (j.get("data") or {}).get("card_id") == card_id)
    check("virtualcard.topup.completed webhook delivered with data.card_id", got, len(HOOKS))
    if got:
        dd = got[0][3].get("data") or {}
        amt = dd.get("amount", (dd.get("transaction") or {}).get("amount"))
        check("topup webhook amount in micro-units (10000000)", str(amt) == "10000000", dd)
    r = fund(card_id, 1000000)
    check("fund allowed again after 30 s", r.status in (200, 201), ex(r))
    advance(300)
    # withdraw
    r = fund(card_id, 10 ** 12, typ="withdraw")
    chk_problem("withdraw above card balance -> 422 INSUFFICIENT_BALANCE", r, 422, "INSUFFICIENT_BALANCE")
    _, c = card_get(card_id)
    cb = int(c.get("balance_amount", "0"))
    u0 = bal("USDT")
    r = fund(card_id, 2000000, typ="withdraw")
    t = txn_of(r)
    check("withdraw 2xx pending, type withdrawal, balance_before == balance_after, fee_type funding_fee",
          r.status in (200, 201) and t.get("status") == "pending" and t.get("type") == "withdrawal"
          and t.get("balance_before") == t.get("balance_after") and t.get("fee_type") == "funding_fee"
          and t.get("fee_amount") == "20000", ex(r, 900))
    r2 = fund(card_id, 1000000, typ="withdraw")
    chk_problem("second withdraw within 60 s -> 429", r2, 429, "RATE_LIMITED")
    ra = r2.hdr("Retry-After")
    check("withdraw 429 Retry-After in (0,60]", ra and ra.isdigit() and 0 < int(ra) <= 60, ra)
    advance(int(ra) if ra and ra.isdigit() else 60)
    r2b = fund(card_id, 1000000, typ="withdraw")
    check("withdraw retried after waiting exactly Retry-After (%s s) succeeds" % ra, r2b.status in (200, 201), ex(r2b))
    wd_extra = 1000000 if r2b.status in (200, 201) else 0
    advance(300)
    _, c = card_get(card_id)
    check("withdraw settles: card balance -2,000,000", int(c.get("balance_amount", "0")) == cb - 2000000 - wd_extra, (cb, c.get("balance_amount")))
    check("withdraw credits wallet amount - 1% (1,980,000)", bal("USDT") - u0 == 1980000 + wd_extra * 99 // 100, (u0, bal("USDT")))
    got = wait_hooks(event="virtualcard.withdrawal.completed", pred=lambda j: (j.get("data") or {}).get("card_id") == card_id)
    check("virtualcard.withdrawal.completed webhook delivered", got, len(HOOKS))
    r = POST("/api/cards/%s/fund" % card_id, {"amount": 1000000, "reference": ref("v1")})
    chk_problem("v1 fund path not served -> 404", r, 404)
    r = fund(card_id, 1000000, cred=None) if False else call("POST", "/api/cards/%s/balance" % card_id,
                                                          {"amount": 1000000, "type": "fund", "reference": ref("x")}, cred=B)
    chk_problem("company B funding A's card -> 404", r, 404)

    section("Cards: spend, limits, status")
    _, c = card_get(card_id)
    cb = int(c["balance_amount"])
    r = spend(card_id, 1000000)
    _, c = card_get(card_id)
    check("spend 1,000,000 approved, card balance decreases by it (no fee)", r.status in (200, 201)
          and int(c["balance_amount"]) == cb - 1000000, ex(r))
    got = wait_hooks(event="virtualcard.transaction.debit", pred=lambda j: (j.get("data") or {}).get("card_id") == card_id)
    check("virtualcard.transaction.debit webhook delivered", got, len(HOOKS))
    cb -= 1000000
    r = spend(card_id, cb + 1)
    _, c = card_get(card_id)
    check("spend above card balance declined, nothing moves", int(c["balance_amount"]) == cb, ex(r))
    r = PUT("/api/cards/%s/spend-limits" % card_id, {"transaction_limit": 500000, "daily_limit": 50000000})
    check("PUT spend-limits 2xx", r.status in (200, 201), ex(r))
    r = PUT("/api/cards/%s/spend-limits" % card_id, {"transaction_limit": -1})
    chk_problem("spend-limits negative -> 400", r, 400)
    r = PUT("/api/cards/%s/spend-limits" % card_id, {"transaction_limit": "lots"})
    chk_problem("spend-limits non-integer -> 400", r, 400)
    r = PUT("/api/cards/%s/spending-limits" % card_id, {"transaction_limit": 500000})
    chk_problem("v1 spending-limits path not served -> 404", r, 404)
    r = spend(card_id, 600000)
    _, c = card_get(card_id)
    check("spend above transaction_limit declined", int(c["balance_amount"]) == cb, ex(r))
    r = spend(card_id, 400000)
    _, c = card_get(card_id)
    check("spend under transaction_limit approved", int(c["balance_amount"]) == cb - 400000, ex(r))
    cb -= 400000
    r = POST("/api/cards/%s/status" % card_id, {"status": "frozen"})
    d = r.data or {}
    check("freeze: message 'Card frozen successfully', data.card.status frozen, metadata.request_id",
          r.status == 200 and (r.json or {}).get("message") == "Card frozen successfully"
          and (d.get("card") or {}).get("status") == "frozen" and ((r.json or {}).get("metadata") or {}).get("request_id"), ex(r))
    r, c = card_get(card_id)
    check("frozen card keeps balance and PAN", c.get("status") == "frozen" and int(c["balance_amount"]) == cb
          and c.get("masked_pan") == CTX["masked_pan"], ex(r))
    r = spend(card_id, 100000)
    _, c = card_get(card_id)
    check("spend on frozen card declined", int(c["balance_amount"]) == cb, ex(r))
    for v in ("blocked", "terminated", "FROZEN", ""):
        r = POST("/api/cards/%s/status" % card_id, {"status": v})
        chk_problem("status value %r rejected with 400" % v, r, 400)
    r = POST("/api/cards/%s/status" % card_id, {})
    chk_problem("status body missing status -> 400", r, 400)
    r = POST("/api/cards/%s/status" % card_id, {"status": "active"})
    check("unfreeze: message 'Card activated successfully', status active", r.status == 200
          and (r.json or {}).get("message") == "Card activated successfully"
          and ((r.data or {}).get("card") or {}).get("status") == "active", ex(r))
    r = POST("/api/cards/%s/freeze" % card_id)
    chk_problem("v1 freeze path not served -> 404", r, 404)

    section("Cards: termination")
    r = DELETE("/api/cards/%s" % card_id, {"reason": "probe"})
    chk_problem("terminate card < 24 h old -> 422 CARD_TOO_NEW", r, 422, "CARD_TOO_NEW")
    r, c = card_get(card_id)
    check("refused termination leaves card active", c.get("status") == "active", ex(r))
    r = DELETE("/api/cards/%s" % card_id)
    chk_problem("terminate without reason -> 400", r, 400)
    r = DELETE("/api/customers/%s" % cid)
    chk_problem("delete customer with a non-terminated card -> 422", r, 422)
    r = POST("/api/cards/%s/terminate" % card_id, {"reason": "x"})
    chk_problem("v1 terminate path not served -> 404", r, 404)
    lite_probe_pre(cid)
    advance(86400)
    _, c = card_get(card_id)
    cb = int(c["balance_amount"])
    u0 = bal("USDT")
    r = POST("/api/cards/%s/status" % card_id, {"status": "frozen"})
    r = DELETE("/api/cards/%s" % card_id, {"reason": "probe done"})
    d = r.data or {}
    check("terminate frozen card >= 24 h: 200 with card_id,status terminated,remaining_balance,balance_returned,terminated_at,reason",
          r.status == 200 and d.get("card_id") == card_id and d.get("status") == "terminated"
          and isinstance(d.get("remaining_balance"), str) and isinstance(d.get("balance_returned"), bool)
          and d.get("terminated_at") and d.get("reason") == "probe done", ex(r))
    check("remaining_balance equals card balance (micro-units string)", d.get("remaining_balance") == str(cb), (d.get("remaining_balance"), cb))
    check("termination returns whole balance to USDT wallet, no fee", bal("USDT") - u0 == cb, (u0, bal("USDT"), cb))
    r, c = card_get(card_id)
    check("terminated card stays visible with status terminated", r.status == 200 and c.get("status") == "terminated", ex(r))
    r = fund(card_id, 1000000)
    chk_problem("fund terminated card -> 422", r, 422)
    r = POST("/api/cards/%s/status" % card_id, {"status": "active"})
    chk_problem("unfreeze/activate terminated card -> 422", r, 422)
    r = DELETE("/api/cards/%s" % card_id, {"reason": "again"})
    chk_problem("terminate already terminated card -> 422", r, 422)
    r = GET("/api/cards?status=terminated")
    check("cards list status=terminated contains terminated card", r.status == 200 and card_id in
          [x["id"] for x in r.data.get("cards", [])], ex(r))
    lite_probe_post(cid)


def lite_probe_pre(cid):
    section("Lite cards")
    u0 = bal("USDT")
    cases = [("amount 1999999 (below 2000000)", {"amount": 1999999}),
             ("amount 250000001 (above 250000000)", {"amount": 250000001}),
             ("swipe_count 0", {"swipe_count": 0}),
             ("swipe_count -1", {"swipe_count": -1}),
             ("missing swipe_count", {"swipe_count": None}),
             ("missing card_brand", {"card_brand": None}),
             ("card_brand 'amex'", {"card_brand": "amex"}),
             ("missing terminate_date", {"terminate_date": None}),
             ("terminate_date today", {"terminate_date": sandbox_now().date().isoformat()}),
             ("terminate_date yesterday", {"terminate_date": (sandbox_now().date() - timedelta(days=1)).isoformat()}),
             ("terminate_date not a date", {"terminate_date": "31/12/2099"})]
    for label, over in cases:
        b = lite_body(cid)
        for k, v in over.items():
            if v is None:
                del b[k]
            else:
                b[k] = v
        r = POST("/api/cards", b)
        chk_problem("lite card %s -> 400" % label, r, 400)
    check("refused lite cards moved nothing", bal("USDT") == u0, (u0, bal("USDT")))
    b = lite_body(cid, amount=2000000)
    r = POST("/api/cards", b)
    c = (r.data or {}).get("card", {})
    check("lite card amount 2000000 (lower bound) accepted, card_type lite, pending", r.status in (200, 201)
          and c.get("card_type") == "lite" and c.get("status") == "pending", ex(r))
    check("lite card create response carries card_limits object", isinstance(c.get("card_limits"), dict), ex(r))
    check("lite create debits amount + 1%", u0 - bal("USDT") == 2020000, (u0, bal("USDT")))
    CTX["lite"] = c.get("id")
    CTX["lite_tdate"] = b["terminate_date"]
    r = POST("/api/cards", lite_body(cid, amount=250000000, swipe_count=1, terminate_date=(sandbox_now().date() + timedelta(days=30)).isoformat()))
    check("lite card amount 250000000 (upper bound) accepted", r.status in (200, 201), ex(r))
    CTX["lite_big"] = (r.data or {}).get("card", {}).get("id")
    r = POST("/api/cards", {"type": "lite", "card_type": "lite", "customer": {"customer_type": "individual",
          "first_name": "X", "last_name": "Y", "email": "nomatch-%s@example.com" % RUN, "phone_number": "8012345678",
          "dial_code": "+234"}, "amount": 2000000, "currency": "USD", "card_brand": "visa", "swipe_count": 1,
          "terminate_date": (sandbox_now().date() + timedelta(days=5)).isoformat(), "reference": ref("lite")})
    check("lite card with customer object matching no approved-KYC customer refused (4xx, no card)",
          r.status in (400, 404, 422), ex(r))
    advance(300)
    lid = CTX["lite"]
    _, c = card_get(lid)
    check("lite card active after provisioning", c.get("status") == "active" and c.get("balance_amount") == "2000000", c)
    r = fund(lid, 1000000)
    check("funding a lite card refused (4xx)", r.status in (400, 422), ex(r))
    check("funding a lite card refused with 422 (state/operation not allowed)", r.status == 422, ex(r))
    r1 = spend(lid, 100000)
    r2 = spend(lid, 100000)
    r3 = spend(lid, 100000)
    _, c = card_get(lid)
    check("lite card swipe_count 2: third spend declined (balance 1,800,000)", c.get("balance_amount") == "1800000",
          (c.get("balance_amount"), ex(r3)))


def lite_probe_post(cid):
    lid = CTX["lite"]
    tdate = datetime.fromisoformat(CTX["lite_tdate"]).date()
    big = CTX.get("lite_big")
    if big:
        u0 = bal("USDT")
        _, cbig = card_get(big)
        r = DELETE("/api/cards/%s" % big, {"reason": "lite done"})
        d = r.data or {}
        check("manual termination of lite card >= 24 h returns whole balance (250,000,000) to wallet",
              r.status == 200 and d.get("remaining_balance") == cbig.get("balance_amount") and bal("USDT") - u0 == int(cbig.get("balance_amount", 0)),
              (ex(r), u0, bal("USDT")))
    CTX["u_before_lite_auto"] = bal("USDT")
    now = sandbox_now()
    target = datetime(tdate.year, tdate.month, tdate.day, tzinfo=timezone.utc) + timedelta(days=1, hours=1)
    secs = int((target - now).total_seconds())
    if secs > 0:
        advance(secs)
    r, c = card_get(lid)
    check("lite card terminated automatically after terminate_date", c.get("status") == "terminated", ex(r))
    check("auto-terminated lite card returned its 1,800,000 balance to the wallet (whole balance, no fee)",
          bal("USDT") - CTX.get("u_before_lite_auto", 0) == 1800000, (CTX.get("u_before_lite_auto"), bal("USDT")))
    r1 = spend(lid, 1000)
    _, c = card_get(lid)
    check("spend on terminated lite card declined", c.get("balance_amount") in ("0", "1800000"), (ex(r1), c.get("balance_amount")))
    # Customer delete after all cards terminated (two lite cards + card2)
    for k in ("card2",):
        if CTX.get(k):
            DELETE("/api/cards/%s" % CTX[k], {"reason": "cleanup"})
    r = GET("/api/customers/%s/cards" % cid)
    live = [x for x in (r.data or {}).get("cards", []) if x.get("status") != "terminated"]
    for x in live:
        DELETE("/api/cards/%s" % x["id"], {"reason": "cleanup"})
    r = DELETE("/api/customers/%s" % cid)
    g = GET("/api/customers/%s" % cid)
    check("customer deletable once every card terminated; then 404", r.status == 200 and g.status == 404,
          ex(r) + " | " + ex(g))


def probe_trading():
    section("Trading: quotes and orders")
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "60000"})
    r = POST("/api/trading/quotes", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.01"})
    q = (r.data or {}).get("quote", {})
    check("quote create 2xx data.quote", r.status in (200, 201) and q.get("id"), ex(r))
    check("quote side uppercase BUY", q.get("side") == "BUY", q.get("side"))
    need = ("id", "base_currency", "quote_currency", "side", "quantity", "price", "expires_at", "created_at",
            "original_quantity", "consumed_quantity", "remaining_quantity", "is_exhausted", "is_expired", "exchange")
    check("quote fields present", all(k in q for k in need), [k for k in need if k not in q])
    try:
        life = (parse_ts(q["expires_at"]) - parse_ts(q["created_at"])).total_seconds()
    except Exception:
        life = None
    check("quote expires_at = created + 30 s", life is not None and abs(life - 30) < 1, life)
    check("quote price = 60000 * 1.005 for buy", approx(q.get("price"), "60300"), q.get("price"))
    check("quote remaining = original - consumed; flags false", approx(dec(q.get("original_quantity", 0)) - dec(q.get("consumed_quantity", 0)),
          q.get("remaining_quantity", -1)) and q.get("is_exhausted") is False and q.get("is_expired") is False, q)
    exg = q.get("exchange") or {}
    check("quote exchange summary send/receive", all(k in exg for k in ("send_quantity", "send_currency", "receive_quantity",
          "receive_currency")) and exg.get("send_currency") == "USDT" and exg.get("receive_currency") == "BTC", exg)
    r = POST("/api/trading/quotes", {"base_currency": "BTC", "quote_currency": "USDT", "side": "hold", "quantity": "0.01"})
    chk_problem("quote with side 'hold' -> 400", r, 400)
    r = POST("/api/trading/quotes", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "-1"})
    chk_problem("quote negative quantity -> 400", r, 400)
    r = POST("/api/trading/quotes", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.000000001"})
    chk_problem("quote quantity with too many decimals for BTC -> 400", r, 400)
    qid = q.get("id")
    b0, u0 = bal("BTC"), bal("USDT")
    r = POST("/api/trading/orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.004",
                                     "quote_id": qid})
    o = (r.data or {}).get("order", {})
    check("order against quote 2xx, status filled at once", r.status in (200, 201) and o.get("status") == "filled", ex(r))
    check("order side uppercase, price = quote price, quote_id set", o.get("side") == "BUY" and approx(o.get("price"), q.get("price"))
          and o.get("quote_id") == qid, o)
    f = o.get("fills") or []
    check("order fills[] {id, order_id, quantity, created_at}", f and all(k in f[0] for k in ("id", "order_id", "quantity", "created_at"))
          and f[0]["order_id"] == o.get("id"), f)
    qc = o.get("quote_consumption") or {}
    check("quote_consumption {quote_id, consumed_quantity 0.004, remaining_quantity 0.006}", qc.get("quote_id") == qid
          and approx(qc.get("consumed_quantity"), "0.004") and approx(qc.get("remaining_quantity"), "0.006"), qc)
    check("order filled_quantity 0.004 remaining 0", approx(o.get("filled_quantity"), "0.004") and approx(o.get("remaining_quantity"), "0"), o)
    b1, u1 = bal("BTC"), bal("USDT")
    check("order credits 400,000 sat BTC", b1 - b0 == 400000, (b0, b1))
    check("order debits 0.004*60300 = 241.2 USDT (241,200,000 base units)", u0 - u1 == 241200000, (u0, u1, u0 - u1))
    r = GET("/api/trading/quotes/" + qid)
    qq = (r.data or {}).get("quote", r.data or {})
    check("quote lookup shows consumption 0.004 and an orders count",
          r.status == 200 and approx(qq.get("consumed_quantity"), "0.004") and
          any(("order" in k and isinstance(v, int)) for k, v in qq.items()) or
          any(("order" in k and isinstance(v, int)) for k, v in (r.data or {}).items()), ex(r, 800))
    r = POST("/api/trading/orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.006",
                                     "quote_id": qid})
    check("second order consuming the rest filled", r.status in (200, 201) and (r.data or {}).get("order", {}).get("status") == "filled", ex(r))
    r = GET("/api/trading/quotes/" + qid)
    qq = (r.data or {}).get("quote", r.data or {})
    check("quote now is_exhausted true, remaining 0", qq.get("is_exhausted") is True and approx(qq.get("remaining_quantity"), "0"), qq)
    r = POST("/api/trading/orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001",
                                     "quote_id": qid})
    chk_problem("order on exhausted quote -> 422 QUOTE_EXHAUSTED", r, 422, "QUOTE_EXHAUSTED")
    oid = o.get("id")
    r = GET("/api/trading/orders/" + str(oid))
    check("GET order by id", r.status == 200 and (r.data or {}).get("order", {}).get("id") == oid, ex(r))
    r = GET("/api/trading/orders")
    check("GET orders list data.orders[]", r.status == 200 and oid in [x.get("id") for x in (r.data or {}).get("orders", [])], ex(r))
    r = DELETE("/api/trading/orders/" + str(oid))
    chk_problem("cancel filled order -> 422", r, 422)
    r = GET("/api/trading/orders/" + str(oid), cred=B)
    chk_problem("company B reading A's order -> 404", r, 404)
    # over-consume
    r = POST("/api/trading/quotes", {"base_currency": "BTC", "quote_currency": "USDT", "side": "sell", "quantity": "0.01"})
    q2 = (r.data or {}).get("quote", {})
    check("sell quote side SELL, price = 60000*0.995", q2.get("side") == "SELL" and approx(q2.get("price"), "59700"), q2)
    r = POST("/api/trading/orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "sell", "quantity": "0.02",
                                     "quote_id": q2.get("id")})
    check("order larger than quote remaining refused (4xx)", 400 <= r.status < 500, ex(r))
    r = POST("/api/trading/orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001",
                                     "quote_id": q2.get("id")})
    check("order with side mismatching quote refused (4xx)", 400 <= r.status < 500, ex(r))
    advance(31)
    r = GET("/api/trading/quotes/" + q2.get("id", "x"))
    qq = (r.data or {}).get("quote", r.data or {})
    check("quote is_expired true after 31 s", qq.get("is_expired") is True, qq)
    b0 = bal("BTC")
    r = POST("/api/trading/orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "sell", "quantity": "0.001",
                                     "quote_id": q2.get("id")})
    chk_problem("order on expired quote -> 422 QUOTE_EXPIRED", r, 422, "QUOTE_EXPIRED")
    check("rejected order moved nothing", bal("BTC") == b0, (b0, bal("BTC")))
    r = POST("/api/trading/orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001",
                                     "quote_id": str(uuid.uuid4())})
    check("order with unknown quote_id -> 404 or 422", r.status in (404, 422), ex(r))
    # quantity_in_base_units
    r = POST("/api/trading/quotes", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001"})
    q3 = (r.data or {}).get("quote", {})
    r = POST("/api/trading/orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": 100000,
                                     "quote_id": q3.get("id"), "quantity_in_base_units": True})
    o = (r.data or {}).get("order", {})
    check("order quantity_in_base_units 100000 sat = 0.001 BTC filled", r.status in (200, 201) and o.get("status") == "filled"
          and approx(o.get("filled_quantity"), "0.001"), ex(r))

    section("Trading: NGN pairs")
    r = POST("/api/trading/quotes", {"base_currency": "NGN", "quote_currency": "USDT", "side": "sell", "quantity": "499"})
    chk_problem("NGN quote 499 naira -> 400", r, 400)
    r = POST("/api/trading/quotes", {"base_currency": "NGN", "quote_currency": "USDT", "side": "sell", "quantity": "10000001"})
    chk_problem("NGN quote 10,000,001 naira -> 400", r, 400)
    r = POST("/api/trading/quotes", {"base_currency": "NGN", "quote_currency": "USDT", "side": "sell", "quantity": "500"})
    check("NGN quote 500 naira (lower bound) accepted", r.status in (200, 201), ex(r))
    r = POST("/api/trading/quotes", {"base_currency": "NGN", "quote_currency": "USDT", "side": "sell", "quantity": "1000"})
    qn = (r.data or {}).get("quote", {})
    check("NGN sell quote price per naira = 1/1500 * 0.995", approx(qn.get("price"), dec(1) / dec(1500) * dec("0.995"), Decimal("0.001")),
          qn.get("price"))
    n0, u0 = bal("NGN"), bal("USDT")
    r = POST("/api/trading/orders", {"base_currency": "NGN", "quote_currency": "USDT", "side": "sell", "quantity": "1000"})
    chk_problem("NGN order without quote_id -> 400", r, 400)
    r = POST("/api/trading/orders", {"base_currency": "NGN", "quote_currency": "USDT", "side": "sell", "quantity": 100000,
                                     "quote_id": qn.get("id"), "quantity_in_base_units": True})
    chk_problem("NGN order with quantity_in_base_units true -> 400", r, 400)
    r = POST("/api/trading/orders", {"base_currency": "NGN", "quote_currency": "USDT", "side": "sell", "quantity": "1000",
                                     "quote_id": qn.get("id"), "quantity_in_base_units": False})
    o = (r.data or {}).get("order", {})
    check("NGN order: order_type market, fills [] , quote_consumption null, exchange null",
          r.status in (200, 201) and o.get("order_type") == "market" and o.get("fills") == [] and
          "quote_consumption" in o and o["quote_consumption"] is None and "exchange" in o and o["exchange"] is None, ex(r, 900))
    check("NGN SELL spends 1000 naira = 100,000 kobo", n0 - bal("NGN") == 100000, (n0, bal("NGN")))
    gain = bal("USDT") - u0
    check("NGN SELL credits ~0.6633 USDT", abs(gain - 663333) <= 2, gain)
    r = POST("/api/trading/quotes", {"base_currency": "NGN", "quote_currency": "BTC", "side": "buy", "quantity": "90000"})
    check("NGN/BTC quote accepted", r.status in (200, 201), ex(r))

    section("Trading: scheduled orders")
    def sched_body(**over):
        b = {"currency": "BTC", "quote_currency": "USDT", "amount": "10000000", "frequency": "daily", "day_of_week": 0,
             "day_of_month": 0, "execution_time": "12:00", "reference": ref("dca")}
        b.update(over)
        return b
    for label, over in [("frequency 'hourly'", {"frequency": "hourly"}), ("execution_time '25:00'", {"execution_time": "25:00"}),
                        ("amount decimal '10.5'", {"amount": "10.5"}), ("day_of_week 7 weekly", {"frequency": "weekly", "day_of_week": 7}),
                        ("day_of_month 32 monthly", {"frequency": "monthly", "day_of_month": 32}),
                        ("amount 0", {"amount": "0"})]:
        r = POST("/api/trading/scheduled-orders", sched_body(**over))
        chk_problem("scheduled order %s -> 400" % label, r, 400)
    body = sched_body()
    r = POST("/api/trading/scheduled-orders", body)
    s = (r.data or {}).get("schedule", {})
    check("scheduled order create data.schedule status active", r.status in (200, 201) and s.get("status") == "active", ex(r))
    need = ("id", "company_id", "quote_currency", "frequency", "day_of_week", "day_of_month", "execution_time", "status",
            "next_execution_at", "last_executed_at", "total_executions", "total_amount_spent", "total_quantity_acquired",
            "created_at", "updated_at", "reference")
    check("schedule fields present", all(k in s for k in need), [k for k in need if k not in s])
    check("schedule never fired: last_executed_at '' and total_executions 0", s.get("last_executed_at") == ""
          and s.get("total_executions") == 0, s)
    try:
        nx = parse_ts(s["next_execution_at"])
        check("next_execution_at at 12:00 UTC", nx.hour == 12 and nx.minute == 0, s.get("next_execution_at"))
    except Exception as e:
        check("next_execution_at parseable", False, s.get("next_execution_at"))
    r2 = POST("/api/trading/scheduled-orders", body)
    check("scheduled order replay byte-for-byte", r2.status == r.status and r2.raw == r.raw, ex(r2))
    r3 = POST("/api/trading/scheduled-orders", dict(body, amount="20000000"))
    chk_problem("scheduled order same reference different body -> 409", r3, 409, "IDEMPOTENCY_CONFLICT")
    sid = s.get("id")
    u0 = bal("USDT")
    advance(86400)
    r = GET("/api/trading/scheduled-orders/" + str(sid))
    s = (r.data or {}).get("schedule", {})
    check("after 1 day: total_executions 1, last_executed_at set", s.get("total_executions") == 1 and s.get("last_executed_at"), s)
    spent = int(s.get("total_amount_spent") or 0)
    check("tick spent <= per-tick amount and within one satoshi's price of it", 10000000 - 700 <= spent <= 10000000, spent)
    check("tick spent exactly 10,000,000 base units (per-tick amount)", spent == 10000000, spent, ambiguous=True)
    check("wallet debit equals total_amount_spent", u0 - bal("USDT") == spent, (u0, bal("USDT"), spent))
    r = GET("/api/trading/scheduled-orders/%s/executions" % sid)
    ex_ = (r.data or {}).get("executions", [])
    check("executions data.executions[] with fields", r.status == 200 and ex_ and all(k in ex_[0] for k in
          ("id", "order_id", "status", "base_amount", "fill_price", "quote_amount", "executed_at")), ex(r, 600))
    prev_next = s.get("next_execution_at")
    r = PUT("/api/trading/scheduled-orders/" + str(sid), {"status": "paused"})
    s = (r.data or {}).get("schedule", {})
    check("pause -> status paused, next_execution_at preserved", r.status == 200 and s.get("status") == "paused"
          and s.get("next_execution_at") == prev_next, ex(r))
    r = PUT("/api/trading/scheduled-orders/" + str(sid), {"status": "cancelled"})
    chk_problem("update status 'cancelled' via PUT -> 400 (only paused/active)", r, 400)
    advance(86400 * 2)
    r = GET("/api/trading/scheduled-orders/" + str(sid))
    s = (r.data or {}).get("schedule", {})
    check("no executions while paused", s.get("total_executions") == 1, s.get("total_executions"))
    r = PUT("/api/trading/scheduled-orders/" + str(sid), {"status": "active"})
    s = (r.data or {}).get("schedule", {})
    try:
        fut = parse_ts(s["next_execution_at"]) > sandbox_now()
    except Exception:
        fut = False
    check("resume -> active, passed next_execution_at moved to next occurrence (future), missed ticks not run",
          r.status == 200 and s.get("status") == "active" and fut and s.get("total_executions") == 1, ex(r))
    r = PUT("/api/trading/scheduled-orders/" + str(sid), {"execution_time": "15:30"})
    s = (r.data or {}).get("schedule", {})
    check("changing execution_time recomputes next_execution_at to 15:30", r.status == 200 and
          s.get("execution_time") == "15:30" and (s.get("next_execution_at") or "")[11:16] == "15:30", ex(r))
    r = GET("/api/trading/scheduled-orders?status=active")
    check("list scheduled orders status=active", r.status == 200 and sid in [x.get("id") for x in
          ((r.data or {}).get("schedules") or (r.data or {}).get("scheduled_orders") or [])], ex(r, 400))
    r = DELETE("/api/trading/scheduled-orders/" + str(sid))
    s = (r.data or {}).get("schedule", {})
    check("DELETE schedule -> 200 data.schedule cancelled, next_execution_at null", r.status == 200
          and s.get("status") == "cancelled" and "next_execution_at" in s and s["next_execution_at"] is None, ex(r))
    r = DELETE("/api/trading/scheduled-orders/" + str(sid))
    chk_problem("cancel already cancelled schedule -> 422", r, 422)
    r = PUT("/api/trading/scheduled-orders/" + str(sid), {"status": "active"})
    chk_problem("resume cancelled schedule -> 422", r, 422)
    r = POST("/api/trading/scheduled-orders", sched_body(frequency="weekly", day_of_week=3, day_of_month=0))
    s = (r.data or {}).get("schedule", {})
    try:
        wd = parse_ts(s["next_execution_at"]).isoweekday() % 7
    except Exception:
        wd = None
    check("weekly schedule day_of_week 3 -> next run on a Wednesday", wd == 3, s.get("next_execution_at"))
    if s.get("id"):
        DELETE("/api/trading/scheduled-orders/" + s["id"])

    section("Trading: target orders")
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "60000"})
    u0 = bal("USDT")
    tb = {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.01", "target_price": "55000",
          "expires_at": "", "reference": ref("tgt")}
    r = POST("/api/trading/target-orders", tb)
    o = (r.data or {}).get("order", {})
    check("target buy create 2xx data.order status active, side BUY", r.status in (200, 201) and o.get("status") == "active"
          and o.get("side") == "BUY", ex(r))
    need = ("id", "company_id", "base_currency", "quote_currency", "side", "quantity", "filled_quantity", "remaining_quantity",
            "target_price", "average_fill_price", "locked_amount", "remaining_locked", "locked_currency", "status", "expires_at",
            "first_triggered_at", "last_fill_at", "fully_filled_at", "created_at", "updated_at", "reference")
    check("target order fields present", all(k in o for k in need), [k for k in need if k not in o])
    check("target order empties: average_fill_price '', first_triggered_at '', expires_at ''",
          o.get("average_fill_price") == "" and o.get("first_triggered_at") == "" and o.get("expires_at") == "", o)
    check("locked_amount = 0.01*55000*1.005 = 552.75 USDT, locked_currency USDT",
          approx(o.get("locked_amount"), "552.75") and o.get("locked_currency") == "USDT", (o.get("locked_amount"), o.get("locked_currency")))
    check("escrow taken from wallet at creation (552,750,000 base units)", u0 - bal("USDT") == 552750000, (u0, bal("USDT")))
    r2 = POST("/api/trading/target-orders", tb)
    check("target order replay byte-for-byte", r2.status == r.status and r2.raw == r.raw, ex(r2))
    tid = o.get("id")
    b0 = bal("BTC")
    r = PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "56000"})
    r = GET("/api/trading/target-orders/" + str(tid))
    check("price above buy target -> still active", (r.data or {}).get("order", {}).get("status") == "active", ex(r))
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "55000"})
    r = GET("/api/trading/target-orders/" + str(tid))
    o = (r.data or {}).get("order", {})
    check("price at target -> triggered at once, first_triggered_at set", o.get("status") == "triggered"
          and o.get("first_triggered_at"), o)
    advance(10)
    r = GET("/api/trading/target-orders/" + str(tid))
    o = (r.data or {}).get("order", {})
    check("10 s later filled at target price: filled_quantity 0.01, remaining 0, fully_filled_at, average_fill_price 55000",
          o.get("status") == "filled" and approx(o.get("filled_quantity"), "0.01") and approx(o.get("remaining_quantity"), "0")
          and o.get("fully_filled_at") and approx(o.get("average_fill_price"), "55000"), o)
    check("target buy credited 0.01 BTC", bal("BTC") - b0 == 1000000, (b0, bal("BTC")))
    check("fill spends exactly the escrow (no release when fully used)", u0 - bal("USDT") == 552750000, (u0, bal("USDT")))
    r = DELETE("/api/trading/target-orders/" + str(tid))
    chk_problem("cancel filled target order -> 422", r, 422)
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "60000"})
    # sell + cancel
    b0 = bal("BTC")
    r = POST("/api/trading/target-orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "sell", "quantity": "0.01",
                                            "target_price": "70000", "expires_at": "", "reference": ref("tgt")})
    o = (r.data or {}).get("order", {})
    check("target sell locks quantity in base currency (0.01 BTC), locked_currency BTC",
          o.get("side") == "SELL" and approx(o.get("locked_amount"), "0.01") and o.get("locked_currency") == "BTC", o)
    check("sell escrow taken (1,000,000 sat)", b0 - bal("BTC") == 1000000, (b0, bal("BTC")))
    r = DELETE("/api/trading/target-orders/" + str(o.get("id")))
    oc = (r.data or {}).get("order", {})
    check("cancel target order -> 200 data.order status cancelled", r.status == 200 and oc.get("status") == "cancelled", ex(r))
    check("cancel releases escrow", bal("BTC") == b0, (b0, bal("BTC")))
    r = GET("/api/trading/target-orders?status=cancelled")
    check("target orders list ?status=cancelled includes it", r.status == 200 and o.get("id") in
          [x.get("id") for x in (r.data or {}).get("orders", [])], ex(r))
    # immediate trigger at creation
    r = POST("/api/trading/target-orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001",
                                            "target_price": "65000", "expires_at": "", "reference": ref("tgt")})
    o = (r.data or {}).get("order", {})
    check("buy target above market triggers at creation", o.get("status") == "triggered", o.get("status"))
    u_t = bal("USDT") 
    advance(10)
    o2 = (GET("/api/trading/target-orders/" + str(o.get("id"))).data or {}).get("order", {})
    check("target triggered at creation is filled 10 s later at target price 65000", o2.get("status") == "filled"
          and approx(o2.get("average_fill_price"), "65000"), o2)
    # expiry
    u0 = bal("USDT")
    exp = (sandbox_now() + timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    r = POST("/api/trading/target-orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001",
                                            "target_price": "50000", "expires_at": exp, "reference": ref("tgt")})
    o = (r.data or {}).get("order", {})
    check("target with expires_at accepted", r.status in (200, 201) and o.get("status") == "active", ex(r))
    advance(120)
    r = GET("/api/trading/target-orders/" + str(o.get("id")))
    check("target order expired after expires_at; escrow released", (r.data or {}).get("order", {}).get("status") == "expired"
          and bal("USDT") == u0, (ex(r), u0, bal("USDT")))
    r = POST("/api/trading/target-orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "1000",
                                            "target_price": "50000", "expires_at": "", "reference": ref("tgt")})
    chk_problem("target order whose escrow exceeds the wallet -> 422 INSUFFICIENT_BALANCE", r, 422, "INSUFFICIENT_BALANCE")
    r = POST("/api/trading/target-orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.01",
                                            "target_price": "-1", "expires_at": "", "reference": ref("tgt")})
    chk_problem("target order negative target_price -> 400", r, 400)
    r = GET("/api/trading/prices")
    pr = (r.data or {}).get("prices", [])
    check("GET /api/trading/prices data.prices[{base_currency,quote_currency,price,as_of}]", r.status == 200 and pr and
          all(k in pr[0] for k in ("base_currency", "quote_currency", "price", "as_of")), ex(r))


def probe_lightning():
    section("Lightning")
    body = {"amount": 1000, "description": "probe invoice", "reference": ref("ln")}
    r = POST("/api/lightning/invoices", body)
    inv = r.data or {}
    inv = inv.get("invoice", inv)
    check("create invoice -> 201", r.status == 201, ex(r))
    check("invoice request starts with lntbs", str(inv.get("request", "")).startswith("lntbs"), inv.get("request", "")[:20])
    check("invoice payment_hash 64 hex, amount_sat '1000' string, status pending", HEX64.match(inv.get("payment_hash", ""))
          and inv.get("amount_sat") == "1000" and inv.get("status") == "pending", inv)
    check("invoice create fields id, description, expires_at (RFC3339), created_at",
          UUID_RE.match(inv.get("id", "")) and inv.get("description") == "probe invoice"
          and TS_RE.match(str(inv.get("expires_at", ""))) and inv.get("created_at"), inv)
    try:
        life = (parse_ts(inv["expires_at"]) - parse_ts(inv["created_at"])).total_seconds()
    except Exception:
        life = None
    check("invoice default expiry 86400 s", life is not None and abs(life - 86400) < 2, life)
    r2 = POST("/api/lightning/invoices", body)
    check("invoice replay byte-for-byte", r2.status == r.status and r2.raw == r.raw, ex(r2))
    r3 = POST("/api/lightning/invoices", dict(body, amount=2000))
    chk_problem("invoice same reference different body -> 409", r3, 409, "IDEMPOTENCY_CONFLICT")
    for label, b in [("amount 0", {"amount": 0}), ("amount 20000001", {"amount": 20000001}),
                     ("missing description", {"description": None}), ("missing reference", {"reference": None}),
                     ("fractional amount", {"amount": 1.5})]:
        bb = dict(body, reference=ref("ln"))
        for k, v in b.items():
            if v is None:
                del bb[k]
            else:
                bb[k] = v
        r = POST("/api/lightning/invoices", bb)
        chk_problem("invoice %s -> 400" % label, r, 400)
    r = POST("/api/lightning/invoices", dict(body, amount=20000000, reference=ref("ln")))
    check("invoice amount 20,000,000 (upper bound) -> 201", r.status == 201, ex(r))
    req_a = inv.get("request", "")
    # decode
    r = POST("/api/lightning/decode", {"request": req_a})
    d = r.data or {}
    check("decode: payment_hash, destination 66 hex, amount_sat number, amount_msat number",
          r.status == 200 and d.get("payment_hash") == inv.get("payment_hash")
          and re.match(r"^[0-9a-f]{66}$", str(d.get("destination"))) and d.get("amount_sat") == 1000
          and d.get("amount_msat") == 1000000, ex(r))
    check("decode: description, expires_at Unix seconds number, is_expired false",
          d.get("description") == "probe invoice" and isinstance(d.get("expires_at"), int) and d.get("is_expired") is False, d)
    r = POST("/api/lightning/decode", {"request": "lnbc1garbage"})
    chk_problem("decode garbage -> 400", r, 400)
    bolt_ex = ("lnbc1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5"
               "rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq9qrsgq357wnc5r2ueh7ck6q93dj32dlq"
               "nls087fxdwk8qakdyafkq3yap9us6v52vjjsrvywa6rt52cm9r9zqt8r2t7mlcwspyetp5h2tztugp9lfyql")
    r = POST("/api/lightning/decode", {"request": bolt_ex})
    check("decode accepts mainnet lnbc (BOLT11 spec example), is_expired true", r.status == 200 and
          (r.data or {}).get("is_expired") is True, ex(r))
    # initiate as B
    r = POST("/api/lightning/payments/initiate", {"request": req_a}, cred=B)
    d = r.data or {}
    check("initiate (B pays A): route_found true, fee_sat '2' (1 + 0.1% rounded up), total_sat '1002', strings",
          r.status == 200 and d.get("route_found") is True and d.get("fee_sat") == "2" and d.get("total_sat") == "1002"
          and d.get("amount_sat") == "1000", ex(r))
    check("initiate fields payment_hash, destination, description, expires_at, is_expired", all(
        k in d for k in ("payment_hash", "destination", "description", "expires_at", "is_expired")), d)
    # max_fee too low
    bB0, bA0 = bal("BTC", B), bal("BTC", A)
    r = POST("/api/lightning/payments/send", {"request": req_a, "reference": ref("pay"), "max_fee": 1}, cred=B)
    chk_problem("pay with fee above max_fee -> 422", r, 422)
    check("max_fee refusal debits nothing", bal("BTC", B) == bB0, (bB0, bal("BTC", B)))
    payref = ref("pay")
    r = POST("/api/lightning/payments/send", {"request": req_a, "reference": payref, "max_fee": 5}, cred=B)
    d = r.data or {}
    check("pay invoice of other company -> 201, status paid, preimage 64 hex", r.status == 201 and d.get("status") == "paid"
          and HEX64.match(str(d.get("preimage", ""))), ex(r))
    check("pay response data fields id,payment_hash,amount_sat,fee_sat,created_at,reference,transaction_id + metadata.request_id",
          all(k in d for k in ("id", "payment_hash", "amount_sat", "fee_sat", "created_at", "reference", "transaction_id"))
          and ((r.json or {}).get("metadata") or {}).get("request_id"), ex(r))
    check("payment preimage hashes to payment_hash", d.get("preimage") and
          hashlib.sha256(bytes.fromhex(d["preimage"])).hexdigest() == inv.get("payment_hash"), d.get("preimage"))
    check("payer debited amount + fee (1002 sat)", bB0 - bal("BTC", B) == 1002, (bB0, bal("BTC", B)))
    check("payee credited 1000 sat", bal("BTC", A) - bA0 == 1000, (bA0, bal("BTC", A)))
    r2 = POST("/api/lightning/payments/send", {"request": req_a, "reference": payref, "max_fee": 5}, cred=B)
    check("pay replay same reference byte-for-byte, no double debit", r2.raw == r.raw and bB0 - bal("BTC", B) == 1002, ex(r2))
    r = POST("/api/lightning/payments/send", {"request": req_a, "reference": ref("pay")}, cred=B)
    check("paying an already-paid invoice refused (4xx)", 400 <= r.status < 500, ex(r))
    r = GET("/api/lightning/invoices/" + inv.get("id", ""))
    g = r.data or {}
    check("invoice read: status paid, preimage populated", r.status == 200 and g.get("status") == "paid"
          and HEX64.match(str(g.get("preimage", ""))), ex(r))
    check("invoice read expires_at is Unix seconds as a string", isinstance(g.get("expires_at"), str)
          and g.get("expires_at", "").isdigit(), g.get("expires_at"))
    check("invoice direction incoming, fee_sat '0', amount_msat '1000000'", g.get("direction") == "incoming"
          and g.get("fee_sat") == "0" and g.get("amount_msat") == "1000000", g)
    r = POST("/api/lightning/invoices/verify", {"payment_hash": inv.get("payment_hash")})
    d = r.data or {}
    check("verify: is_paid true, status paid, ledger_credited true, settled_at",
          r.status == 200 and d.get("is_paid") is True and d.get("status") == "paid" and d.get("ledger_credited") is True
          and d.get("settled_at"), ex(r))
    got = wait_hooks(event="btc.lightning.received.success", path_prefix="/hooks/A")
    check("btc.lightning.received.success webhook to company A", got, len(HOOKS))
    r = GET("/api/lightning/invoices/" + inv.get("id", ""), cred=B)
    chk_problem("company B reading A's invoice by id -> 404", r, 404)
    # B sees outgoing payment
    r = GET("/api/lightning/invoices?direction=outgoing", cred=B)
    check("B list direction=outgoing contains payment", r.status == 200 and any(
        x.get("payment_hash") == inv.get("payment_hash") for x in (r.data or {}).get("invoices", [])), ex(r))
    # control API pay
    r = POST("/api/lightning/invoices", {"amount": 500, "description": "outside", "reference": ref("ln")})
    inv2 = r.data or {}
    a0 = bal("BTC")
    r = POST("/sandbox/lightning/pay", {"request": inv2.get("request")})
    g = GET("/api/lightning/invoices/" + inv2.get("id", "")).data or {}
    check("/sandbox/lightning/pay settles our invoice (paid + preimage) and credits 500 sat",
          g.get("status") == "paid" and g.get("preimage") and bal("BTC") - a0 == 500, (ex(r), g.get("status")))
    # expiry
    r = POST("/api/lightning/invoices", {"amount": 100, "description": "short", "expiry": 60, "reference": ref("ln")})
    inv3 = r.data or {}
    advance(61)
    g = GET("/api/lightning/invoices/" + inv3.get("id", "")).data or {}
    check("invoice expired after expiry passes", g.get("status") == "expired", g.get("status"))
    bB0 = bal("BTC", B)
    r = POST("/api/lightning/payments/send", {"request": inv3.get("request"), "reference": ref("pay")}, cred=B)
    chk_problem("pay expired invoice -> 422", r, 422)
    check("expired pay records nothing", bal("BTC", B) == bB0, (bB0, bal("BTC", B)))
    r = POST("/api/lightning/payments/send", {"request": bolt_ex, "reference": ref("pay")}, cred=B)
    check("pay amountless invoice refused 4xx", 400 <= r.status < 500, ex(r))
    old = make_bolt11("lntbs", 900, "old", 60, secrets.randbelow(N - 1) + 1, ts=int(sandbox_now().timestamp()) - 7200)
    r = POST("/api/lightning/payments/send", {"request": old, "reference": ref("pay")}, cred=B)
    chk_problem("pay expired foreign invoice (with amount) -> 422", r, 422)
    # foreign valid invoice: route_found false, pay fails 201 status failed
    priv = secrets.randbelow(N - 1) + 1
    foreign = make_bolt11("lntbs", 700, "foreign", 3600, priv, ts=int(sandbox_now().timestamp()))
    r = POST("/api/lightning/decode", {"request": foreign})
    check("decode self-signed foreign lntbs invoice: destination = signer pubkey, amount 700",
          r.status == 200 and (r.data or {}).get("destination") == pubkey_hex(priv) and (r.data or {}).get("amount_sat") == 700, ex(r))
    r = POST("/api/lightning/payments/initiate", {"request": foreign}, cred=B)
    check("initiate foreign invoice: route_found false", r.status == 200 and (r.data or {}).get("route_found") is False, ex(r))
    bB0 = bal("BTC", B)
    fref = ref("pay")
    r = POST("/api/lightning/payments/send", {"request": foreign, "reference": fref}, cred=B)
    check("pay foreign invoice: 201 with status failed, nothing debited", r.status == 201 and (r.data or {}).get("status") == "failed"
          and bal("BTC", B) == bB0, ex(r))
    r2 = POST("/api/lightning/payments/send", {"request": foreign, "reference": fref}, cred=B)
    check("failed pay: same reference returns it", r2.status == 201 and r2.raw == r.raw, ex(r2))
    # list
    r = GET("/api/lightning/invoices?page=1&page_size=2")
    d = r.data or {}
    check("list invoices page_size=2: <=2 invoices, total_count string, page, page_size", r.status == 200
          and len(d.get("invoices", [])) <= 2 and isinstance(d.get("total_count"), str) and d.get("page") == 1
          and d.get("page_size") == 2, ex(r))
    tc = int(d.get("total_count", "0") or 0)
    allinv = (GET("/api/lightning/invoices?page_size=100").data or {}).get("invoices", [])
    check("total_count counts every matching record across pages", tc == len(allinv) and tc >= 4, (tc, len(allinv)))
    r2 = GET("/api/lightning/invoices?page=2&page_size=2")
    ids1 = {x.get("id") for x in d.get("invoices", [])}
    ids2 = {x.get("id") for x in (r2.data or {}).get("invoices", [])}
    check("page 2 disjoint from page 1", r2.status == 200 and ids2 and not (ids1 & ids2), (ids1, ids2))
    r = GET("/api/lightning/invoices")
    check("list default page_size 20", r.status == 200 and (r.data or {}).get("page_size") == 20, ex(r))
    r = GET("/api/lightning/invoices?page_size=101")
    chk_problem("list page_size 101 -> 400", r, 400)
    r = GET("/api/lightning/invoices?page=0")
    chk_problem("list page 0 -> 400", r, 400)
    r = GET("/api/lightning/invoices?status=paid")
    check("list status=paid only paid", r.status == 200 and all(x.get("status") == "paid" for x in (r.data or {}).get("invoices", []))
          and (r.data or {}).get("invoices"), ex(r))
    r = GET("/api/lightning/invoices?status=settled")
    chk_problem("list status=settled (unknown) -> 400", r, 400)
    inv_list = (GET("/api/lightning/invoices?page_size=100").data or {}).get("invoices", [])
    check("list entries are full invoice records (expires_at Unix string, updated_at present)", inv_list and all(
        "updated_at" in x and str(x.get("expires_at", "")).isdigit() for x in inv_list), inv_list[:1])


ETH_OK = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
ETH_BAD = "0x5aAeb6053f3E94C9b9A09f33669435E7Ef1BeAed"


def probe_withdrawals_rates():
    section("Withdrawals")
    u0 = bal("USDT")
    body = {"to_address": ETH_OK, "amount": "1000000", "currency": "USDT", "chain": "ethereum", "reference": ref("wd")}
    r = POST("/api/withdrawals", body)
    check("withdrawal to EIP-55 address 2xx envelope", r.status in (200, 201) and is_envelope(r), ex(r))
    d = r.data or {}
    w = d.get("withdrawal", d)
    wid = w.get("id") or w.get("withdrawal_id")
    check("withdrawal debits wallet (>= amount)", u0 - bal("USDT") >= 1000000, (u0, bal("USDT")))
    u1 = bal("USDT")
    r2 = POST("/api/withdrawals", body)
    check("withdrawal replay byte-for-byte, no second debit", r2.raw == r.raw and r2.status == r.status and bal("USDT") == u1, ex(r2))
    r3 = POST("/api/withdrawals", dict(body, amount="2000000"))
    chk_problem("withdrawal same reference different body -> 409", r3, 409, "IDEMPOTENCY_CONFLICT")
    r = POST("/api/withdrawals", dict(body, to_address=ETH_BAD, reference=ref("wd")))
    chk_problem("withdrawal to address failing EIP-55 checksum -> 400", r, 400)
    r = POST("/api/withdrawals", dict(body, to_address=ETH_OK.lower(), reference=ref("wd")))
    check("withdrawal to all-lowercase EVM address accepted", r.status in (200, 201), ex(r))
    r = POST("/api/withdrawals", dict(body, amount="1.5", reference=ref("wd")))
    chk_problem("withdrawal decimal amount -> 400", r, 400)
    r = POST("/api/withdrawals", dict(body, amount=1000000, reference=ref("wd")))
    check("withdrawal amount as JSON integer accepted", r.status in (200, 201), ex(r))
    r = POST("/api/withdrawals", dict(body, amount="999999999999999", reference=ref("wd")))
    chk_problem("withdrawal above balance -> 422 INSUFFICIENT_BALANCE", r, 422, "INSUFFICIENT_BALANCE")
    r = POST("/api/withdrawals", {"to_address": "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "amount": "10000",
                                  "currency": "BTC", "chain": "bitcoin", "reference": ref("wd")})
    check("withdrawal to valid bech32 address accepted", r.status in (200, 201), ex(r))
    r = POST("/api/withdrawals", {"to_address": "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", "amount": "10000",
                                  "currency": "BTC", "chain": "bitcoin", "reference": ref("wd")})
    chk_problem("withdrawal to bech32 with one char changed -> 400", r, 400)
    r = POST("/api/withdrawals", dict(body, chain="Ethereum", reference=ref("wd")))
    check("withdrawal chain must be lowercase (Ethereum -> 400)", r.status == 400, ex(r), ambiguous=True)
    r = GET("/api/withdrawals")
    check("GET /api/withdrawals 200 envelope", r.status == 200 and is_envelope(r), ex(r))
    if wid:
        r = GET("/api/withdrawals/" + wid)
        check("GET /api/withdrawals/{id} 200", r.status == 200, ex(r))
        r = GET("/api/withdrawals/" + wid, cred=B)
        chk_problem("another company's withdrawal -> 404", r, 404)
    r = GET("/api/withdrawals/nope")
    chk_problem("withdrawal non-UUID id -> 400", r, 400)
    r = GET("/api/withdrawals/" + str(uuid.uuid4()))
    chk_problem("withdrawal unknown id -> 404", r, 404)
    r = GET("/api/transactions/" + body["reference"])
    d = r.data or {}
    d = d.get("transaction", d)
    check("withdrawal visible as a transaction by reference (WITHDRAWAL_INITIATED)", r.status == 200 and
          d.get("type") == "WITHDRAWAL_INITIATED", ex(r))

    section("Exchange rates")
    r = GET("/api/exchange-rates?from=BTC&to=USDT")
    d = r.data or {}
    check("exchange rate fields", r.status == 200 and all(k in d for k in ("base_currency", "target_currency", "buy_rate", "sell_rate",
          "mid_rate", "inverse_rate", "valid_for_seconds", "percent_change_24h", "timestamp")), ex(r))
    check("mid 60000, buy = mid*1.005, sell = mid*0.995", approx(d.get("mid_rate"), "60000") and approx(d.get("buy_rate"), "60300")
          and approx(d.get("sell_rate"), "59700"), d)
    check("inverse_rate = 1/mid_rate", approx(d.get("inverse_rate"), dec(1) / dec(60000), Decimal("0.0001")), d.get("inverse_rate"))
    r = GET("/api/exchange-rates?from=USDT&to=NGN")
    check("USDT/NGN mid 1500", approx((r.data or {}).get("mid_rate"), "1500"), ex(r))
    r = GET("/api/exchange-rates?from=BTC&to=NGN")
    check("BTC/NGN mid 90,000,000", approx((r.data or {}).get("mid_rate"), "90000000"), ex(r))
    r = GET("/api/exchange-rates?from=BTC&to=XYZ")
    check("exchange rate unknown currency -> 400 (or 404)", r.status in (400, 404) and problem(r, r.status), ex(r))
    r = GET("/api/exchange-rates")
    chk_problem("exchange rate without from/to -> 400", r, 400)
    r = GET("/api/exchange-rates/convert?from=BTC&to=USDT&amount=2")
    check("convert 2 BTC -> 120000 USDT (mid)", r.status == 200 and any(approx(v, "120000") for v in (r.data or {}).values()
          if isinstance(v, (str, int, float))), ex(r))
    r = GET("/api/exchange-rates/convert?from=BTC&to=USDT&amount=-2")
    chk_problem("convert negative amount -> 400", r, 400)


def probe_bulk_va():
    section("Bulk transfers and virtual accounts")
    r = GET("/api/bulk-transfers")
    check("GET /api/bulk-transfers 200 envelope", r.status == 200 and is_envelope(r), ex(r))
    r = POST("/api/bulk-transfers", {})
    chk_problem("POST /api/bulk-transfers {} -> 400 with errors[]", r, 400, "VALIDATION_ERROR")
    check("bulk validation error has errors[] entries", isinstance((r.json or {}).get("errors"), list) and (r.json or {}).get("errors"), ex(r))
    item = {"to_address": ETH_OK, "amount": "1000000", "chain": "ethereum"}
    r = POST("/api/bulk-transfers/previews", {"currency": "USDT", "chain": "ethereum", "items": [item]})
    check("POST /api/bulk-transfers/previews with items answers 2xx or 400 (body shape is implementer's)", r.status in (200, 201, 400), ex(r))
    bb = {"currency": "USDT", "chain": "ethereum", "items": [item], "reference": ref("bulk")}
    r = POST("/api/bulk-transfers", bb)
    if r.status in (200, 201):
        r2 = POST("/api/bulk-transfers", bb)
        check("bulk draft replay byte-for-byte", r2.raw == r.raw, ex(r2))
        r3 = POST("/api/bulk-transfers", dict(bb, items=[item, item]))
        chk_problem("bulk draft same reference different body -> 409", r3, 409, "IDEMPOTENCY_CONFLICT")
    else:
        print("  (bulk draft body guess refused: %s)" % ex(r))
    r = GET("/api/bulk-transfers/not-a-uuid")
    chk_problem("bulk transfer non-UUID id -> 400", r, 400)
    r = GET("/api/bulk-transfers/" + str(uuid.uuid4()))
    chk_problem("bulk transfer unknown id -> 404", r, 404)
    r = POST("/api/bulk-transfers/%s/confirm" % uuid.uuid4())
    chk_problem("confirm unknown batch -> 404", r, 404)
    r = GET("/api/bulk-transfers/schedules")
    check("GET /api/bulk-transfers/schedules 200", r.status == 200, ex(r))
    r = GET("/api/bulk-transfers/schedules/%s/executions" % uuid.uuid4())
    chk_problem("executions of unknown bulk schedule -> 404", r, 404)
    r = DELETE("/api/bulk-transfers/schedules/" + str(uuid.uuid4()))
    chk_problem("delete unknown bulk schedule -> 404", r, 404)
    r = call("PATCH", "/api/bulk-transfers/schedules/" + str(uuid.uuid4()))
    chk_problem("PATCH bulk schedule -> 405", r, 405)
    # virtual accounts
    r = GET("/api/virtual-accounts")
    check("GET /api/virtual-accounts 200 envelope", r.status == 200 and is_envelope(r), ex(r))
    r = POST("/api/virtual-accounts", {})
    chk_problem("POST /api/virtual-accounts {} -> 400", r, 400)
    rc, _ = mk_customer()
    vcid = (rc.data or {}).get("id")
    vb = {"customer_id": vcid, "reference": ref("va")}
    r = POST("/api/virtual-accounts", vb)
    check("create virtual account for customer 2xx", r.status in (200, 201) and is_envelope(r), ex(r))
    if r.status in (200, 201):
        d = r.data or {}
        va = d.get("virtual_account", d.get("account", d))
        vid = va.get("id")
        r2 = POST("/api/virtual-accounts", vb)
        check("virtual account replay byte-for-byte", r2.raw == r.raw, ex(r2))
        if vid:
            r = GET("/api/virtual-accounts/" + vid)
            check("GET /api/virtual-accounts/{id} 200", r.status == 200, ex(r))
            r = GET("/api/virtual-accounts/" + vid, cred=B)
            chk_problem("another company's virtual account -> 404", r, 404)
            n0 = bal("NGN")
            r = POST("/sandbox/virtual-accounts/%s/transfers" % vid, {"amount": 250000, "sender_name": "Probe"})
            advance(300)
            check("deposit into virtual account credits NGN balance (250,000 kobo)", bal("NGN") - n0 == 250000,
                  (ex(r), n0, bal("NGN")))
    r = POST("/api/virtual-accounts", {"customer_id": str(uuid.uuid4()), "reference": ref("va")})
    check("virtual account for unknown customer -> 404 (or 400/422)", r.status in (400, 404, 422), ex(r))
    r = GET("/api/virtual-accounts/" + str(uuid.uuid4()))
    chk_problem("unknown virtual account -> 404", r, 404)
    r = GET("/api/virtual-accounts/xyz")
    chk_problem("virtual account non-UUID -> 400", r, 400)


def probe_webhook_retry():
    section("Webhook delivery and retries")
    r = PUT("/sandbox/webhook", {"url": "http://example.com/hook"}, cred=B)
    chk_problem("PUT /sandbox/webhook non-HTTPS non-loopback -> 400 VALIDATION_ERROR", r, 400, "VALIDATION_ERROR")
    check("webhook refusal names url", any(e.get("field") == "url" for e in (r.json or {}).get("errors", [])), ex(r))
    r = PUT("/sandbox/webhook", {"url": "http://127.0.0.1:%d/fail/B" % HOOK_PORT, "secret": HOOK_SECRET_B}, cred=B)
    check("PUT /sandbox/webhook loopback http accepted", r.status == 200, ex(r))
    r = POST("/api/lightning/invoices", {"amount": 321, "description": "retry", "reference": ref("ln")}, cred=B)
    inv = r.data or {}
    r = POST("/api/lightning/payments/send", {"request": inv.get("request"), "reference": ref("pay")}, cred=A)
    time.sleep(0.5)
    first = hooks(event="btc.lightning.received.success", path_prefix="/fail/B")
    check("first delivery attempt made at once when the event occurs", len(first) >= 1, len(first))
    for _ in range(4):
        advance(300)
        time.sleep(0.3)
    got = hooks(event="btc.lightning.received.success", path_prefix="/fail/B")
    ids = {j.get("event_id") for _, _, _, j in got}
    check("failing receiver gets exactly 4 attempts (1 + 3 retries)", len(got) == 4, len(got))
    check("retries carry the same event_id", len(ids) == 1, ids)
    check("B's events signed with B's secret", got and all(sig_ok(h, raw, HOOK_SECRET_B) for _, h, raw, _ in got),
          [h.get("x-service-signature", "")[:16] for _, h, _, _ in got])
    allids = [j.get("event_id") for _, _, _, j in hooks() if isinstance(j, dict)]
    # distinct events never share an event_id: group by (path,event,event_id) counts
    by = {}
    for p, _, _, j in hooks():
        if isinstance(j, dict):
            by.setdefault(j.get("event_id"), set()).add((j.get("event"), json.dumps(j.get("data"), sort_keys=True)[:200]))
    check("distinct events never share an event_id", all(len(v) == 1 for v in by.values()),
          [k for k, v in by.items() if len(v) > 1][:3])


def approved_customer():
    r, body = mk_customer()
    cid = r.data["id"]
    POST("/api/customers/%s/card-kyc" % cid, KYC)
    advance(300)
    return cid, body


def provisioned_card(cid, amount=20000000, **over):
    r = POST("/api/cards", card_body(cid, amount=amount, **over))
    c = (r.data or {}).get("card", {})
    advance(300)
    return c.get("id"), c, r


def probe_extras_errors():
    section("Extra: sandbox time, problem media type, faults, concurrency")
    now = sandbox_now()
    r = GET("/api/whoami")
    try:
        dt = abs((parse_ts(r.json["timestamp"]) - now).total_seconds())
    except Exception:
        dt = None
    check("envelope timestamp is sandbox time (RFC 3339 UTC)", dt is not None and dt < 5, (r.json or {}).get("timestamp"))
    r = GET("/api/customers/" + str(uuid.uuid4()))
    try:
        dt = abs((parse_ts(r.json["timestamp"]) - now).total_seconds())
    except Exception:
        dt = None
    check("problem timestamp is sandbox time", dt is not None and dt < 5, (r.json or {}).get("timestamp"))
    ct = (r.hdr("content-type") or "")
    check("RFC 7807 body served as application/problem+json", ct.startswith("application/problem+json"), ct, ambiguous=True)
    check("problem type/title are strings, correlation_id present", isinstance((r.json or {}).get("type"), str)
          and isinstance((r.json or {}).get("title"), str) and (r.json or {}).get("correlation_id"), ex(r))
    # faults: 500_no_body on invoice create
    r = POST("/sandbox/faults", {"method": "POST", "path_prefix": "/api/lightning/invoices", "mode": "500_no_body", "count": 1})
    check("POST /sandbox/faults accepted", r.status in (200, 201), ex(r))
    before = int((GET("/api/lightning/invoices").data or {}).get("total_count", "0") or 0)
    body = {"amount": 1234, "description": "fault", "reference": ref("ln")}
    r1 = POST("/api/lightning/invoices", body)
    check("fault 500_no_body: empty 500", r1.status == 500 and r1.raw == b"", ex(r1))
    r2 = POST("/api/lightning/invoices", body)
    after = int((GET("/api/lightning/invoices").data or {}).get("total_count", "0") or 0)
    check("after lost response, retry with same reference gets the real stored answer (201), one invoice created",
          r2.status == 201 and after == before + 1, (ex(r2), before, after))
    SERVER_ERRORS[:] = [x for x in SERVER_ERRORS if x is not r1]
    r = POST("/sandbox/faults", {"method": "POST", "path_prefix": "/api/lightning/invoices", "mode": "503", "count": 1})
    body = {"amount": 1235, "description": "fault503", "reference": ref("ln")}
    r1 = POST("/api/lightning/invoices", body)
    SERVER_ERRORS[:] = [x for x in SERVER_ERRORS if x is not r1]
    r2 = POST("/api/lightning/invoices", body)
    after2 = int((GET("/api/lightning/invoices").data or {}).get("total_count", "0") or 0)
    check("fault 503 refused before running; retry creates exactly one", r1.status == 503 and r2.status == 201
          and after2 == after + 1, (ex(r1), ex(r2), after, after2))
    r = POST("/sandbox/faults", {"method": "GET", "path_prefix": "/api/balances", "mode": "429", "count": 1})
    r1 = GET("/api/balances")
    check("fault 429 carries Retry-After", r1.status == 429 and r1.hdr("Retry-After"), ex(r1))
    r = DELETE("/sandbox/faults")
    check("DELETE /sandbox/faults clears", r.status in (200, 204) and GET("/api/balances").status == 200, ex(r))
    # concurrency: one reference, many parallel requests
    u0 = bal("USDT")
    body = {"to_address": ETH_OK, "amount": "3000000", "currency": "USDT", "chain": "ethereum", "reference": ref("wdc")}
    outs = []
    def go():
        outs.append(POST("/api/withdrawals", body))
    th = [threading.Thread(target=go) for _ in range(8)]
    [t.start() for t in th]
    [t.join() for t in th]
    raws = {o.raw for o in outs}
    check("8 concurrent requests with one reference: all get one identical answer", len(raws) == 1 and outs[0].status in (200, 201),
          [o.status for o in outs])
    d = u0 - bal("USDT")
    one = POST("/api/withdrawals", dict(body, reference=ref("wdc")))
    d1 = (u0 - d) - bal("USDT")
    check("concurrent same-reference withdrawals debit the wallet once", d == d1 and d > 0, (d, d1))
    # unused fields ignored
    r, _ = mk_customer(unused_field={"x": 1})
    check("fields a body does not use are ignored, not refused", r.status in (200, 201), ex(r))
    # lightning invoice refusal stores nothing
    rf = ref("ln")
    r1 = POST("/api/lightning/invoices", {"amount": 0, "description": "x", "reference": rf})
    r2 = POST("/api/lightning/invoices", {"amount": 10, "description": "x", "reference": rf})
    check("invoice: refused 400 then corrected retry with same reference -> 201", r1.status == 400 and r2.status == 201, ex(r2))


def probe_extras_customers():
    section("Extra: customers")
    for _ in range(3):
        mk_customer()
    r = GET("/api/customers?limit=1")
    d = r.data or {}
    check("customers limit=1 -> one customer, has_more true, next_cursor", r.status == 200 and len(d.get("customers", [])) == 1
          and d.get("has_more") is True and d.get("next_cursor"), ex(r, 500))
    tot = d.get("total")
    if d.get("next_cursor"):
        r2 = GET("/api/customers?limit=1&cursor=" + urllib.request.quote(d["next_cursor"]))
        d2 = r2.data or {}
        check("customers next page differs", r2.status == 200 and d2.get("customers") and
              d2["customers"][0]["id"] != d["customers"][0]["id"], ex(r2, 400))
        check("customers prev_cursor non-empty on page 2", bool(d2.get("prev_cursor")), ex(r2, 600), ambiguous=True)
    r = GET("/api/customers?limit=100")
    check("customers total counts across pages", isinstance(tot, int) and tot == len((r.data or {}).get("customers", [])),
          (tot, len((r.data or {}).get("customers", []))))
    r = GET("/api/customers?limit=0")
    chk_problem("customers limit=0 -> 400", r, 400)
    r = GET("/api/customers?customer_type=alien")
    chk_problem("customers customer_type=alien -> 400", r, 400)
    r = PUT("/api/customers/" + str(uuid.uuid4()), {"first_name": "X"})
    chk_problem("update unknown customer -> 404", r, 404)
    rc, _ = mk_customer()
    cid = rc.data["id"]
    r = PUT("/api/customers/" + cid, {"first_name": 5})
    chk_problem("update first_name mistyped -> 400", r, 400)
    r = PUT("/api/customers/" + cid, {"is_active": "no"})
    chk_problem("update is_active mistyped -> 400", r, 400)
    r = PUT("/api/customers/" + cid, {})
    check("update with empty body keeps customer", r.status == 200 and (r.data or {}).get("first_name") == "Ada", ex(r))
    r = POST("/api/customers/blacklist/" + str(uuid.uuid4()), {"blacklist": True})
    chk_problem("blacklist unknown customer -> 404", r, 404)
    r = POST("/api/customers/blacklist/" + cid, {"blacklist": "yes"})
    chk_problem("blacklist mistyped -> 400", r, 400)
    r = PUT("/api/customers/" + cid, {"first_name": "X"}, cred=B)
    chk_problem("company B updating A's customer -> 404", r, 404)
    r = DELETE("/api/customers/" + cid, cred=B)
    chk_problem("company B deleting A's customer -> 404", r, 404)
    r = DELETE("/api/customers/" + cid)
    r2 = DELETE("/api/customers/" + cid)
    check("delete twice: second -> 404", r.status == 200 and problem(r2, 404), ex(r2))
    r, _ = mk_customer(customer_type="business")
    check("business customer created", r.status in (200, 201) and (r.data or {}).get("customer_type") == "business", ex(r))


def probe_extras_cards():
    section("Extra: cards")
    cid, cbody = approved_customer()
    b = card_body(cid, amount=20000000, name="Grace Hopper", webhook_url="https://example.com/hook")
    r = POST("/api/cards", b)
    c = (r.data or {}).get("card", {})
    check("explicit name used; preferred_name defaults to name; https webhook_url accepted", r.status in (200, 201)
          and c.get("name") == "Grace Hopper" and c.get("preferred_name") == "Grace Hopper", ex(r))
    card = c.get("id")
    r = POST("/api/cards", card_body(cid), cred=B)
    check("company B creating a card for A's customer -> 404", r.status == 404, ex(r))
    created = parse_ts(c.get("created_at"))
    advance(300)
    # rate window semantics
    r = fund(card, 1000000)
    check("fund accepted (window start)", r.status in (200, 201), ex(r))
    advance(20)
    r = fund(card, 1000000)
    ra = r.hdr("Retry-After")
    check("fund at +20 s -> 429 with Retry-After", r.status == 429 and ra and ra.isdigit(), (r.status, ra))
    advance(int(ra) if ra and ra.isdigit() else 10)
    r = fund(card, 1000000)
    check("fund retried after waiting exactly Retry-After (%s s) succeeds" % ra, r.status in (200, 201), ex(r))
    if r.status == 429:
        advance(2)
        r = fund(card, 1000000)
    check("fund at +30 s after a 429 at +20 s succeeds (refused call did not restart window)", r.status in (200, 201), ex(r))
    advance(31)
    r = fund(card, 10 ** 12)
    r2 = fund(card, 1000000)
    check("a refused (422) fund does not consume the rate window", r.status == 422 and r2.status in (200, 201), ex(r2))
    advance(300)
    # withdraw window 60 s: a refusal at +30 does not restart; success at +60
    r = fund(card, 1000000, typ="withdraw")
    advance(30)
    r2 = fund(card, 1000000, typ="withdraw")
    advance(30)
    r3 = fund(card, 1000000, typ="withdraw")
    check("withdraw: 429 at +30 s, accepted at +60 s", r.status in (200, 201) and r2.status == 429 and r3.status in (200, 201),
          (r.status, r2.status, ex(r3)))
    advance(300)
    # daily limit
    r = PUT("/api/cards/%s/spend-limits" % card, {"daily_limit": 1500000})
    check("PUT spend-limits daily_limit", r.status in (200, 201), ex(r))
    _, cc = card_get(card)
    lim = cc.get("card_limits") or cc.get("spending_limits") or {}
    check("card record reflects new daily_limit", lim.get("daily_limit") in (1500000, "1500000"), lim)
    cb = int(cc.get("balance_amount", 0))
    spend(card, 1000000)
    spend(card, 1000000)
    _, cc = card_get(card)
    check("second spend exceeding daily_limit declined", int(cc["balance_amount"]) == cb - 1000000, (cb, cc.get("balance_amount")))
    advance(86400)
    spend(card, 1000000)
    _, cc = card_get(card)
    check("next day daily_limit allows spend again", int(cc["balance_amount"]) == cb - 2000000, (cb, cc.get("balance_amount")))
    r = PUT("/api/cards/%s/spend-limits" % card, {"all_time_limit": 2500000, "daily_limit": 100000000})
    spend(card, 1000000)
    _, cc = card_get(card)
    check("all_time_limit 2.5 USD after 2 USD spent: a 1 USD spend declined", int(cc["balance_amount"]) == cb - 2000000,
          (cb, cc.get("balance_amount")))
    # freeze twice
    POST("/api/cards/%s/status" % card, {"status": "frozen"})
    r = POST("/api/cards/%s/status" % card, {"status": "frozen"})
    check("freezing an already frozen card -> 422 (state machine has no frozen->frozen)", r.status == 422, ex(r), ambiguous=True)
    r = fund(card, 1000000)
    check("funding a frozen card allowed (spec only blocks authorizations)", r.status in (200, 201), ex(r), ambiguous=True)
    POST("/api/cards/%s/status" % card, {"status": "active"})
    # 24-hour boundary with a new card
    r = POST("/api/cards", card_body(cid, amount=2000000))
    c2 = (r.data or {}).get("card", {})
    created = parse_ts(c2["created_at"])
    gap = (created + timedelta(seconds=86400) - sandbox_now()).total_seconds()
    advance(int(gap) - 5)
    r = DELETE("/api/cards/%s" % c2["id"], {"reason": "boundary"})
    chk_problem("terminate at 23h59m55s -> 422 CARD_TOO_NEW", r, 422, "CARD_TOO_NEW")
    advance(6)
    r = DELETE("/api/cards/%s" % c2["id"], {"reason": "boundary"})
    check("terminate at >= 24 h -> 200", r.status == 200, ex(r))
    # lite via customer object of approved-KYC customer
    lb = lite_body(cid)
    del lb["customer_id"]
    lb["customer"] = {"customer_type": "individual", "first_name": cbody["first_name"], "last_name": cbody["last_name"],
                      "email": cbody["email"], "phone_number": "8012345678", "dial_code": "+234"}
    r = POST("/api/cards", lb)
    lc = (r.data or {}).get("card", {})
    check("lite card via customer object matched to approved-KYC customer -> 2xx lite", r.status in (200, 201)
          and lc.get("card_type") == "lite" and lc.get("customer_id") == cid, ex(r))
    lb = lite_body(cid)
    del lb["card_type"]
    lb["type"] = "lite"
    r = POST("/api/cards", lb)
    check("older lite form (type 'lite', no card_type) accepted as lite", r.status in (200, 201)
          and (r.data or {}).get("card", {}).get("card_type") == "lite", ex(r), ambiguous=True)
    lb = lite_body(cid, swipe_count=1.5)
    r = POST("/api/cards", lb)
    chk_problem("lite swipe_count 1.5 -> 400", r, 400)
    lb = lite_body(cid, contactless_payment=True)
    r = POST("/api/cards", lb)
    check("lite contactless_payment echoed", (r.data or {}).get("card", {}).get("contactless_payment") is True, ex(r))
    r = POST("/api/cards", dict(lite_body(cid), card_brand="mastercard"))
    check("lite card_brand mastercard accepted", r.status in (200, 201) and (r.data or {}).get("card", {}).get("card_brand") == "mastercard", ex(r))
    # card txs pagination
    r = GET("/api/cards/%s/transactions?limit=1" % card)
    d = r.data or {}
    pi = d.get("page_info", {})
    allt = (GET("/api/cards/%s/transactions?limit=100" % card).data or {}).get("transactions", [])
    check("card transactions limit=1: one entry, has_next_page, total counts all", r.status == 200 and len(d.get("transactions", [])) == 1
          and pi.get("has_next_page") is True and pi.get("total") == len(allt), (pi, len(allt)))
    check("card transaction entries carry type/status/balance_before/balance_after/fee_amount/fee_type", allt and all(
        all(k in t for k in ("type", "status", "balance_before", "balance_after", "fee_amount", "fee_type")) for t in allt), allt[:1])
    r = GET("/api/cards/%s/transactions/%s" % (card, uuid.uuid4()))
    chk_problem("unknown card transaction -> 404", r, 404)
    r = GET("/api/cards/%s/transactions" % card, cred=B)
    chk_problem("company B listing A's card transactions -> 404", r, 404)
    r = GET("/api/customers/%s/cards" % cid, cred=B)
    chk_problem("company B listing A's customer's cards -> 404", r, 404)
    r = GET("/api/cards/%s/secure" % card, cred=B)
    chk_problem("company B reading A's secure details -> 404", r, 404)


def probe_extras_trading():
    section("Extra: trading")
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "60000"})
    r = PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "-5"})
    chk_problem("PUT /sandbox/prices negative -> 400", r, 400)
    r = POST("/api/trading/quotes", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001"})
    q = (r.data or {}).get("quote", {})
    advance(29)
    r = POST("/api/trading/orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001",
                                     "quote_id": q.get("id")})
    check("order at quote age 29 s still fills", r.status in (200, 201) and (r.data or {}).get("order", {}).get("status") == "filled", ex(r))
    r = GET("/api/trading/orders/not-a-uuid")
    chk_problem("order non-UUID id -> 400", r, 400)
    r = GET("/api/trading/orders/" + str(uuid.uuid4()))
    chk_problem("order unknown id -> 404", r, 404)
    r = GET("/api/trading/quotes/" + str(uuid.uuid4()))
    chk_problem("quote unknown id -> 404", r, 404)
    # NGN buy
    r = POST("/api/trading/quotes", {"base_currency": "NGN", "quote_currency": "USDT", "side": "buy", "quantity": "1500"})
    q = (r.data or {}).get("quote", {})
    check("NGN buy quote price = 1/1500 * 1.005", approx(q.get("price"), dec(1) / dec(1500) * dec("1.005"), Decimal("0.001")), q.get("price"))
    n0, u0 = bal("NGN"), bal("USDT")
    r = POST("/api/trading/orders", {"base_currency": "NGN", "quote_currency": "USDT", "side": "buy", "quantity": "1500",
                                     "quote_id": q.get("id")})
    check("NGN BUY 1500 naira credits 150,000 kobo", r.status in (200, 201) and bal("NGN") - n0 == 150000, (ex(r), n0, bal("NGN")))
    check("NGN BUY 1500 naira costs ~1.005 USDT", abs((u0 - bal("USDT")) - 1005000) <= 2, u0 - bal("USDT"))
    r = POST("/api/trading/quotes", {"base_currency": "NGN", "quote_currency": "USDT", "side": "buy", "quantity": "10000000"})
    check("NGN quote 10,000,000 naira (upper bound) accepted", r.status in (200, 201), ex(r))
    r = POST("/api/trading/quotes", {"base_currency": "NGN", "quote_currency": "USDT", "side": "buy", "quantity": "500.5"})
    check("NGN quantity in major units: 500.5 refused (400)", r.status == 400, ex(r), ambiguous=True)
    # target sell trigger + fee
    u0, b0 = bal("USDT"), bal("BTC")
    r = POST("/api/trading/target-orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "sell", "quantity": "0.01",
                                            "target_price": "70000", "expires_at": "", "reference": ref("tgt")})
    o = (r.data or {}).get("order", {})
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "69999"})
    st = (GET("/api/trading/target-orders/" + str(o.get("id"))).data or {}).get("order", {}).get("status")
    check("sell target not triggered below target", st == "active", st)
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "71000"})
    st = (GET("/api/trading/target-orders/" + str(o.get("id"))).data or {}).get("order", {}).get("status")
    check("sell target triggered above target", st == "triggered", st)
    advance(10)
    o = (GET("/api/trading/target-orders/" + str(o.get("id"))).data or {}).get("order", {})
    check("sell target filled at target price 70000 (not market 71000)", o.get("status") == "filled"
          and approx(o.get("average_fill_price"), "70000"), o)
    check("sell proceeds = 0.01*70000*0.995 = 696.5 USDT", bal("USDT") - u0 == 696500000, (u0, bal("USDT"), bal("USDT") - u0))
    check("sell fill: BTC escrow consumed (0.01 BTC)", b0 - bal("BTC") == 1000000, (b0, bal("BTC")))
    check("filled target remaining_locked is zero", approx(o.get("remaining_locked", "x"), "0"), o.get("remaining_locked"))
    check("filled target last_fill_at and fully_filled_at set", o.get("last_fill_at") and o.get("fully_filled_at"), o)
    # buy target fill price when market is below target
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "60000"})
    u0 = bal("USDT")
    r = POST("/api/trading/target-orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.01",
                                            "target_price": "58000", "expires_at": "", "reference": ref("tgt")})
    o = (r.data or {}).get("order", {})
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "50000"})
    advance(10)
    o = (GET("/api/trading/target-orders/" + str(o.get("id"))).data or {}).get("order", {})
    check("buy target filled at target 58000 when market dropped to 50000; cost = 0.01*58000*1.005 = 582.9",
          o.get("status") == "filled" and approx(o.get("average_fill_price"), "58000") and u0 - bal("USDT") == 582900000,
          (o.get("average_fill_price"), u0 - bal("USDT")))
    PUT("/sandbox/prices", {"base": "BTC", "quote": "USDT", "price": "60000"})
    r = POST("/api/trading/target-orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.01",
                                            "target_price": "50000", "expires_at": "not-a-date", "reference": ref("tgt")})
    chk_problem("target expires_at malformed -> 400", r, 400)
    past = (sandbox_now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    r = POST("/api/trading/target-orders", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.01",
                                            "target_price": "50000", "expires_at": past, "reference": ref("tgt")})
    check("target expires_at in the past refused (4xx)", 400 <= r.status < 500, ex(r))
    r = GET("/api/trading/target-orders?status=bogus")
    chk_problem("target orders status=bogus -> 400", r, 400)
    # schedule extras
    body = {"currency": "BTC", "quote_currency": "USDT", "amount": "5000000", "frequency": "daily", "day_of_week": 0,
            "day_of_month": 0, "execution_time": "06:00", "reference": ref("dca")}
    r = POST("/api/trading/scheduled-orders", body)
    s = (r.data or {}).get("schedule", {})
    sid = s.get("id")
    nx = s.get("next_execution_at")
    r = PUT("/api/trading/scheduled-orders/" + str(sid), {"amount": "6000000"})
    s2 = (r.data or {}).get("schedule", {})
    check("amount-only update keeps next_execution_at", r.status == 200 and s2.get("next_execution_at") == nx, (nx, s2.get("next_execution_at")))
    advance(86400 * 2)
    r = GET("/api/trading/scheduled-orders/%s/executions" % sid)
    exs = (r.data or {}).get("executions", [])
    check("two ticks in a 2-day advance both run", len(exs) == 2, len(exs))
    if len(exs) >= 2:
        check("executions newest first", exs[0].get("executed_at", "") > exs[1].get("executed_at", ""), [e.get("executed_at") for e in exs])
        check("execution status completed, quote_amount per updated amount (<= 6000000)", all(e.get("status") == "completed" for e in exs), exs[:1])
    DELETE("/api/trading/scheduled-orders/" + str(sid))
    r = POST("/api/trading/scheduled-orders", dict(body, frequency="monthly", day_of_month=31, reference=ref("dca")))
    s = (r.data or {}).get("schedule", {})
    try:
        day = parse_ts(s["next_execution_at"]).day
    except Exception:
        day = None
    check("monthly day_of_month 31 -> next run on a 31st (months lacking it skipped)", day == 31, s.get("next_execution_at"))
    if s.get("id"):
        DELETE("/api/trading/scheduled-orders/" + s["id"])
    r = GET("/api/trading/scheduled-orders?status=bogus")
    chk_problem("scheduled orders status=bogus -> 400", r, 400)
    r = GET("/api/trading/scheduled-orders/" + str(uuid.uuid4()))
    chk_problem("unknown schedule -> 404", r, 404)


def probe_extras_lightning():
    section("Extra: lightning")
    for pfx in ("lnbc", "lntb", "lnbcrt"):
        inv = make_bolt11(pfx, 1500, "net " + pfx, 3600, secrets.randbelow(N - 1) + 1, ts=int(sandbox_now().timestamp()))
        r = POST("/api/lightning/decode", {"request": inv})
        check("decode accepts %s prefix" % pfx, r.status == 200 and (r.data or {}).get("amount_sat") == 1500, ex(r))
    priv = secrets.randbelow(N - 1) + 1
    inv = make_bolt11("lntbs", 700, "tampered", 3600, priv)
    bad = inv[:-10] + ("q" if inv[-10] != "q" else "p") + inv[-9:]
    r = POST("/api/lightning/decode", {"request": bad})
    chk_problem("decode invoice with broken checksum -> 400", r, 400)
    r = POST("/api/lightning/invoices", {"amount": 2000, "description": "nocap", "reference": ref("ln")}, cred=B)
    binv = r.data or {}
    a0 = bal("BTC")
    r = POST("/api/lightning/payments/send", {"request": binv.get("request"), "reference": ref("pay"), "max_fee": 0})
    check("max_fee 0 = no cap: pay succeeds, fee 1+ceil(2) = 3 sat", r.status == 201 and (r.data or {}).get("status") == "paid"
          and a0 - bal("BTC") == 2003, (ex(r), a0 - bal("BTC")))
    r = POST("/api/lightning/payments/send", {"request": binv.get("request")})
    chk_problem("pay without reference -> 400", r, 400)
    r = POST("/api/lightning/invoices/verify", {"payment_hash": "00" * 32})
    chk_problem("verify unknown payment_hash -> 404", r, 404)
    r = POST("/api/lightning/invoices/verify", {"payment_hash": "xyz"})
    chk_problem("verify malformed payment_hash -> 400", r, 400)
    r = POST("/api/lightning/invoices", {"amount": 100, "description": "exp", "expiry": 120, "reference": ref("ln")})
    d = r.data or {}
    try:
        life = (parse_ts(d["expires_at"]) - parse_ts(d["created_at"])).total_seconds()
    except Exception:
        life = None
    check("invoice expiry 120 -> expires_at = created_at + 120 s", life is not None and abs(life - 120) < 2, life)
    advance(121)
    r = POST("/api/lightning/payments/initiate", {"request": d.get("request")}, cred=B)
    check("initiate on expired invoice answers 200 with is_expired true", r.status == 200 and (r.data or {}).get("is_expired") is True,
          ex(r), ambiguous=True)
    r = POST("/sandbox/lightning/pay", {"request": d.get("request")})
    check("control-API pay of an expired invoice refused (4xx)", 400 <= r.status < 500, ex(r))
    r = GET("/api/lightning/invoices?direction=incoming&page_size=100")
    check("list direction=incoming only incoming", r.status == 200 and all(x.get("direction") == "incoming"
          for x in (r.data or {}).get("invoices", [])), ex(r))
    r = GET("/api/lightning/invoices?direction=sideways")
    chk_problem("list direction=sideways -> 400", r, 400)
    r = POST("/api/lightning/invoices", {"amount": 100, "description": "neg", "expiry": -5, "reference": ref("ln")})
    chk_problem("invoice negative expiry -> 400", r, 400)


def probe_extras_idem_scope():
    section("Extra: idempotency scope, more validation")
    shared = ref("shared")
    rA, bA = mk_customer(reference=shared)
    rB, bB = mk_customer(cred=B, reference=shared)
    check("same reference in two companies: no conflict, B gets its own customer", rB.status in (200, 201)
          and (rB.data or {}).get("company_id") != (rA.data or {}).get("company_id")
          and (rB.data or {}).get("email") == bB["email"], ex(rB))
    rB2, _ = mk_customer(cred=B, reference=shared, email=bA["email"])
    check("B replaying with A's exact body gets no A data", (rB2.data or {}).get("id") != (rA.data or {}).get("id"), ex(rB2))
    r = POST("/api/lightning/invoices", {"amount": 10, "description": "x-op", "reference": shared})
    check("same reference on a different operation (invoice) is no conflict", r.status == 201, ex(r))
    r, _ = mk_customer(phone_number="not a phone")
    check("customer phone_number not in international format -> 400", r.status == 400, ex(r), ambiguous=True)
    r, _ = mk_customer(country_code="NG")
    check("customer country_code not alpha-3 -> 400", r.status == 400, ex(r), ambiguous=True)
    r = POST("/api/lightning/invoices", {"amount": 10, "description": "c", "reference": ref("ln"), "customer_id": str(uuid.uuid4())})
    check("invoice with unknown customer_id -> 404", r.status == 404, ex(r), ambiguous=True)
    rc, _ = mk_customer()
    r = POST("/api/lightning/invoices", {"amount": 10, "description": "c", "reference": ref("ln"), "customer_id": rc.data["id"]})
    check("invoice with customer_id echoes it", r.status == 201 and (r.data or {}).get("customer_id") == rc.data["id"], ex(r))
    r = GET("/api/lightning/invoices/not-a-uuid")
    chk_problem("invoice non-UUID id -> 400", r, 400)
    r = GET("/api/lightning/invoices/" + str(uuid.uuid4()))
    chk_problem("invoice unknown id -> 404", r, 404)
    r = POST("/api/cards/%s/status" % str(uuid.uuid4()), {"status": "frozen"})
    chk_problem("status on unknown card -> 404", r, 404)
    r = POST("/api/cards", card_body(rc.data["id"], currency="EUR"))
    check("card currency EUR (non-USD) refused or accepted consistently (not 5xx)", r.status < 500, ex(r))
    # drain B's BTC, then an insufficient Lightning payment
    b = bal("BTC", B)
    ok = None
    for keep in (1000, 10000, 100000, 1000000):
        r = POST("/api/withdrawals", {"to_address": "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "amount": str(b - keep),
                                      "currency": "BTC", "chain": "bitcoin", "reference": ref("drain")}, cred=B)
        if r.status in (200, 201):
            ok = r
            break
    left = bal("BTC", B)
    if ok and left is not None and left < 20000000:
        r = POST("/api/lightning/invoices", {"amount": max(left, 1), "description": "too much", "reference": ref("ln")})
        inv = r.data or {}
        pr = ref("pay")
        r = POST("/api/lightning/payments/send", {"request": inv.get("request"), "reference": pr}, cred=B)
        chk_problem("pay invoice whose amount+fee exceeds wallet -> 422 INSUFFICIENT_BALANCE", r, 422, "INSUFFICIENT_BALANCE")
        check("insufficient pay debits nothing", bal("BTC", B) == left, (left, bal("BTC", B)))
        g = GET("/api/lightning/invoices/" + inv.get("id", "")).data or {}
        check("payee invoice still pending after refused pay", g.get("status") == "pending", g.get("status"))
    else:
        print("  (could not drain B's BTC: %s)" % (ex(r) if r else None))


def probe_extras_lists():
    section("Extra: list paging, ordering, search")
    cid, cbody = approved_customer()
    PUT("/api/customers/" + cid, {"first_name": "Zebedee", "last_name": "Quux" + RUN})
    ids = []
    for i in range(22):
        r = POST("/api/cards", card_body(cid, amount=1000000))
        ids.append((r.data or {}).get("card", {}).get("id"))
    r = GET("/api/cards?status=pending")
    check("cards filter status=pending lists the new pending cards", r.status == 200 and all(x["status"] == "pending" for x in
          r.data.get("cards", [])) and ids[-1] in [x["id"] for x in r.data.get("cards", [])], ex(r))
    advance(300)
    r = GET("/api/cards")
    d = r.data or {}
    check("cards default page size 20 with has_next_page", r.status == 200 and len(d.get("cards", [])) == 20
          and d.get("page_info", {}).get("has_next_page") is True, (len(d.get("cards", [])), d.get("page_info")))
    full = (GET("/api/cards?limit=100").data or {})
    allc = full.get("cards", [])
    check("cards page_info.total counts all cards", full.get("page_info", {}).get("total") == len(allc), (full.get("page_info"), len(allc)))
    cr = [x.get("created_at") for x in allc]
    check("cards listed newest first", cr == sorted(cr, reverse=True), cr[:5])
    p1 = GET("/api/cards?limit=3").data or {}
    POST("/api/cards", card_body(cid, amount=1000000))
    p2 = GET("/api/cards?limit=3&cursor=" + urllib.request.quote(p1.get("page_info", {}).get("next_cursor", ""))).data or {}
    exp = [x["id"] for x in allc[3:6]]
    got = [x["id"] for x in p2.get("cards", [])]
    check("cursor stable while records are added (page 2 = items 4..6 of the earlier listing)", got == exp, (got, exp))
    r = GET("/api/cards?search=Zebedee")
    names = {x.get("name") for x in (r.data or {}).get("cards", [])}
    check("cards search by cardholder name", r.status == 200 and (r.data or {}).get("cards") and
          all("Zebedee" in (n or "") for n in names), (ex(r, 200), names))
    r = GET("/api/customers/%s/cards?limit=5" % cid)
    d = r.data or {}
    check("customer cards limit=5 paged with total 23", len(d.get("cards", [])) == 5 and d.get("page_info", {}).get("total") == 23
          and d.get("page_info", {}).get("has_next_page") is True, d.get("page_info"))
    r = spend(ids[0], 1000, cred=B)
    check("control API spend on another company's card -> 404", r.status == 404, ex(r))
    # customer cursor stability and order
    r = GET("/api/customers?limit=100")
    allcu = (r.data or {}).get("customers", [])
    cr = [x.get("created_at") for x in allcu]
    check("customers listed newest first", cr == sorted(cr, reverse=True), cr[:4])
    p1 = GET("/api/customers?limit=2").data or {}
    mk_customer()
    p2 = GET("/api/customers?limit=2&cursor=" + urllib.request.quote(p1.get("next_cursor") or "")).data or {}
    check("customer cursor stable while records are added", [x["id"] for x in p2.get("customers", [])] == [x["id"] for x in allcu[2:4]],
          ([x["id"] for x in p2.get("customers", [])], [x["id"] for x in allcu[2:4]]))
    # trading/lightning shapes
    r = POST("/api/trading/quotes", {"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": 0.002})
    q = (r.data or {}).get("quote", {})
    check("quote accepts JSON number quantity; returns decimal strings", r.status in (200, 201) and isinstance(q.get("quantity"), str)
          and isinstance(q.get("price"), str) and approx(q.get("quantity"), "0.002"), q)
    r = POST("/api/trading/scheduled-orders", {"currency": "BTC", "quote_currency": "USDT", "amount": "1000000", "frequency": "weekly",
                                               "day_of_week": 2, "day_of_month": 15, "execution_time": "08:00", "reference": ref("dca")})
    s = (r.data or {}).get("schedule", {})
    check("weekly schedule ignores day_of_month (stored 0 when unused)", r.status in (200, 201) and s.get("day_of_month") == 0
          and s.get("day_of_week") == 2, s)
    if s.get("id"):
        DELETE("/api/trading/scheduled-orders/" + s["id"])
    r = POST("/api/trading/scheduled-orders", {"currency": "BTC", "quote_currency": "USDT", "amount": "1000000", "frequency": "daily",
                                               "day_of_week": 0, "day_of_month": 0, "execution_time": "08:00", "reference": ref("dca")})
    s = (r.data or {}).get("schedule", {})
    check("daily schedule day_of_week 0 and day_of_month 0", s.get("day_of_month") == 0 and s.get("day_of_week") == 0, s)
    check("schedule amount is an integer string", isinstance(s.get("amount"), str) and s.get("amount") == "1000000", s.get("amount"),
          ambiguous=True)
    if s.get("id"):
        DELETE("/api/trading/scheduled-orders/" + s["id"])
    r = POST("/api/lightning/invoices", {"amount": 77, "description": "upd", "reference": ref("ln")})
    g = GET("/api/lightning/invoices/" + (r.data or {}).get("id", "")).data or {}
    check("never-updated invoice has updated_at ''", g.get("updated_at") == "", g.get("updated_at"))
    check("pending invoice preimage ''", g.get("preimage") == "", g.get("preimage"))


def probe_extras_refusals():
    section("Extra: refusals store nothing (422 / 429) and 409 changes nothing")
    r0, _ = mk_customer()
    cid = r0.data["id"]
    POST("/api/customers/%s/card-kyc" % cid, KYC)
    b = card_body(cid, amount=2000000)
    r1 = POST("/api/cards", b)
    chk_problem("card create with KYC pending -> 422", r1, 422, "KYC_NOT_APPROVED")
    advance(300)
    r2 = POST("/api/cards", b)
    check("same reference+body after KYC approval runs (422 was not stored)", r2.status in (200, 201), ex(r2))
    card = (r2.data or {}).get("card", {}).get("id")
    r3 = POST("/api/cards", dict(b, amount=3000000))
    r4 = POST("/api/cards", b)
    check("after a 409 the original is unchanged (replay still byte-identical)", r3.status == 409 and r4.raw == r2.raw, ex(r4))
    advance(300)
    fund(card, 1000000)
    rx = ref("fund429")
    r1 = fund(card, 1000000, reference=rx)
    advance(31)
    r2 = fund(card, 1000000, reference=rx)
    check("fund refused 429, then same reference later runs (429 not stored)", r1.status == 429 and r2.status in (200, 201), (r1.status, ex(r2)))
    u0 = bal("USDT")
    ry = ref("fund422")
    advance(31)
    r1 = fund(card, 10 ** 12, reference=ry)
    advance(31)
    r2 = fund(card, 1000000, reference=ry)
    check("fund refused 422, then same reference with corrected body runs", r1.status == 422 and r2.status in (200, 201),
          (r1.status, ex(r2)))


def main():
    srv = start_hooks()
    r = GET("/healthz", sign_it=False)
    if r.status != 200:
        print("service not reachable at", BASE)
        sys.exit(2)
    r = PUT("/sandbox/webhook", {"url": "http://127.0.0.1:%d/hooks/A" % HOOK_PORT, "secret": HOOK_SECRET_A})
    check("PUT /sandbox/webhook for company A (loopback) accepted", r.status == 200, ex(r))
    for fn in (probe_auth_and_errors, probe_customers, probe_cards, probe_trading, probe_lightning,
               probe_withdrawals_rates, probe_bulk_va, probe_webhook_retry, probe_extras_errors,
               probe_extras_customers, probe_extras_cards, probe_extras_trading, probe_extras_lightning,
               probe_extras_idem_scope, probe_extras_lists, probe_extras_refusals):
        try:
            fn()
        except Exception as e:
            check("%s completed without exception" % fn.__name__, False, traceback.format_exc()[-900:])
    check("no request yielded a 5xx ('Nothing a client sends yields a 500')", not SERVER_ERRORS,
          [ex(x, 200) for x in SERVER_ERRORS[:5]])
    srv.shutdown()
    passed = sum(1 for ok, _, _ in RESULTS if ok)
    failed = [(n, d) for ok, n, d in RESULTS if not ok]
    print("\n==== SUMMARY: %d passed, %d failed, %d total (+%d WARN where the documents are ambiguous) ===="
          % (passed, len(failed), len(RESULTS), len(WARNS)))
    for n, d in failed:
        print("FAIL " + n + "  -- " + str(d)[:500])
    for n, d in WARNS:
        print("WARN " + n + "  -- " + str(d)[:500])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
