#!/usr/bin/env python3
"""Writes N pre-signed request header sets for wrk, one per line:
client_id<TAB>timestamp<TAB>nonce<TAB>signature. Each nonce is used once,
as the sandbox refuses replays, and the timestamps stay valid for 300 s.
Usage: sign_requests.py CLIENT_ID SECRET COUNT > FILE (body is empty: GETs)."""

import hashlib
import hmac
import secrets
import sys
import time

client_id, secret, count = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
timestamp = str(int(time.time()))
out = sys.stdout
for _ in range(count):
    nonce = secrets.token_hex(16)
    sig = hmac.new(secret, f"{client_id}:{timestamp}:{nonce}:".encode(), hashlib.sha256).hexdigest()
    out.write(f"{client_id}\t{timestamp}\t{nonce}\t{sig}\n")
