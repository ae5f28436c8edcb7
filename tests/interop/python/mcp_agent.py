"""The official Model Context Protocol Python SDK (`mcp` on PyPI) as a real agent: its own OAuth
client discovers the authorization server from an MCP server's protected resource metadata
(RFC 9728), registers itself (RFC 7591) or names itself by the URL of its client ID metadata
document (`client_metadata_url`), authorizes with PKCE and `resource` (RFC 8707), redeems
the code and calls a tool; then a second connection refreshes. The MCP server is the SDK's own
(MCPServer), accepting a bearer token only when it verifies against the issuer's JWK Set and its
`aud` names the server. The driver plays only the user, on the server's pages (browser.py).

    ISSUER=http://127.0.0.1:8080 LOGIN=... PASSWORD=... CASE=mcp-python-dcr \
    .cache/rp-venv/bin/python tests/interop/python/mcp_agent.py

CASE=mcp-python-cimd also reads CLIENT_METADATA_URL (the document, which the caller serves) and
REDIRECT_URI (one of the document's redirect_uris).

Prints one JSON object, case name to result; exits 1 when a case failed, 2 on a usage error.
"""

import asyncio
import json
import os
import socket
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

import httpx2
import uvicorn
from joserfc import jwt
from joserfc.jwk import KeySet
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

# The user agent beside this file, imported without leaving __pycache__ in the work tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser  # noqa: E402

SCOPES = ["openid", "profile", "offline_access"]


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def setting(name):
    value = os.environ.get(name)
    if not value:
        print(f"mcp_agent.py: {name} is not set", file=sys.stderr)
        sys.exit(2)
    return value


ISSUER = setting("ISSUER").rstrip("/")


class JwtVerifier:
    """The MCP server's check of a bearer token: an ES256 signature by a key of the issuer's JWK
    Set, the issuer, an unexpired `exp`, and `aud` naming `resource`."""

    def __init__(self, jwks, resource):
        self.keys = KeySet.import_key_set(jwks)
        self.resource = resource

    async def verify_token(self, token):
        try:
            claims = jwt.decode(token, self.keys, algorithms=["ES256"]).claims
        except Exception as error:  # noqa: BLE001 - any undecodable token is simply refused
            print(f"mcp_agent.py: refused a token: {error}", file=sys.stderr)
            return None
        audiences = claims.get("aud")
        audiences = audiences if isinstance(audiences, list) else [audiences]
        if claims.get("iss") != ISSUER or claims.get("exp", 0) <= time.time() or self.resource not in audiences:
            print(f"mcp_agent.py: refused a token: {claims}", file=sys.stderr)
            return None
        return AccessToken(token=token, client_id=claims["client_id"], scopes=claims.get("scope", "").split(),
                           expires_at=claims["exp"], resource=self.resource, subject=claims["sub"], claims=claims)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_mcp_server(metadata):
    """The SDK's MCPServer on a loopback port, in a thread: its protected resource metadata
    names the issuer; `whoami` answers the token's subject and resource. Returns its URL."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    jwks = httpx2.get(metadata["jwks_uri"]).json()
    server = MCPServer("aud-checking server", token_verifier=JwtVerifier(jwks, resource),
                       auth=AuthSettings(issuer_url=ISSUER, resource_server_url=resource,
                                         validate_token_resource=True))

    @server.tool()
    def whoami() -> str:
        """The caller's subject and the resource its token is for."""
        token = get_access_token()
        return json.dumps({"sub": token.subject, "aud": token.claims.get("aud")})

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    uvicorn_server = uvicorn.Server(config)
    threading.Thread(target=uvicorn_server.run, daemon=True).start()
    for _ in range(100):
        if uvicorn_server.started:
            return resource, uvicorn_server
        time.sleep(0.05)
    raise Failure("the MCP server did not start")


class MemoryStorage:
    """The SDK's token storage, in memory: what an agent would persist."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client = client_info


class User:
    """The person at the browser: opens the authorization URL the SDK hands over, signs in and
    approves on the server's pages, and hands the code back."""

    def __init__(self, redirect_uri):
        self.redirect_uri = redirect_uri
        self.authorization_url = None
        self.visit = None

    async def open(self, url):
        self.authorization_url = url
        browser = Browser(ISSUER, [self.redirect_uri])
        self.visit = await asyncio.to_thread(browser.navigate, url, setting("LOGIN"), setting("PASSWORD"))

    async def come_back(self):
        check(self.visit and self.visit.location,
              f"the pages end at the agent's redirect: {self.visit and (self.visit.status, self.visit.html[:300])}")
        query = parse_qs(urlsplit(self.visit.location).query)
        check("code" in query, f"a code: {self.visit.location} (asked: {self.authorization_url})")
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0],
                                       iss=query.get("iss", [None])[0])


async def whoami(url, provider):
    """Connects the SDK's client to `url` through `provider`'s OAuth and calls `whoami`."""
    async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            answer = await client.call_tool("whoami", {})
    return json.loads(answer.content[0].text)


async def authorize_call_refresh(client_metadata_url=None, redirect_uri=None):
    """The agent's whole run against a fresh MCP server: the first connection finds no token, so
    the SDK discovers the authorization server and gets a client (registration, or the URL of its
    metadata document when `client_metadata_url` is given), the user signs in and approves, the
    SDK redeems the code and calls a tool; the access token then expires and the next connection
    refreshes. Answers what the test checks."""
    metadata = httpx2.get(f"{ISSUER}/.well-known/oauth-authorization-server").json()
    if client_metadata_url:
        check(metadata.get("client_id_metadata_document_supported") is True,
              "the server says it supports documents")
    resource, mcp_server = start_mcp_server(metadata)
    try:
        redirect_uri = redirect_uri or f"http://127.0.0.1:{free_port()}/callback"
        user = User(redirect_uri)
        storage = MemoryStorage()
        provider = OAuthClientProvider(
            server_url=resource,
            client_metadata=OAuthClientMetadata(
                client_name="MCP Python SDK interop agent", redirect_uris=[redirect_uri],
                grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                token_endpoint_auth_method="none", scope=" ".join(SCOPES)),
            storage=storage, redirect_handler=user.open, callback_handler=user.come_back,
            client_metadata_url=client_metadata_url)
        caller = await whoami(resource, provider)
        check(storage.client and storage.client.client_id, "the SDK has a client_id")
        check(storage.client.client_secret is None, "a public client has no secret")
        query = parse_qs(urlsplit(user.authorization_url).query)
        check(query.get("client_id") == [storage.client.client_id],
              f"the authorization request names that client: {user.authorization_url}")
        check(query.get("resource") == [resource], f"resource is the MCP server: {user.authorization_url}")
        check(query.get("code_challenge_method") == ["S256"], "PKCE S256")
        check("consent" in user.visit.pages, "a self-registered client is shown the consent page")
        check(caller["aud"] == resource, f"the token's audience is the MCP server: {caller}")
        first = storage.tokens
        check(first.refresh_token, "a refresh token")

        # The access token expires: the SDK refreshes it on the next connection.
        storage.tokens = first.model_copy(update={"expires_in": 0})
        provider.context.update_token_expiry(storage.tokens)
        again = await whoami(resource, provider)
        check(storage.tokens.access_token != first.access_token, "a new access token after the refresh")
        check(again["sub"] == caller["sub"], "the same user after the refresh")
        return {"client_id": storage.client.client_id, "sub": caller["sub"], "aud": caller["aud"],
                "issued_at": storage.client.client_id_issued_at}
    finally:
        mcp_server.should_exit = True


async def case_dcr():
    """Dynamic registration."""
    result = await authorize_call_refresh()
    check(result.pop("issued_at"), "the SDK registered itself")
    return result


async def case_cimd():
    """A client ID metadata document (CLIENT_METADATA_URL, served by the caller with REDIRECT_URI
    among its redirect_uris): the URL is the client_id, nothing is registered."""
    url = setting("CLIENT_METADATA_URL")
    result = await authorize_call_refresh(url, setting("REDIRECT_URI"))
    check(result.pop("issued_at") is None, "nothing registered")
    check(result["client_id"] == url, f"the document's URL is the client_id: {result['client_id']}")
    return result


CASES = {"mcp-python-dcr": case_dcr, "mcp-python-cimd": case_cimd}


def main():
    names = [name.strip() for name in setting("CASE").split(",") if name.strip()]
    names = list(CASES) if "all" in names else names
    unknown = [name for name in names if name not in CASES]
    if unknown:
        print(f"mcp_agent.py: unknown case {', '.join(unknown)}; known: {', '.join(CASES)}", file=sys.stderr)
        sys.exit(2)
    results = {}
    for name in names:
        try:
            results[name] = {"ok": True, **asyncio.run(CASES[name]())}
        except Exception as error:  # noqa: BLE001 - every failure is reported as the case's result
            results[name] = {"ok": False, "error": f"{type(error).__name__}: {error}"}
    print(json.dumps(results, indent=2))
    if any(not result["ok"] for result in results.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
