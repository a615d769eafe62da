#!/usr/bin/env python3
"""The host's layering, checked against `cargo metadata`.

Each crate under host/ is one layer. A layer may depend only on the layers
listed for it (downward), and each heavy third-party dependency may appear
only in the crates that own it. A new crate under host/ must be listed here,
so it gets a place in the order before it gets code. Exits 1 naming every
edge that breaks the rules; `just check` and CI run it.
"""

import json
import subprocess
import sys

# Layer crate -> the workspace crates it may depend on (normal and build
# dependencies; tests may use anything).
LAYERS = {
    "switchboard-domain": set(),
    "switchboard-store": {"switchboard-domain"},
    # Media bytes (a directory or an S3 bucket); the records are the store's.
    "switchboard-media": {"switchboard-domain"},
    # The outbound guard every request on someone else's behalf goes
    # through (resolve, check, pin; no redirects, no environment proxy).
    "switchboard-egress": {"switchboard-domain"},
    # The sim persists its world and the whatsapp backend its device state in
    # the store; the store knows neither.
    "switchboard-network": {
        "switchboard-domain",
        "switchboard-store",
        "switchboard-media",
        "switchboard-egress",
    },
    # Plugin records and key-value stores live in the store; plugin HTTP
    # connects through the egress guard.
    "switchboard-plugins": {"switchboard-domain", "switchboard-store", "switchboard-egress"},
    # Plugins reach it only through the hook traits the domain defines.
    "switchboard-runtime": {
        "switchboard-domain",
        "switchboard-store",
        "switchboard-media",
        "switchboard-network",
        "switchboard-egress",
    },
    # The network's and the store's types reach it through the runtime; the
    # plugin admin routes manage the plugin host itself.
    "switchboard-api": {"switchboard-domain", "switchboard-runtime", "switchboard-plugins"},
    # The broker's send queue sends through the API's own send path (same
    # validation and errors); the API sees the broker only through a trait.
    "switchboard-nats": {
        "switchboard-domain",
        "switchboard-store",
        "switchboard-runtime",
        "switchboard-api",
    },
    # An HTTP client of the API: no server crate beneath it.
    "switchboard-cli": {"switchboard-domain"},
}
# The binary: configuration, composition, serving. It may use every layer.
LAYERS["switchboard"] = set(LAYERS)

# Heavy dependency -> the crates allowed to depend on it directly.
HEAVY = {
    "redb": {"switchboard-store"},
    "axum": {"switchboard-api", "switchboard"},
    "wasmtime": {"switchboard-plugins"},
    "wasmtime-wasi": {"switchboard-plugins"},
    "whatsapp-rust": {"switchboard-network", "switchboard-store"},
    "utoipa": {"switchboard-api"},
    "async-nats": {"switchboard-nats"},
    "object_store": {"switchboard-media"},
}

# Optional dependencies allowed behind a named feature only: the domain's
# types derive OpenAPI schemas when the api asks for them.
OPTIONAL = {
    ("switchboard-domain", "utoipa"): "openapi",
    ("switchboard-network", "utoipa"): "openapi",
    ("switchboard-plugins", "utoipa"): "openapi",
    ("switchboard-runtime", "utoipa"): "openapi",
}


def metadata():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--no-deps"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def main():
    meta = metadata()
    root = meta["workspace_root"]
    problems = []
    for pkg in meta["packages"]:
        name = pkg["name"]
        in_host = pkg["manifest_path"].startswith(f"{root}/host/")
        if in_host and name not in LAYERS:
            problems.append(f"{name}: a crate under host/ that .ci/layers.py gives no layer")
            continue
        if name not in LAYERS:
            continue
        allowed = LAYERS[name]
        for dep in pkg["dependencies"]:
            if dep["kind"] == "dev":
                continue
            target = dep["name"]
            if target in LAYERS and target not in allowed and target != name:
                problems.append(f"{name} -> {target}: not a layer below it")
            if target in HEAVY:
                owners = HEAVY[target]
                feature = OPTIONAL.get((name, target))
                if feature is not None:
                    gated = dep["optional"] and f"dep:{target}" in pkg["features"].get(
                        feature, []
                    )
                    if not gated:
                        problems.append(
                            f"{name} -> {target}: allowed only as an optional dependency behind the `{feature}` feature"
                        )
                    continue
                if name not in owners:
                    problems.append(
                        f"{name} -> {target}: only {', '.join(sorted(owners))} may depend on {target}"
                    )
    if problems:
        print("layering check failed:")
        for p in problems:
            print(f"  {p}")
        return 1
    print(f"layering check: {len(LAYERS)} layer crates, every edge points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
