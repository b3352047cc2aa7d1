#!/usr/bin/env python3
"""Prints the current TOTP code (SHA-1, 6 digits, 30 s) of a base32 key,
as an authenticator app shows it. Usage: totp.py BASE32_SECRET"""

import base64
import hashlib
import hmac
import struct
import sys
import time

secret = sys.argv[1].strip().upper()
key = base64.b32decode(secret + "=" * (-len(secret) % 8))
mac = hmac.new(key, struct.pack(">Q", int(time.time()) // 30), hashlib.sha1).digest()
offset = mac[-1] & 0x0F
code = (struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000
print(f"{code:06d}")
