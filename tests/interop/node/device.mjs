// openid-client 6's device authorization grant (RFC 8628) against the token service, unchanged:
// discovery, `initiateDeviceAuthorization`, then `pollDeviceAuthorizationGrant` until the user
// has decided on the verification page (someone else plays the user: the Rust test does, in
// Chromium).
//
//   ISSUER=http://127.0.0.1:8080 CLIENT_ID=... [CLIENT_SECRET=...] SCOPE='openid read' \
//   node tests/interop/node/device.mjs
//
// Without CLIENT_SECRET the client is public (openid-client's `None()`: `client_id` alone).
// Prints two JSON lines: what a device shows its user (`user_code`, `verification_uri`,
// `verification_uri_complete`, `expires_in`, `interval`) as soon as the codes are issued, then
// the outcome of the polling: `{"ok": true, "access_token", "refresh_token", "id_token",
// "claims", "scope", "token_type"}`, or `{"ok": false, "error", "message"}` and exit 1.
// RP_NODE_DIR: where `infra/relying-parties.sh node` installed the packages (default
// .cache/rp-node).

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const packagesDir = process.env.RP_NODE_DIR ?? join(here, '../../../.cache/rp-node');
const requireFromPackages = createRequire(join(packagesDir, 'package.json'));
const client = await import(pathToFileURL(requireFromPackages.resolve('openid-client')).href);

function setting(name, fallback) {
	const value = process.env[name] ?? fallback;
	if (value === undefined || value === '') {
		console.error(`device.mjs: ${name} is not set`);
		process.exit(2);
	}
	return value;
}

const issuer = setting('ISSUER').replace(/\/$/, '');
const clientId = setting('CLIENT_ID');
const secret = process.env.CLIENT_SECRET;
const scope = setting('SCOPE', 'openid');

const line = (value) => new Promise((done) => process.stdout.write(`${JSON.stringify(value)}\n`, done));

try {
	// As rp.mjs: plain HTTP allowed (the local server is on loopback), ID token signatures
	// verified against the JWK Set.
	const config = await client.discovery(new URL(issuer), clientId, undefined,
		secret ? client.ClientSecretBasic(secret) : client.None(),
		{ execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks] });
	const codes = await client.initiateDeviceAuthorization(config, { scope });
	await line({
		user_code: codes.user_code,
		verification_uri: codes.verification_uri,
		verification_uri_complete: codes.verification_uri_complete,
		expires_in: codes.expires_in,
		interval: codes.interval,
	});
	const tokens = await client.pollDeviceAuthorizationGrant(config, codes);
	await line({
		ok: true,
		access_token: tokens.access_token,
		refresh_token: tokens.refresh_token ?? null,
		id_token: tokens.id_token ?? null,
		claims: tokens.claims() ?? null,
		scope: tokens.scope ?? null,
		token_type: tokens.token_type,
	});
} catch (error) {
	await line({ ok: false, error: error.error ?? error.code ?? error.name, message: String(error.message ?? error) });
	process.exit(1);
}
