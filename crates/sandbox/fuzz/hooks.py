"""Schemathesis hooks: sign every request as the typed client does
(crates/api/src/signing.rs): lowercase hex HMAC-SHA256 of
`client_id:timestamp:nonce:body` with the client secret, Unix-seconds
timestamp and 16 random bytes of hex nonce, headers in lowercase.

The signature covers the exact body bytes sent, so it is computed on the
prepared request (a requests auth hook), after schemathesis serialized it.
The credentials come from FUZZ_CLIENT_ID and FUZZ_CLIENT_SECRET. At exit
it prints how many requests got each status, so a run that only met 401s
(a signing mistake) shows at once.
"""

import atexit
import collections
import hashlib
import hmac
import os
import secrets
import time

import requests
import schemathesis

CLIENT_ID = os.environ["FUZZ_CLIENT_ID"]
CLIENT_SECRET = os.environ["FUZZ_CLIENT_SECRET"].encode()


class Signed(requests.auth.AuthBase):
    def __call__(self, request):
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        timestamp = str(int(time.time()))
        nonce = secrets.token_hex(16)
        message = b":".join([CLIENT_ID.encode(), timestamp.encode(), nonce.encode(), body])
        request.headers["x-auth-client"] = CLIENT_ID
        request.headers["x-auth-timestamp"] = timestamp
        request.headers["x-auth-nonce"] = nonce
        request.headers["x-auth-signature"] = hmac.new(CLIENT_SECRET, message, hashlib.sha256).hexdigest()
        return request


@schemathesis.hook
def before_call(context, case, kwargs):
    kwargs["auth"] = Signed()


STATUSES = collections.Counter()


@schemathesis.hook
def after_call(context, case, response):
    STATUSES[response.status_code] += 1


@atexit.register
def report():
    counts = ", ".join(f"{status}: {n}" for status, n in sorted(STATUSES.items()))
    print(f"fuzz: {sum(STATUSES.values())} requests; by status {counts}")
