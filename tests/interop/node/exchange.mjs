// openid-client 6's generic grant request as an RFC 8693 token exchange client, unchanged: a
// service holding a user's access token exchanges it for one meant for another resource, first
// alone, then with an actor token (delegation: `act`).
//
//   ISSUER=http://127.0.0.1:8080 CLIENT_ID=... CLIENT_SECRET=... SUBJECT_TOKEN=... \
//   ACTOR_TOKEN=... RESOURCE=https://api.example.com node tests/interop/node/exchange.mjs
//
// Prints one JSON object: `{"ok": true, "exchanged": {...}, "delegated": {...}}` (each the token
// response's `access_token`, `issued_token_type`, `token_type`, `scope`, `expires_in`, whether a
// refresh token came), or `{"ok": false, ...}` and exit 1. RP_NODE_DIR: where
// `infra/relying-parties.sh node` installed the packages (default .cache/rp-node).

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const packagesDir = process.env.RP_NODE_DIR ?? join(here, '../../../.cache/rp-node');
const requireFromPackages = createRequire(join(packagesDir, 'package.json'));
const client = await import(pathToFileURL(requireFromPackages.resolve('openid-client')).href);

function setting(name) {
	const value = process.env[name];
	if (value === undefined || value === '') {
		console.error(`exchange.mjs: ${name} is not set`);
		process.exit(2);
	}
	return value;
}

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

const summary = (response) => ({
	access_token: response.access_token,
	issued_token_type: response.issued_token_type,
	token_type: response.token_type,
	scope: response.scope ?? null,
	expires_in: response.expires_in,
	refresh_token: response.refresh_token !== undefined,
});

try {
	const config = await client.discovery(new URL(setting('ISSUER')), setting('CLIENT_ID'), undefined,
		client.ClientSecretBasic(setting('CLIENT_SECRET')), { execute: [client.allowInsecureRequests] });
	const request = {
		subject_token: setting('SUBJECT_TOKEN'),
		subject_token_type: ACCESS_TOKEN,
		resource: setting('RESOURCE'),
		requested_token_type: ACCESS_TOKEN,
	};
	const exchanged = await client.genericGrantRequest(config, GRANT, request);
	const delegated = await client.genericGrantRequest(config, GRANT, {
		...request,
		actor_token: setting('ACTOR_TOKEN'),
		actor_token_type: ACCESS_TOKEN,
	});
	console.log(JSON.stringify({ ok: true, exchanged: summary(exchanged), delegated: summary(delegated) }));
} catch (error) {
	console.log(JSON.stringify({ ok: false, message: String(error.message ?? error), error: error.error,
		error_description: error.error_description, status: error.status }));
	process.exit(1);
}
