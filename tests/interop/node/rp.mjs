// A standard OpenID Connect relying party, openid-client 6 (on oauth4webapi), driving the token
// service as a real application would; plus the `dpop` package for a hand-built DPoP proof.
//
//   ISSUER=http://127.0.0.1:8080 CLIENT_ID=... CLIENT_SECRET=... REDIRECT_URI=... \
//   LOGIN=... PASSWORD=... SCOPE='openid profile' CASE=oidcc-server,oidcc-refresh-token \
//   node tests/interop/node/rp.mjs
//
// CASE: a comma-separated list of the case names below, or `all`. Optional:
// POST_LOGOUT_REDIRECT_URI (the logout case), RP_NODE_DIR (where `infra/relying-parties.sh node`
// installed the packages; default .cache/rp-node). Prints one JSON object, case name to result;
// exits 1 when any case failed, 2 on a usage error. Each case starts from its own sign-in.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

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

function setting(name, fallback) {
	const value = process.env[name] ?? fallback;
	if (value === undefined || value === '') {
		console.error(`rp.mjs: ${name} is not set`);
		process.exit(2);
	}
	return value;
}

const env = {
	issuer: setting('ISSUER').replace(/\/$/, ''),
	clientId: setting('CLIENT_ID'),
	clientSecret: setting('CLIENT_SECRET'),
	redirectUri: setting('REDIRECT_URI'),
	login: setting('LOGIN'),
	password: setting('PASSWORD'),
	scope: setting('SCOPE', 'openid profile'),
};
const openidScope = env.scope.split(' ').includes('openid');
const userAgent = { serverOrigin: new URL(env.issuer).origin, stopAt: [env.redirectUri], ...env };

// Discovery, with plain HTTP allowed (the local server is on loopback) and ID token signatures
// verified against the JWK Set, not only trusted from the TLS-less token response.
let discovered;
function configuration() {
	discovered ??= client.discovery(new URL(env.issuer), env.clientId, undefined,
		client.ClientSecretBasic(env.clientSecret),
		{ execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks] });
	return discovered;
}

/**
 * The authorization code flow with PKCE S256, state and nonce: the browser signs in and
 * answers consent, and openid-client redeems the callback URL (checking `iss` when the server
 * advertises RFC 9207, state, the ID token and its nonce).
 */
async function codeFlow({ browser = new Browser(), params = {}, dpopHandle, maxAge } = {}) {
	const config = await configuration();
	const verifier = client.randomPKCECodeVerifier();
	const state = client.randomState();
	const nonce = client.randomNonce();
	const url = client.buildAuthorizationUrl(config, {
		redirect_uri: env.redirectUri,
		scope: env.scope,
		code_challenge: await client.calculatePKCECodeChallenge(verifier),
		code_challenge_method: 'S256',
		state,
		nonce,
		...params,
	});
	const visit = await browser.navigate(url, userAgent);
	check(visit.location, `the authorize flow ended on a ${visit.status} page, not a redirect`);
	check(visit.location.href.startsWith(env.redirectUri), `redirected to ${visit.location}`);
	const checks = { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce,
		idTokenExpected: openidScope, maxAge };
	const tokens = await client.authorizationCodeGrant(config, visit.location, checks, undefined,
		dpopHandle ? { DPoP: dpopHandle } : undefined);
	return { config, browser, tokens, callback: visit.location, checks, pages: visit.pages };
}

function idTokenClaims(tokens) {
	const claims = tokens.claims();
	check(claims, 'no id_token in the token response');
	return claims;
}

async function introspect(config, token) {
	return client.tokenIntrospection(config, token);
}

async function refusal(promise, what) {
	try {
		await promise;
	} catch (error) {
		return { error: error.error ?? error.code, status: error.status };
	}
	throw new Failure(`${what} succeeded`);
}

// GET without following: the status and Location of the answer.
async function peek(url, browser = new Browser()) {
	const response = await browser.request(url);
	return { status: response.status, location: response.headers.get('location') };
}

const cases = {
	async discovery() {
		const config = await configuration();
		const m = config.serverMetadata();
		check(m.issuer === env.issuer, `issuer ${m.issuer}`);
		for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri']) check(m[field], `no ${field}`);
		return { issuer: m.issuer, iss_parameter: m.authorization_response_iss_parameter_supported ?? false,
			userinfo_endpoint: m.userinfo_endpoint ?? null, end_session_endpoint: m.end_session_endpoint ?? null };
	},

	async 'oidcc-server'() {
		const { tokens } = await codeFlow();
		const claims = idTokenClaims(tokens);
		check(claims.aud === env.clientId || claims.aud.includes?.(env.clientId), `aud ${claims.aud}`);
		check(tokens.refresh_token, 'no refresh_token');
		return { token_type: tokens.token_type, scope: tokens.scope, sub: claims.sub,
			id_token_claims: Object.keys(claims).sort() };
	},

	async 'rfc9207-iss'() {
		const config = await configuration();
		check(config.serverMetadata().authorization_response_iss_parameter_supported === true,
			'authorization_response_iss_parameter_supported is not true');
		const { callback } = await codeFlow();
		check(callback.searchParams.get('iss') === env.issuer, `success redirect iss ${callback.searchParams.get('iss')}`);
		// prompt=consent: the approval above is remembered, and only a consent page can be denied.
		const url = client.buildAuthorizationUrl(config, { redirect_uri: env.redirectUri, scope: env.scope, state: 's', prompt: 'consent' });
		const denied = await new Browser().navigate(url, { ...userAgent, decision: 'deny' });
		const params = denied.location?.searchParams;
		check(params?.get('error') === 'access_denied', `denial redirect ${denied.location}`);
		check(params.get('iss') === env.issuer, `denial redirect iss ${params.get('iss')}`);
		return { success_iss: callback.searchParams.get('iss'), error_iss: params.get('iss') };
	},

	async 'oidcc-userinfo-get'() {
		const { config, tokens } = await codeFlow();
		const sub = idTokenClaims(tokens).sub;
		const info = await client.fetchUserInfo(config, tokens.access_token, sub);
		return { claims: Object.keys(info).sort() };
	},

	async 'oidcc-userinfo-post-header'() {
		const { config, tokens } = await codeFlow();
		const sub = idTokenClaims(tokens).sub;
		const { userinfo_endpoint: userinfo } = config.serverMetadata();
		check(userinfo, 'the metadata has no userinfo_endpoint');
		const endpoint = new URL(userinfo);
		const response = await client.fetchProtectedResource(config, tokens.access_token, endpoint, 'POST');
		check(response.status === 200, `POST userinfo answered ${response.status}`);
		const info = await response.json();
		check(info.sub === sub, `userinfo sub ${info.sub}, ID token sub ${sub}`);
		return { claims: Object.keys(info).sort() };
	},

	async 'oidcc-refresh-token'() {
		const { config, tokens } = await codeFlow();
		const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
		check(refreshed.access_token && refreshed.access_token !== tokens.access_token, 'no new access token');
		check(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token, 'refresh token not rotated');
		if (refreshed.id_token) {
			check(refreshed.claims().sub === idTokenClaims(tokens).sub, 'refreshed ID token names another user');
		}
		check((await introspect(config, refreshed.access_token)).active === true, 'new access token inactive');
		return { scope: refreshed.scope, id_token: Boolean(refreshed.id_token) };
	},

	async 'rfc7662-introspection'() {
		const { config, tokens } = await codeFlow();
		const access = await introspect(config, tokens.access_token);
		check(access.active === true, 'access token inactive');
		check(access.client_id === env.clientId, `client_id ${access.client_id}`);
		if (tokens.id_token) check(access.sub === idTokenClaims(tokens).sub, `sub ${access.sub}`);
		const refresh = await introspect(config, tokens.refresh_token);
		check(refresh.active === true, 'refresh token inactive');
		const unknown = await introspect(config, 'not-a-token');
		check(unknown.active === false, 'an unknown token reads active');
		return { access: Object.keys(access).sort(), refresh_token_type: refresh.token_type ?? null };
	},

	async 'rfc7009-revocation'() {
		const { config, tokens } = await codeFlow();
		await client.tokenRevocation(config, tokens.refresh_token, { token_type_hint: 'refresh_token' });
		check((await introspect(config, tokens.refresh_token)).active === false, 'revoked refresh token active');
		check((await introspect(config, tokens.access_token)).active === false, 'its family\'s access token active');
		const refused = await refusal(client.refreshTokenGrant(config, tokens.refresh_token), 'refresh after revocation');
		check(refused.error === 'invalid_grant', `refresh after revocation: ${refused.error}`);
		return { refresh_after_revocation: refused.error };
	},

	async 'oidcc-codereuse'() {
		const { config, tokens, callback, checks } = await codeFlow();
		const refused = await refusal(client.authorizationCodeGrant(config, callback, checks), 'a second redemption');
		// RFC 6749 says invalid_grant; the service's error catalogue fixes code 103 (a used code)
		// as invalid_request. Either refuses; the OpenID Foundation module wants invalid_grant.
		check(['invalid_grant', 'invalid_request'].includes(refused.error), `second redemption: ${refused.error}`);
		check((await introspect(config, tokens.access_token)).active === false,
			'the first redemption\'s access token is still active');
		return { second_redemption: refused.error };
	},

	async 'oidcc-ensure-redirect-uri-in-authorization-request'() {
		const config = await configuration();
		const url = client.buildAuthorizationUrl(config, { scope: env.scope, state: 's', nonce: 'n' });
		const answer = await peek(url);
		check(answer.status === 400 && !answer.location, `answered ${answer.status} ${answer.location ?? ''}`);
		return answer;
	},

	async 'oidcc-ensure-registered-redirect-uri'() {
		const config = await configuration();
		const url = client.buildAuthorizationUrl(config, { redirect_uri: `${env.redirectUri}/not-registered`,
			scope: env.scope, state: 's', nonce: 'n' });
		const answer = await peek(url);
		check(answer.status === 400 && !answer.location, `answered ${answer.status} ${answer.location ?? ''}`);
		return answer;
	},

	async 'oidcc-prompt-login'() {
		const first = await codeFlow();
		const before = Math.floor(Date.now() / 1000);
		const second = await codeFlow({ browser: first.browser, params: { prompt: 'login' } });
		check(second.pages.includes('sign-in'), 'prompt=login did not show the sign-in form');
		const authTime = idTokenClaims(second.tokens).auth_time;
		check(Number.isInteger(authTime) && authTime >= before - 5, `auth_time ${authTime}, sign-in at ${before}`);
		return { auth_time: authTime };
	},

	async 'oidcc-max-age-1'() {
		const first = await codeFlow();
		await sleep(1500);
		const second = await codeFlow({ browser: first.browser, params: { max_age: '1' }, maxAge: 1 });
		check(second.pages.includes('sign-in'), 'max_age=1 did not force a fresh sign-in');
		return { auth_time: idTokenClaims(second.tokens).auth_time };
	},

	async 'oidcc-prompt-none-not-logged-in'() {
		const config = await configuration();
		const url = client.buildAuthorizationUrl(config, { redirect_uri: env.redirectUri, scope: env.scope,
			state: 's', nonce: 'n', prompt: 'none' });
		const { location } = await peek(url);
		const params = location && new URL(location).searchParams;
		check(params?.get('error') === 'login_required', `answered ${location}`);
		return { error: params.get('error') };
	},

	// A signed-in browser: prompt=none answers with a code and no page (single sign-on), the ID
	// token names the same user and the same sign-in session (`sid`), and `auth_time` is the
	// first sign-in's.
	async 'oidcc-prompt-none-logged-in'() {
		const first = await codeFlow();
		const before = idTokenClaims(first.tokens);
		check(typeof before.sid === 'string' && before.sid.length > 0, 'no sid in the ID token');
		const second = await codeFlow({ browser: first.browser, params: { prompt: 'none' } });
		check(second.pages.length === 0, `prompt=none showed ${second.pages}`);
		const after = idTokenClaims(second.tokens);
		check(after.sub === before.sub, 'another user');
		check(after.sid === before.sid, `sid ${after.sid} is not the session's ${before.sid}`);
		check(after.auth_time === before.auth_time, 'auth_time moved without a sign-in');
		return { sid_kept: true, auth_time: after.auth_time };
	},

	// The OpenID Foundation module: a silent success (the same user) from a signed-in browser.
	async 'oidcc-id-token-hint'() {
		const first = await codeFlow();
		const sub = idTokenClaims(first.tokens).sub;
		const second = await codeFlow({ browser: first.browser,
			params: { prompt: 'none', id_token_hint: first.tokens.id_token } });
		check(idTokenClaims(second.tokens).sub === sub, 'the hinted re-authentication named another user');
		return { outcome: 'signed in silently', sub };
	},

	async 'oidcc-rp-initiated-logout'() {
		const postLogout = process.env.POST_LOGOUT_REDIRECT_URI;
		check(postLogout, 'POST_LOGOUT_REDIRECT_URI is not set');
		const { config, tokens } = await codeFlow();
		const url = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token,
			post_logout_redirect_uri: postLogout, state: 'after-logout' });
		const { status, location } = await peek(url);
		check(status >= 300 && status < 400 && location?.startsWith(postLogout), `logout answered ${status} ${location}`);
		check(new URL(location).searchParams.get('state') === 'after-logout', `logout redirect ${location}`);
		check((await introspect(config, tokens.refresh_token)).active === false, 'refresh token active after logout');
		return { location };
	},

	// OpenID Connect Core §6 and RFC 9101: request objects are taken only signed with a key of
	// the client's JWK Set; an unsigned one is refused (invalid_request_object, code 177), and
	// the metadata leaves `none` out of the accepted algorithms.
	async 'oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported'() {
		const config = await configuration();
		const supported = config.serverMetadata().request_parameter_supported;
		const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
		const claims = { iss: env.clientId, aud: env.issuer, client_id: env.clientId, response_type: 'code',
			redirect_uri: env.redirectUri, scope: env.scope, state: 's', nonce: 'n' };
		const request = `${part({ alg: 'none' })}.${part(claims)}.`;
		const url = client.buildAuthorizationUrl(config, { redirect_uri: env.redirectUri, scope: env.scope,
			state: 's', nonce: 'n', request });
		const { location } = await peek(url);
		const params = location && new URL(location).searchParams;
		const algs = config.serverMetadata().request_object_signing_alg_values_supported ?? [];
		check(supported === true && !algs.includes('none'), `request_parameter_supported is ${supported}, algs ${algs}`);
		check(params?.get('error') === 'invalid_request_object' && params.get('error_code') === '177'
			&& params.get('state') === 's', `answered ${location}`);
		return { error: params.get('error'), iss: params.get('iss') };
	},

	// openid-client's own DPoP: the code bound to the key (dpop_jkt), then every call with proofs.
	async 'dpop-openid-client'() {
		const config = await configuration();
		const keyPair = await client.randomDPoPKeyPair('ES256');
		const handle = client.getDPoPHandle(config, keyPair);
		const jkt = await dpop.calculateThumbprint(keyPair.publicKey);
		const { tokens } = await codeFlow({ params: { dpop_jkt: jkt }, dpopHandle: handle });
		check(tokens.token_type.toLowerCase() === 'dpop', `token_type ${tokens.token_type}`);
		const access = await introspect(config, tokens.access_token);
		check(access.cnf?.jkt === jkt, `introspection cnf ${JSON.stringify(access.cnf)}`);
		if (tokens.id_token) await client.fetchUserInfo(config, tokens.access_token, tokens.claims().sub, { DPoP: handle });
		const unbound = await refusal(client.refreshTokenGrant(config, tokens.refresh_token), 'a refresh without a proof');
		const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token, undefined, { DPoP: handle });
		check(refreshed.token_type.toLowerCase() === 'dpop', `refreshed token_type ${refreshed.token_type}`);
		return { jkt, refresh_without_proof: unbound.error };
	},

	// A proof built by the `dpop` package for a client_credentials request, then replayed.
	async 'dpop-client-credentials'() {
		const config = await configuration();
		const endpoint = config.serverMetadata().token_endpoint;
		const keyPair = await dpop.generateKeyPair('ES256');
		const send = (proof) => fetch(endpoint, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials' }),
			headers: { authorization: `Basic ${btoa(`${env.clientId}:${env.clientSecret}`)}`, dpop: proof } });
		let proof = await dpop.generateProof(keyPair, endpoint, 'POST');
		let response = await send(proof);
		const nonce = response.headers.get('dpop-nonce');
		if (response.status === 400 && nonce) {
			proof = await dpop.generateProof(keyPair, endpoint, 'POST', nonce);
			response = await send(proof);
		}
		const body = await response.json();
		check(response.status === 200, `token endpoint ${response.status} ${JSON.stringify(body)}`);
		check(body.token_type === 'DPoP', `token_type ${body.token_type}`);
		const payload = JSON.parse(Buffer.from(body.access_token.split('.')[1], 'base64url'));
		const jkt = await dpop.calculateThumbprint(keyPair.publicKey);
		check(payload.cnf?.jkt === jkt, `cnf ${JSON.stringify(payload.cnf)}, key ${jkt}`);
		const replay = await send(proof);
		const replayBody = await replay.json();
		check(replay.status === 400 && replayBody.error === 'invalid_dpop_proof',
			`a replayed proof answered ${replay.status} ${JSON.stringify(replayBody)}`);
		return { jkt, replay: replayBody.error };
	},
};

function describe(error) {
	if (error instanceof Failure) return { message: error.message };
	const { error: code, error_description: description, status, code: clientCode } = error;
	return { message: error.message, error: code, error_description: description, status, code: clientCode,
		cause: error.cause instanceof URLSearchParams ? Object.fromEntries(error.cause) : error.cause?.message };
}

const requested = setting('CASE').split(',').map((name) => name.trim()).filter(Boolean);
const names = requested.includes('all') ? Object.keys(cases) : requested;
const unknown = names.filter((name) => !cases[name]);
if (unknown.length) {
	console.error(`rp.mjs: unknown case ${unknown.join(', ')}; known: ${Object.keys(cases).join(', ')}`);
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
const failed = names.filter((name) => !results[name].ok);
if (failed.length) {
	console.error(`rp.mjs: failed: ${failed.join(', ')}`);
	process.exit(1);
}
