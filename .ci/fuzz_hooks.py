"""Schemathesis hooks for .ci/fuzz.py: plugin uploads are `application/wasm`
bodies, which schemathesis sends as it sends any binary body."""

import schemathesis

schemathesis.serializer.alias("application/wasm", "application/octet-stream")
