"""The bearer tokens of infra/fuzz-api.sh's third run (infra/fuzz-api-bearer.toml), from the
demo data: prints NAME=value lines for the environment, once each token has been shown to work
(introspected active, and a valid request with it answered 200). Exits non-zero otherwise.

Usage: fuzz-api-tokens.py BASE_URL DEMO_JSON
"""

import json
import sys
import urllib.error
import urllib.parse
import urllib.request


def token(base, form):
    body = urllib.parse.urlencode(form).encode()
    with urllib.request.urlopen(f"{base}/v0/token", data=body, timeout=10) as response:
        return json.load(response)["access_token"]


def introspected(base, client, token_value):
    """The demo client's introspection of a token (RFC 7662)."""
    body = urllib.parse.urlencode({"token": token_value, **client}).encode()
    with urllib.request.urlopen(f"{base}/oauth2/v0/introspect", data=body, timeout=10) as response:
        return json.load(response)


def status_of(base, path, bearer):
    """A GET with the bearer token: its status."""
    request = urllib.request.Request(f"{base}{path}", headers={"Authorization": f"Bearer {bearer}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as refused:
        return f"{refused.code} {refused.read().decode(errors='replace')}"


def check_valid_requests_succeed(base, app, console, tokens):
    """Each token the fuzzing relies on works before it starts: a run whose tokens were refused
    would fuzz nothing but the 401 path, and pass. Each is introspected by its own client (a
    client introspects only its own tokens)."""
    for name, client in (
        ("FUZZ_APP_TOKEN", app),
        ("FUZZ_USER_TOKEN", app),
        ("FUZZ_ADMIN_TOKEN", console),
        ("FUZZ_CONNECTION_TOKEN", app),
    ):
        answer = introspected(base, client, tokens[name])
        if answer.get("active") is not True:
            sys.exit(f"fuzz-api-tokens: {name} is not active at introspection: {answer}")
    client_id = tokens["FUZZ_CLIENT_ID"]
    for path, name in (
        (f"/app-mgmt/v4/apps/{client_id}/secrets", "FUZZ_APP_TOKEN"),
        ("/oauth2/v0/userinfo", "FUZZ_USER_TOKEN"),
        ("/scim/v2/ServiceProviderConfig", "FUZZ_SCIM_TOKEN"),
    ):
        status = status_of(base, path, tokens[name])
        if status != 200:
            sys.exit(f"fuzz-api-tokens: GET {path} with {name} answered {status}, not 200")


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
        "FUZZ_APP_TOKEN": token(
            base, {"grant_type": "client_credentials", "scope": "app-mgmt.secrets", **app}
        ),
        "FUZZ_CLIENT_ID": demo["client_id"],
        "FUZZ_USER_TOKEN": token(
            base, {"grant_type": "password", "scope": "openid profile", **user, **app}
        ),
        "FUZZ_ADMIN_TOKEN": token(base, {"grant_type": "password", **admin, **console}),
        "FUZZ_COMPANY_ID": demo["company_id"],
        "FUZZ_CONNECTION_TOKEN": token(base, {"grant_type": "password", **admin, **app}),
        "FUZZ_SCIM_TOKEN": demo["scim_token"],
    }
    check_valid_requests_succeed(base, app, console, tokens)
    for name, value in tokens.items():
        print(f"{name}={value}")


if __name__ == "__main__":
    main(*sys.argv[1:])
