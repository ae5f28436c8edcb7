"""A standard OAuth 2.0 / OpenID Connect relying party, authlib's requests client, driving the
token service as a real application would.

    ISSUER=http://127.0.0.1:8080 CLIENT_ID=... CLIENT_SECRET=... REDIRECT_URI=... \
    LOGIN=... PASSWORD=... SCOPE='openid profile' CASE=oidcc-server,oidcc-refresh-token \
    .cache/rp-venv/bin/python tests/interop/python/rp.py

CASE: a comma-separated list of the case names below, or `all`. Each case starts from its own
sign-in. Prints one JSON object, case name to result; exits 1 when any case failed, 2 on a usage
error.

private_key_jwt takes two runs, so that the test can register the key in between:
    MODE=register JWKS_OUT=jwks.json PRIVATE_KEY_FILE=key.json rp.py   (writes both files)
    tokenctl clients set-jwks CLIENT_ID jwks.json
    CASE=private-key-jwt PRIVATE_KEY_FILE=key.json CLIENT_ID=... ISSUER=... rp.py
"""

import json
import os
import sys
import time
from urllib.parse import parse_qs, urlsplit

# authlib refuses plain HTTP unless told; the server under test listens on loopback.
os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")

from authlib.common.security import generate_token  # noqa: E402
from authlib.integrations.requests_client import OAuth2Session  # noqa: E402
from authlib.oauth2.rfc7523 import PrivateKeyJWT  # noqa: E402
from authlib.oauth2.rfc7523.client import ASSERTION_TYPE  # noqa: E402
from authlib.oidc.core import CodeIDToken  # noqa: E402
from joserfc import jwt  # noqa: E402
from joserfc.jwk import ECKey, KeySet  # noqa: E402
import requests  # noqa: E402

# The user agent beside this file, imported without leaving __pycache__ in the work tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser  # noqa: E402


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def setting(name, default=None):
    value = os.environ.get(name) or default
    if not value:
        print(f"rp.py: {name} is not set", file=sys.stderr)
        sys.exit(2)
    return value


ISSUER = setting("ISSUER").rstrip("/")
_metadata = None


def metadata():
    global _metadata
    if _metadata is None:
        response = requests.get(f"{ISSUER}/.well-known/openid-configuration", timeout=10)
        response.raise_for_status()
        _metadata = response.json()
        check(_metadata["issuer"] == ISSUER, f"issuer {_metadata['issuer']}")
    return _metadata


def session(**kwargs):
    """The relying party as most applications configure it: client_secret_post here (the Node
    driver uses client_secret_basic), PKCE S256."""
    return OAuth2Session(
        setting("CLIENT_ID"),
        setting("CLIENT_SECRET"),
        scope=setting("SCOPE", "openid profile"),
        redirect_uri=setting("REDIRECT_URI"),
        code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_post",
        revocation_endpoint_auth_method="client_secret_post",
        **kwargs,
    )


def code_flow(**kwargs):
    """Authorization URL (PKCE S256, state, nonce), the browser's sign-in and consent, then
    authlib's `fetch_token` with the callback URL (it checks the state) and the ID token's
    signature and claims checked with authlib's `CodeIDToken`."""
    client = session(**kwargs)
    verifier = generate_token(48)
    nonce = generate_token(20)
    url, state = client.create_authorization_url(
        metadata()["authorization_endpoint"], code_verifier=verifier, nonce=nonce
    )
    visit = Browser(ISSUER, [client.redirect_uri]).navigate(
        url, setting("LOGIN"), setting("PASSWORD")
    )
    check(visit.location, f"the authorize flow ended on a {visit.status} page, not a redirect")
    check(visit.location.startswith(client.redirect_uri), f"redirected to {visit.location}")
    answer = parse_qs(urlsplit(visit.location).query)
    check("error" not in answer, f"authorization error {answer.get('error')}: {answer.get('error_description')}")
    token = client.fetch_token(
        metadata()["token_endpoint"],
        authorization_response=visit.location,
        state=state,
        code_verifier=verifier,
    )
    claims = None
    if "id_token" in token:
        claims = id_token_claims(token, nonce)
    elif "openid" in client.scope.split():
        raise Failure("no id_token although the scope has openid")
    return client, token, claims


def verified_id_token(id_token):
    keys = KeySet.import_key_set(requests.get(metadata()["jwks_uri"], timeout=10).json())
    return jwt.decode(id_token, keys, algorithms=["ES256", "PS256", "EdDSA"])


def id_token_claims(token, nonce):
    decoded = verified_id_token(token["id_token"])
    claims = CodeIDToken(
        decoded.claims,
        decoded.header,
        options={
            "iss": {"essential": True, "value": ISSUER},
            "aud": {"essential": True, "value": setting("CLIENT_ID")},
        },
        params={"nonce": nonce, "client_id": setting("CLIENT_ID"), "access_token": token["access_token"]},
    )
    claims.validate(leeway=60)
    return claims


def introspect(client, token):
    response = client.introspect_token(metadata()["introspection_endpoint"], token=token)
    check(response.status_code == 200, f"introspection answered {response.status_code}")
    return response.json()


def userinfo(client, method, sub, **kwargs):
    endpoint = metadata().get("userinfo_endpoint")
    check(endpoint, "the metadata has no userinfo_endpoint")
    response = client.request(method, endpoint, **kwargs)
    check(response.status_code == 200, f"{method} userinfo answered {response.status_code} {response.text}")
    info = response.json()
    check(info.get("sub") == sub, f"userinfo sub {info.get('sub')}, ID token sub {sub}")
    return {"claims": sorted(info)}


def case_oidcc_server():
    _, token, claims = code_flow()
    check(claims, "no id_token in the token response")
    check(token.get("refresh_token"), "no refresh_token")
    return {"token_type": token["token_type"], "scope": token.get("scope"), "sub": claims["sub"]}


def case_oidcc_userinfo_get():
    client, _, claims = code_flow()
    check(claims, "no id_token in the token response")
    return userinfo(client, "GET", claims["sub"])


def case_oidcc_userinfo_post_header():
    client, _, claims = code_flow()
    check(claims, "no id_token in the token response")
    return userinfo(client, "POST", claims["sub"])


def case_oidcc_userinfo_post_body():
    # authlib places the token in the form body (`access_token=...`, RFC 6750 §2.2).
    client, _, claims = code_flow(token_placement="body")
    check(claims, "no id_token in the token response")
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    return userinfo(client, "POST", claims["sub"], data="", headers=headers)


def case_oidcc_refresh_token():
    client, token, claims = code_flow()
    refreshed = client.refresh_token(metadata()["token_endpoint"], refresh_token=token["refresh_token"])
    check(refreshed["access_token"] != token["access_token"], "no new access token")
    check(refreshed.get("refresh_token") not in (None, token["refresh_token"]), "refresh token not rotated")
    if claims and "id_token" in refreshed:
        check(verified_id_token(refreshed["id_token"]).claims["sub"] == claims["sub"],
              "the refreshed ID token names another user")
    check(introspect(client, refreshed["access_token"]).get("active") is True, "new access token inactive")
    return {"scope": refreshed.get("scope"), "id_token": "id_token" in refreshed}


def case_rfc7662_introspection():
    client, token, claims = code_flow()
    access = introspect(client, token["access_token"])
    check(access.get("active") is True, "access token inactive")
    check(access.get("client_id") == setting("CLIENT_ID"), f"client_id {access.get('client_id')}")
    if claims:
        check(access.get("sub") == claims["sub"], f"sub {access.get('sub')}")
    check(introspect(client, token["refresh_token"]).get("active") is True, "refresh token inactive")
    check(introspect(client, "not-a-token").get("active") is False, "an unknown token reads active")
    return {"access": sorted(access)}


def case_rfc7009_revocation():
    client, token, _ = code_flow()
    response = client.revoke_token(
        metadata()["revocation_endpoint"], token=token["refresh_token"], token_type_hint="refresh_token"
    )
    check(response.status_code == 200, f"revocation answered {response.status_code}")
    check(introspect(client, token["refresh_token"]).get("active") is False, "revoked refresh token active")
    check(introspect(client, token["access_token"]).get("active") is False, "its family's access token active")
    return {}


class ShortLivedPrivateKeyJWT(PrivateKeyJWT):
    """authlib's PrivateKeyJWT with ES256, an audience of the endpoint called and a fresh
    5-minute `exp` per assertion: authlib's default lifetime is an hour, more than the service
    accepts (RFC 7523 leaves the bound to the server)."""

    alg = "ES256"

    def sign(self, auth, token_endpoint):
        self.claims = {"exp": int(time.time()) + 300}
        return super().sign(auth, token_endpoint)


def private_key():
    with open(setting("PRIVATE_KEY_FILE")) as file:
        return ECKey.import_key(json.load(file))


def register():
    """Writes a new EC P-256 key pair: the private JWK to PRIVATE_KEY_FILE (mode 0600), the
    public JWK Set to JWKS_OUT, for `tokenctl clients set-jwks`."""
    key = ECKey.generate_key("P-256", parameters={"use": "sig", "alg": "ES256"}, private=True)
    key.ensure_kid()
    descriptor = os.open(setting("PRIVATE_KEY_FILE"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(key.as_dict(private=True), file)
    with open(setting("JWKS_OUT"), "w") as file:
        json.dump({"keys": [key.as_dict(private=False)]}, file)
    return {"jwks_out": setting("JWKS_OUT"), "kid": key.kid}


def case_private_key_jwt():
    """client_credentials and introspection authenticated by a signed assertion; then the same
    assertion replayed, and one signed by another key: both `invalid_client`."""
    token_endpoint = metadata()["token_endpoint"]
    check("private_key_jwt" in metadata().get("token_endpoint_auth_methods_supported", []),
          "the metadata does not list private_key_jwt")
    client = OAuth2Session(setting("CLIENT_ID"), private_key(), token_endpoint_auth_method="private_key_jwt",
                           revocation_endpoint_auth_method="private_key_jwt")
    client.register_client_auth_method(ShortLivedPrivateKeyJWT())
    token = client.fetch_token(token_endpoint, grant_type="client_credentials")
    check(introspect(client, token["access_token"]).get("active") is True, "the access token reads inactive")

    def assertion_form(key):
        assertion = ShortLivedPrivateKeyJWT().sign(_Auth(key), token_endpoint)
        return {"grant_type": "client_credentials", "client_id": setting("CLIENT_ID"),
                "client_assertion_type": ASSERTION_TYPE, "client_assertion": assertion}

    form = assertion_form(private_key())
    first = requests.post(token_endpoint, data=form, timeout=10)
    check(first.status_code == 200, f"a fresh assertion answered {first.status_code} {first.text}")
    replay = requests.post(token_endpoint, data=form, timeout=10)
    check(replay.status_code in (400, 401) and replay.json().get("error") == "invalid_client",
          f"a replayed assertion answered {replay.status_code} {replay.text}")
    forged = assertion_form(ECKey.generate_key("P-256", private=True))
    other = requests.post(token_endpoint, data=forged, timeout=10)
    check(other.status_code in (400, 401) and other.json().get("error") == "invalid_client",
          f"an assertion by another key answered {other.status_code} {other.text}")
    return {"token_type": token["token_type"], "replay": replay.status_code, "other_key": other.status_code}


class _Auth:
    """What PrivateKeyJWT.sign reads from authlib's client auth: the client id and its key."""

    def __init__(self, key):
        self.client_id = setting("CLIENT_ID")
        self.client_secret = key


CASES = {
    "oidcc-server": case_oidcc_server,
    "oidcc-userinfo-get": case_oidcc_userinfo_get,
    "oidcc-userinfo-post-header": case_oidcc_userinfo_post_header,
    "oidcc-userinfo-post-body": case_oidcc_userinfo_post_body,
    "oidcc-refresh-token": case_oidcc_refresh_token,
    "rfc7662-introspection": case_rfc7662_introspection,
    "rfc7009-revocation": case_rfc7009_revocation,
    "private-key-jwt": case_private_key_jwt,
}


def describe(error):
    if isinstance(error, Failure):
        return {"message": str(error)}
    described = {"message": f"{type(error).__name__}: {error}"}
    for field in ("error", "description"):
        if getattr(error, field, None):
            described[field] = getattr(error, field)
    return described


def main():
    if os.environ.get("MODE") == "register":
        print(json.dumps(register()))
        return 0
    requested = [name.strip() for name in setting("CASE").split(",") if name.strip()]
    # `all` leaves out private-key-jwt unless its key was registered (PRIVATE_KEY_FILE).
    names = (
        [name for name in CASES if name != "private-key-jwt" or os.environ.get("PRIVATE_KEY_FILE")]
        if "all" in requested
        else requested
    )
    unknown = [name for name in names if name not in CASES]
    if unknown:
        print(f"rp.py: unknown case {', '.join(unknown)}; known: {', '.join(CASES)}", file=sys.stderr)
        return 2
    results = {}
    for name in names:
        try:
            results[name] = {"ok": True, **CASES[name]()}
        except Exception as error:  # every failure is reported, then the next case runs
            results[name] = {"ok": False, **describe(error)}
    print(json.dumps(results, indent=2))
    failed = [name for name in names if not results[name]["ok"]]
    if failed:
        print(f"rp.py: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
