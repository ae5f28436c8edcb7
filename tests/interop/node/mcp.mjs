// The official Model Context Protocol TypeScript SDK (@modelcontextprotocol/sdk) as a real agent:
// its own OAuth client code discovers the authorization server from a small MCP server's
// protected resource metadata (RFC 9728), registers itself (RFC 7591) or names itself by the URL
// of its client ID metadata document (`clientMetadataUrl`), authorizes with PKCE and
// a `resource` (RFC 8707), redeems the code, calls a tool, refreshes, and calls it again. The
// driver plays only the user, on the server's pages (./browser.mjs); the MCP server accepts a
// bearer token only when its signature verifies against the issuer's JWK Set and its `aud` names
// the MCP server (the resource).
//
//   ISSUER=http://127.0.0.1:8080 LOGIN=... PASSWORD=... CASE=mcp-dcr node tests/interop/node/mcp.mjs
//
// CASE=mcp-cimd also reads CLIENT_METADATA_URL (the document, which the caller serves) and
// REDIRECT_URI (one of the document's redirect_uris).
//
// RP_NODE_DIR: where `infra/relying-parties.sh node` installed the packages (default
// .cache/rp-node). Prints one JSON object, case name to result; exits 1 when a case failed.

import { createServer } from 'node:http';
import { createPublicKey, verify } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { Browser } from './browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const packagesDir = process.env.RP_NODE_DIR ?? join(here, '../../../.cache/rp-node');
const requireFromPackages = createRequire(join(packagesDir, 'package.json'));
const load = (name) => import(pathToFileURL(requireFromPackages.resolve(name)).href);
const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { auth, UnauthorizedError } = await load('@modelcontextprotocol/sdk/client/auth.js');
const { McpServer } = await load('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/server/streamableHttp.js');

class Failure extends Error {}
const check = (condition, message) => {
	if (!condition) throw new Failure(message);
};

function setting(name) {
	const value = process.env[name];
	if (!value) {
		console.error(`mcp.mjs: ${name} is not set`);
		process.exit(2);
	}
	return value;
}

const env = { issuer: setting('ISSUER').replace(/\/$/, ''), login: setting('LOGIN'), password: setting('PASSWORD') };
const SCOPES = ['openid', 'profile', 'offline_access'];

/** The claims of `token` if its ES256 signature verifies against `jwks`, else `undefined`. */
function verifiedClaims(token, jwks) {
	const [header, payload, signature] = token.split('.');
	if (!signature) return undefined;
	const { kid, alg } = JSON.parse(Buffer.from(header, 'base64url'));
	const jwk = jwks.keys.find((key) => key.kid === kid);
	if (!jwk || alg !== 'ES256') return undefined;
	const valid = verify('sha256', Buffer.from(`${header}.${payload}`), { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
	return valid ? JSON.parse(Buffer.from(payload, 'base64url')) : undefined;
}

/**
 * A minimal MCP server on loopback guarding `/mcp` with bearer tokens of `issuer`: its
 * protected resource metadata names the issuer; a token is accepted when it verifies, is
 * unexpired, comes from the issuer and has the server in `aud`. One tool, `whoami`, answers the
 * token's `sub` and `aud`. Returns `{ url, seen, close }`; `seen` lists the accepted tokens.
 */
async function startMcpServer(metadata) {
	const jwks = await (await fetch(metadata.jwks_uri)).json();
	const seen = [];
	const http = createServer(async (request, response) => {
		const base = `http://${request.headers.host}`;
		const resource = `${base}/mcp`;
		const path = new URL(request.url, base).pathname;
		if (path.startsWith('/.well-known/oauth-protected-resource')) {
			response.writeHead(200, { 'content-type': 'application/json' });
			response.end(JSON.stringify({ resource, authorization_servers: [env.issuer], scopes_supported: SCOPES, bearer_methods_supported: ['header'] }));
			return;
		}
		if (path !== '/mcp') {
			response.writeHead(404).end();
			return;
		}
		const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
		const claims = bearer && verifiedClaims(bearer, jwks);
		const audiences = [claims?.aud ?? []].flat();
		if (!claims || claims.iss !== metadata.issuer || claims.exp * 1000 <= Date.now() || !audiences.includes(resource)) {
			// Why, on stderr, for whoever reads a failed run; a first request has no token at all.
			if (bearer) console.error(`mcp.mjs: the MCP server refused a token: ${JSON.stringify(claims ?? 'bad signature')}`);
			response.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` });
			response.end(JSON.stringify({ error: 'invalid_token', claims: claims ?? null }));
			return;
		}
		seen.push(bearer);
		const chunks = [];
		for await (const chunk of request) chunks.push(chunk);
		const body = chunks.length ? JSON.parse(Buffer.concat(chunks)) : undefined;
		const server = new McpServer({ name: 'aud-checking server', version: '1.0.0' });
		server.registerTool('whoami', { description: "the caller's subject and audience" }, async () => ({
			content: [{ type: 'text', text: JSON.stringify({ sub: claims.sub, aud: claims.aud }) }],
		}));
		const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
		response.on('close', () => {
			transport.close();
			server.close();
		});
		await server.connect(transport);
		await transport.handleRequest(request, response, body);
	});
	await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
	const url = `http://127.0.0.1:${http.address().port}/mcp`;
	return { url, seen, close: () => new Promise((resolve) => http.close(resolve)) };
}

/** The SDK's client-side OAuth state, kept in memory: what an agent would persist. */
class MemoryProvider {
	constructor(redirectUrl) {
		this.redirectUrl = redirectUrl;
		this.saved = {};
	}
	get clientMetadata() {
		return {
			client_name: 'MCP SDK interop agent',
			redirect_uris: [this.redirectUrl],
			grant_types: ['authorization_code', 'refresh_token'],
			response_types: ['code'],
			token_endpoint_auth_method: 'none',
			scope: SCOPES.join(' '),
		};
	}
	clientInformation() { return this.saved.client; }
	saveClientInformation(client) { this.saved.client = client; }
	tokens() { return this.saved.tokens; }
	saveTokens(tokens) { this.saved.tokens = tokens; }
	redirectToAuthorization(url) { this.saved.authorizationUrl = url; }
	saveCodeVerifier(verifier) { this.saved.verifier = verifier; }
	codeVerifier() { return this.saved.verifier; }
}

/** Connects an SDK client to `url` with `provider` and calls `whoami`. */
async function whoami(url, provider) {
	const mcp = new Client({ name: 'interop agent', version: '1.0.0' });
	const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
	await mcp.connect(transport);
	try {
		const answer = await mcp.callTool({ name: 'whoami', arguments: {} });
		return JSON.parse(answer.content[0].text);
	} finally {
		await mcp.close();
	}
}

/**
 * The agent's whole run against a fresh MCP server: the first connection finds no token, so the
 * SDK discovers the authorization server and gets a client (`provider` decides how: registration,
 * or the URL of its metadata document), then the user signs in and approves on the pages, the
 * SDK redeems the code, calls a tool, refreshes, and calls it again. Answers what the test checks.
 */
async function authorizeCallRefresh(mcpServer, provider) {
	const mcp = new Client({ name: 'interop agent', version: '1.0.0' });
	const transport = new StreamableHTTPClientTransport(new URL(mcpServer.url), { authProvider: provider });
	let refused;
	try {
		await mcp.connect(transport);
	} catch (error) {
		refused = error;
	}
	check(refused instanceof UnauthorizedError, `the first connection is sent to authorize: ${refused}`);
	const client = provider.saved.client;
	check(client?.client_id, 'the SDK has a client_id');
	check(client.client_secret === undefined, 'a public client has no secret');
	const authorizationUrl = new URL(provider.saved.authorizationUrl);
	check(authorizationUrl.searchParams.get('client_id') === client.client_id, `the authorization request names that client: ${authorizationUrl}`);
	check(authorizationUrl.searchParams.get('resource') === mcpServer.url, `resource is the MCP server: ${authorizationUrl}`);
	check(authorizationUrl.searchParams.get('code_challenge_method') === 'S256', 'PKCE S256');

	const browser = new Browser();
	const landed = await browser.navigate(authorizationUrl, { serverOrigin: new URL(env.issuer).origin, stopAt: [provider.redirectUrl], ...env });
	check(landed.location, `the pages end at the agent's redirect: ${landed.status} ${landed.html?.slice(0, 300)}`);
	check(landed.pages.includes('consent'), 'a self-registered client is shown the consent page');
	const code = landed.location.searchParams.get('code');
	check(code, `a code: ${landed.location}`);
	await transport.finishAuth(code);
	const first = provider.saved.tokens;
	check(first?.access_token && first.refresh_token, 'an access and a refresh token');

	const caller = await whoami(mcpServer.url, provider);
	check([caller.aud].flat().includes(mcpServer.url), `the token's audience is the MCP server: ${JSON.stringify(caller)}`);

	// A refresh through the SDK's own path (a stored refresh token is used before a new
	// authorization), then the tool again with the new token.
	const refreshed = await auth(provider, { serverUrl: mcpServer.url });
	check(refreshed === 'AUTHORIZED', `the refresh authorized: ${refreshed}`);
	check(provider.saved.tokens.access_token !== first.access_token, 'a new access token');
	const again = await whoami(mcpServer.url, provider);
	check(again.sub === caller.sub, 'the same user after the refresh');
	check(mcpServer.seen.includes(provider.saved.tokens.access_token), 'the MCP server accepted the refreshed token');
	return { client_id: client.client_id, sub: caller.sub, aud: caller.aud };
}

/** Runs `run(mcpServer)` against a fresh MCP server guarded by the issuer's tokens. */
async function withMcpServer(run) {
	const metadata = await (await fetch(`${env.issuer}/.well-known/oauth-authorization-server`)).json();
	const mcpServer = await startMcpServer(metadata);
	try {
		return await run(mcpServer, metadata);
	} finally {
		await mcpServer.close();
	}
}

const cases = {
	// Dynamic registration, the code flow with PKCE and `resource`, a tool call, a refresh.
	async 'mcp-dcr'() {
		return withMcpServer(async (mcpServer) => {
			const provider = new MemoryProvider(`http://127.0.0.1:${new URL(mcpServer.url).port}/callback`);
			const result = await authorizeCallRefresh(mcpServer, provider);
			check(provider.saved.client.client_id_issued_at, 'the SDK registered itself');
			return result;
		});
	},
	// The same with a client ID metadata document (CLIENT_METADATA_URL, served by the test with
	// REDIRECT_URI among its redirect_uris): the SDK uses the URL as client_id, registers nothing.
	async 'mcp-cimd'() {
		return withMcpServer(async (mcpServer, metadata) => {
			check(metadata.client_id_metadata_document_supported === true, 'the server says it supports documents');
			const provider = new MemoryProvider(setting('REDIRECT_URI'));
			provider.clientMetadataUrl = setting('CLIENT_METADATA_URL');
			const result = await authorizeCallRefresh(mcpServer, provider);
			check(result.client_id === provider.clientMetadataUrl, `the document's URL is the client_id: ${result.client_id}`);
			return result;
		});
	},
};

function describe(error) {
	return { error: error instanceof Failure ? error.message : `${error?.name}: ${error?.message}`, stack: error instanceof Failure ? undefined : error?.stack };
}

const requested = setting('CASE').split(',').map((name) => name.trim()).filter(Boolean);
const names = requested.includes('all') ? Object.keys(cases) : requested;
const unknown = names.filter((name) => !cases[name]);
if (unknown.length) {
	console.error(`mcp.mjs: unknown case ${unknown.join(', ')}; known: ${Object.keys(cases).join(', ')}`);
	process.exit(2);
}
const results = {};
for (const name of names) {
	try {
		results[name] = { ok: true, ...(await cases[name]()) };
	} catch (error) {
		results[name] = { ok: false, ...describe(error) };
	}
}
console.log(JSON.stringify(results, null, 2));
if (names.some((name) => !results[name].ok)) process.exit(1);
