"""The bearer tokens of infra/fuzz-api.sh's third run (infra/fuzz-api-bearer.toml), from the
demo data: prints NAME=value lines for the environment.

Usage: fuzz-api-tokens.py BASE_URL DEMO_JSON
"""

import json
import sys
import urllib.parse
import urllib.request


def token(base, form):
    body = urllib.parse.urlencode(form).encode()
    with urllib.request.urlopen(f"{base}/v0/token", data=body, timeout=10) as response:
        return json.load(response)["access_token"]


def main(base, demo_path):
    with open(demo_path, encoding="utf-8") as demo_file:
        demo = json.load(demo_file)
    app = {"client_id": demo["client_id"], "client_secret": demo["client_secret"]}
    console = {
        "client_id": demo["console_client_id"],
        "client_secret": demo["console_client_secret"],
    }
    admin = {"username": demo["admin_login"], "password": demo["admin_password"]}
    user = {"username": demo["user_login"], "password": demo["user_password"]}
    tokens = {
        "FUZZ_APP_TOKEN": token(base, {"grant_type": "client_credentials", **app}),
        "FUZZ_CLIENT_ID": demo["client_id"],
        "FUZZ_USER_TOKEN": token(
            base, {"grant_type": "password", "scope": "openid profile", **user, **app}
        ),
        "FUZZ_ADMIN_TOKEN": token(base, {"grant_type": "password", **admin, **console}),
        "FUZZ_COMPANY_ID": demo["company_id"],
        "FUZZ_CONNECTION_TOKEN": token(base, {"grant_type": "password", **admin, **app}),
        "FUZZ_SCIM_TOKEN": demo["scim_token"],
    }
    for name, value in tokens.items():
        print(f"{name}={value}")


if __name__ == "__main__":
    main(*sys.argv[1:])
