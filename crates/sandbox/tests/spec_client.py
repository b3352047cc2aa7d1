#!/usr/bin/env python3
"""A client written from the specification alone (Python standard library
only, none of this project's code): signs requests as the spec's
Authentication section and open-paths.md describe, and prints what the
sandbox answered. Usage: spec_client.py BASE_URL CLIENT_ID SECRET."""

import hashlib
import hmac
import json
import secrets
import sys
import time
import urllib.error
import urllib.request


def call(base, client_id, secret, method, path, body=None):
    payload = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
    timestamp = str(int(time.time()))
    nonce = secrets.token_hex(16)
    message = f"{client_id}:{timestamp}:{nonce}:".encode() + payload
    signature = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    headers = {
        "x-auth-client": client_id,
        "x-auth-timestamp": timestamp,
        "x-auth-nonce": nonce,
        "x-auth-signature": signature,
        "accept": "application/json",
    }
    if body is not None:
        headers["content-type"] = "application/json"
    req = urllib.request.Request(base + path, data=payload or None, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def main():
    base, client_id, secret = sys.argv[1:4]
    results = {
        "whoami": call(base, client_id, secret, "GET", "/api/whoami"),
        "balances": call(base, client_id, secret, "GET", "/api/balances"),
        "generate": call(base, client_id, secret, "POST", "/api/addresses",
                         {"chain": "ethereum", "label": "spec client", "reference": "py-1"}),
        "wrong_secret": call(base, client_id, secret + "x", "GET", "/api/whoami"),
    }
    print(json.dumps({k: {"status": s, "body": b} for k, (s, b) in results.items()}))


if __name__ == "__main__":
    main()
