"""Enterprise-managed authorization (SEP-990) with the official MCP Python SDK (`mcp` 2.3.0).

The agent holds an ID token from the company's identity provider. It trades it there for an
Identity Assertion Authorization Grant (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant)
by RFC 8693 token exchange, and the SDK's `IdentityAssertionOAuthProvider` presents that grant to
the MCP server's authorization server (RFC 7523 jwt-bearer) for an access token. The MCP server
is the SDK's own MCPServer, served from this process, accepting a bearer token only when it is an
ES256 `at+jwt` of the authorization server for this server's resource.

    IDP_TOKEN_ENDPOINT=... IDP_CLIENT_ID=... IDP_CLIENT_SECRET=... ID_TOKEN=... \
    AS_ISSUER=... AS_CLIENT_ID=... AS_CLIENT_SECRET=... MCP_PORT=... [SCOPE='a b'] \
    .cache/rp-venv/bin/python tests/interop/python/enterprise_auth.py

Prints one JSON object on stdout and exits 0; any failure exits 1 with a message on stderr (2 on
a usage error). Client secrets are never printed.
"""

import asyncio
import json
import os
import sys
import threading
import time

import httpx2
import jwt
import uvicorn
from mcp import Client
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.shared.auth_utils import resource_url_from_server_url

ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def setting(name, required=True):
    value = os.environ.get(name)
    if required and not value:
        print(f"enterprise_auth.py: {name} is not set", file=sys.stderr)
        sys.exit(2)
    return value


IDP_TOKEN_ENDPOINT = setting("IDP_TOKEN_ENDPOINT")
AS_ISSUER = setting("AS_ISSUER")
SCOPE = setting("SCOPE", required=False) or None
SERVER_URL = f"http://127.0.0.1:{int(setting('MCP_PORT'))}/mcp"
# The resource identifier exactly as the SDK's client derives it, so that the server checks `aud`
# against what the client asked for.
RESOURCE = resource_url_from_server_url(SERVER_URL)


class Failure(Exception):
    pass


class JwtVerifier:
    """The MCP server's bearer check (RFC 9068): `typ` at+jwt, an ES256 signature by a key of the
    authorization server's JWK Set (found through its RFC 8414 metadata), `iss`, `exp`, and an
    `aud` naming this server. Anything else is refused, which the SDK answers with a 401."""

    def __init__(self):
        metadata_url = f"{AS_ISSUER.rstrip('/')}/.well-known/oauth-authorization-server"
        metadata = httpx2.get(metadata_url).raise_for_status().json()
        self.jwks_uri = metadata["jwks_uri"]
        self.keys = self.fetch_keys()

    def fetch_keys(self):
        return jwt.PyJWKSet.from_dict(httpx2.get(self.jwks_uri).raise_for_status().json())

    async def verify_token(self, token):
        try:
            header = jwt.get_unverified_header(token)
            if header.get("typ", "").lower() not in ("at+jwt", "application/at+jwt"):
                raise jwt.InvalidTokenError(f"typ {header.get('typ')!r} is not at+jwt")
            try:
                key = self.keys[header.get("kid")]
            except KeyError:  # a key the authorization server added since: read the set again
                self.keys = await asyncio.to_thread(self.fetch_keys)
                key = self.keys[header.get("kid")]
            claims = jwt.decode(token, key, algorithms=["ES256"], issuer=AS_ISSUER, audience=RESOURCE,
                                options={"require": ["exp", "iss", "aud", "sub"]})
            return AccessToken(token=token, client_id=claims["client_id"], scopes=claims.get("scope", "").split(),
                               expires_at=claims["exp"], resource=RESOURCE, subject=claims["sub"], claims=claims)
        except Exception as error:  # noqa: BLE001 - any token that fails a check is simply refused
            print(f"enterprise_auth.py: the MCP server refused a token: {type(error).__name__}: {error}",
                  file=sys.stderr)
            return None


def start_mcp_server():
    """The SDK's MCPServer with its bearer authentication, streamable HTTP, in a thread."""
    server = MCPServer("enterprise-auth test server", token_verifier=JwtVerifier(),
                       auth=AuthSettings(issuer_url=AS_ISSUER, resource_server_url=RESOURCE,
                                         validate_token_resource=True))

    @server.tool()
    def whoami() -> str:
        """The verified claims of the caller's access token."""
        claims = get_access_token().claims
        return json.dumps({name: claims.get(name) for name in ("sub", "client_id", "scope", "aud", "iss")})

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    uvicorn_server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=int(setting("MCP_PORT")),
                                                   log_level="warning"))
    threading.Thread(target=uvicorn_server.run, daemon=True).start()
    for _ in range(200):
        if uvicorn_server.started:
            return uvicorn_server
        time.sleep(0.05)
    raise Failure(f"the MCP server did not start on {SERVER_URL}")


class MemoryStorage:
    """The SDK's TokenStorage, in memory: where an agent would persist its tokens."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


class IdentityProvider:
    """Leg 1, which the SDK leaves to the deployment: RFC 8693 token exchange of the ID token for
    an ID-JAG at the identity provider. Records each answer and the first failure, since the SDK's
    transport turns an exception raised in its auth flow into a JSON-RPC error of its own."""

    def __init__(self):
        self.answer = None
        self.failure = None

    async def fetch_id_jag(self, audience, resource):
        form = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "requested_token_type": ID_JAG,
                "subject_token": setting("ID_TOKEN"), "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                "audience": audience, "resource": resource, "client_id": setting("IDP_CLIENT_ID"),
                "client_secret": setting("IDP_CLIENT_SECRET"), **({"scope": SCOPE} if SCOPE else {})}
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(IDP_TOKEN_ENDPOINT, data=form)
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code != 200 or body.get("issued_token_type") != ID_JAG or body.get("token_type") != "N_A":
            self.failure = f"the ID-JAG token exchange answered {response.status_code}: {response.text}"
            raise Failure(self.failure)
        self.answer = body
        return body["access_token"]


def describe(error):
    """An exception, with the members of anyio's exception groups spelled out."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"


async def run():
    mcp_server = start_mcp_server()
    try:
        idp, storage = IdentityProvider(), MemoryStorage()
        provider = IdentityAssertionOAuthProvider(
            server_url=SERVER_URL, storage=storage, client_id=setting("AS_CLIENT_ID"),
            client_secret=setting("AS_CLIENT_SECRET"), issuer=AS_ISSUER,
            assertion_provider=idp.fetch_id_jag, scope=SCOPE)
        # SDK 2.x: auth is an httpx2.Auth on the httpx2 client the streamable HTTP transport uses.
        try:
            async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
                async with Client(streamable_http_client(SERVER_URL, http_client=http)) as client:
                    tools = await client.list_tools()
                    answer = await client.call_tool("whoami", {})
        except Exception as error:  # noqa: BLE001 - reported with the recorded cause, if any
            raise Failure(idp.failure or f"the MCP session failed: {describe(error)}") from None
        if idp.failure:
            raise Failure(idp.failure)
        if answer.is_error:
            raise Failure(f"whoami failed: {answer.content}")
        if storage.tokens is None or idp.answer is None:
            raise Failure("the SDK connected without an ID-JAG and an access token")

        # The negative check: a token that is plainly no JWT is answered 401, in the SDK's way.
        async with httpx2.AsyncClient(timeout=30) as http:
            refused = await http.post(SERVER_URL, headers={"Authorization": "Bearer not-a-jwt",
                                                           "Accept": "application/json, text/event-stream"},
                                      json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        if refused.status_code != 401:
            raise Failure(f"an invalid bearer token was answered {refused.status_code}: {refused.text}")

        unverified = {"verify_signature": False}
        id_jag = idp.answer["access_token"]
        return {
            "resource": RESOURCE,
            "id_jag_answer": {name: idp.answer.get(name) for name in ("issued_token_type", "token_type", "expires_in")},
            "id_jag_header": jwt.get_unverified_header(id_jag),
            "id_jag_claims": jwt.decode(id_jag, options=unverified),
            "access_token_claims": jwt.decode(storage.tokens.access_token, options=unverified),
            "token_type": storage.tokens.token_type,
            "tools": [tool.name for tool in tools.tools],
            "whoami": json.loads(answer.content[0].text),
            "invalid_token_status": refused.status_code,
        }
    finally:
        mcp_server.should_exit = True


def main():
    try:
        result = asyncio.run(run())
    except Exception as error:  # noqa: BLE001 - every failure is one message and exit 1
        print(f"enterprise_auth.py: {error if isinstance(error, Failure) else describe(error)}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
