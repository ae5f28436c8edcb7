// openid-client 6 as a FAPI 2.0 Security Profile client, unchanged: `private_key_jwt` client
// authentication, a pushed authorization request (`buildAuthorizationUrlWithPAR`) carrying a
// DPoP proof (RFC 9449 §10.1), PKCE S256, RFC 9207 `iss` checked on the callback, DPoP-bound
// tokens, userinfo and a refresh with proofs. The user signs in through the real pages.
//
//   ISSUER=http://127.0.0.1:8080 CLIENT_ID=... PRIVATE_JWK='{"kty":"EC",...,"d":...,"kid":...}' \
//   REDIRECT_URI=... LOGIN=... PASSWORD=... SCOPE='openid read' node tests/interop/node/fapi2.mjs
//
// Prints one JSON object: `{"ok": true, ...facts}` or `{"ok": false, "message", ...}` (exit 1).
// RP_NODE_DIR: where `infra/relying-parties.sh node` installed the packages (default
// .cache/rp-node).

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { Browser } from './browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const packagesDir = process.env.RP_NODE_DIR ?? join(here, '../../../.cache/rp-node');
const requireFromPackages = createRequire(join(packagesDir, 'package.json'));
const load = (name) => import(pathToFileURL(requireFromPackages.resolve(name)).href);
const client = await load('openid-client');
const dpop = await load('dpop');

class Failure extends Error {}
const check = (condition, message) => {
	if (!condition) throw new Failure(message);
};

function setting(name) {
	const value = process.env[name];
	if (value === undefined || value === '') {
		console.error(`fapi2.mjs: ${name} is not set`);
		process.exit(2);
	}
	return value;
}

const env = {
	issuer: setting('ISSUER').replace(/\/$/, ''),
	clientId: setting('CLIENT_ID'),
	privateJwk: JSON.parse(setting('PRIVATE_JWK')),
	redirectUri: setting('REDIRECT_URI'),
	login: setting('LOGIN'),
	password: setting('PASSWORD'),
	scope: setting('SCOPE'),
};

async function run() {
	const { kid, ...jwk } = env.privateJwk;
	const key = await crypto.subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
	// Plain HTTP is allowed (the local server is on loopback); ID token signatures are verified
	// against the JWK Set.
	const config = await client.discovery(new URL(env.issuer), env.clientId, undefined,
		client.PrivateKeyJwt({ key, kid }),
		{ execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks] });
	const metadata = config.serverMetadata();
	check(metadata.pushed_authorization_request_endpoint, 'no pushed_authorization_request_endpoint');
	check(metadata.authorization_response_iss_parameter_supported === true, 'no RFC 9207 iss');
	check(metadata.dpop_signing_alg_values_supported?.includes('ES256'), 'no DPoP ES256');

	const keyPair = await client.randomDPoPKeyPair('ES256');
	const handle = client.getDPoPHandle(config, keyPair);
	const jkt = await dpop.calculateThumbprint(keyPair.publicKey);
	const verifier = client.randomPKCECodeVerifier();
	const state = client.randomState();
	const nonce = client.randomNonce();
	const params = {
		redirect_uri: env.redirectUri,
		scope: env.scope,
		code_challenge: await client.calculatePKCECodeChallenge(verifier),
		code_challenge_method: 'S256',
		state,
		nonce,
	};
	const browser = new Browser();
	const userAgent = { serverOrigin: new URL(env.issuer).origin, stopAt: [env.redirectUri], ...env };

	// The profile takes authorization requests only by reference: a plain one is the 400 page.
	const plain = await browser.request(client.buildAuthorizationUrl(config, params));
	check(plain.status === 400 && !plain.headers.get('location'), `a request not pushed answered ${plain.status}`);

	const url = await client.buildAuthorizationUrlWithPAR(config, params, { DPoP: handle });
	check([...url.searchParams.keys()].sort().join(',') === 'client_id,request_uri', `authorize URL ${url}`);
	const visit = await browser.navigate(url, userAgent);
	check(visit.location?.href.startsWith(env.redirectUri), `the flow ended on ${visit.status ?? visit.location}`);
	const tokens = await client.authorizationCodeGrant(config, visit.location,
		{ pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true },
		undefined, { DPoP: handle });
	check(tokens.token_type.toLowerCase() === 'dpop', `token_type ${tokens.token_type}`);
	const access = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url'));
	check(access.cnf?.jkt === jkt, `cnf ${JSON.stringify(access.cnf)}, key ${jkt}`);
	const claims = tokens.claims();
	const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub, { DPoP: handle });

	const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token, undefined, { DPoP: handle });
	check(refreshed.token_type.toLowerCase() === 'dpop', `refreshed token_type ${refreshed.token_type}`);
	return {
		ok: true,
		iss: visit.location.searchParams.get('iss'),
		sub: claims.sub,
		userinfo_sub: userinfo.sub,
		jkt,
		refresh_token_kept: refreshed.refresh_token === tokens.refresh_token,
		scope: tokens.scope,
	};
}

try {
	console.log(JSON.stringify(await run()));
} catch (error) {
	const { error: code, error_description: description, status } = error;
	console.log(JSON.stringify({ ok: false, message: String(error.message ?? error), error: code,
		error_description: description, status, cause: error.cause?.message ?? error.cause }));
	process.exit(1);
}
