// A company's OpenID Provider for the federation tests: node-oidc-provider (panva), with a
// login page of its own, and a fault proxy in front of its token and JWKS endpoints that can
// forge the ID token it answers (tests/support/oidc_idp.rs drives it).
//
//   node tests/idp/oidc_provider.mjs CONFIG_JSON
//
// CONFIG_JSON: {"port": PORT, "clients": [{client_id, client_secret, redirect_uris,
//   post_logout_redirect_uris, token_endpoint_auth_method}]}. Prints `listening PORT` once ready;
// the issuer is http://127.0.0.1:PORT.
//
// Accounts: any login signs in with any password; the account id is the login. A login with an
// `@` has that email, verified unless the login starts with `unverified.`; a login containing
// `mfa` reports `amr: ["pwd", "mfa"]`, any other `["pwd"]`. The login page's Cancel button
// answers `access_denied`.
//
// Faults (POST /test/forge {"mode": M}, "none" to stop): the next ID tokens are re-signed by a
// key the proxy adds to the JWKS, with one claim wrong: `iss`, `aud`, `exp` (expired), `nonce`;
// or `alg_none` (unsigned), `unknown_key` (signed by a key the JWKS never lists), `hs256`
// (HMAC with the client secret).
import http from 'node:http';
import crypto from 'node:crypto';
import { once } from 'node:events';
import Provider from 'oidc-provider';
import { generateKeyPair, exportJWK, SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';

const config = JSON.parse(process.argv[2] ?? '{"clients": []}');

const server = http.createServer();
server.listen(config.port ?? 0, '127.0.0.1');
await once(server, 'listening');
const port = server.address().port;
const issuer = `http://127.0.0.1:${port}`;

const signing = await generateKeyPair('RS256', { extractable: true });
const signingJwk = { ...(await exportJWK(signing.privateKey)), kid: 'idp-key-1', alg: 'RS256', use: 'sig' };
const forger = await generateKeyPair('RS256', { extractable: true });
const forgerPublic = { ...(await exportJWK(forger.publicKey)), kid: 'forged-key', alg: 'RS256', use: 'sig' };
const stranger = await generateKeyPair('RS256', { extractable: true });

const provider = new Provider(issuer, {
  clients: config.clients,
  jwks: { keys: [signingJwk] },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  claims: { openid: ['sub', 'amr', 'auth_time'], email: ['email', 'email_verified'], profile: ['name'] },
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: { enabled: true },
  },
  pkce: { required: () => true },
  // The scopes' claims in the ID token too, as most company IdPs answer.
  conformIdTokenClaims: false,
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  // Consent is not what these tests are about: every client is granted what it asks.
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(ctx.oidc.params.scope ?? 'openid');
    await grant.save();
    return grant;
  },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        const email = emails.get(id) ?? (id.includes('@') ? id.replace(/^unverified\./, '') : undefined);
        return { sub: id, email, email_verified: email ? !id.startsWith('unverified.') : undefined, name: id };
      },
    };
  },
});
provider.proxy = false;

let forge = 'none';
// POST /test/email {"sub", "email"}: the account's email from now on (its sub stays).
const emails = new Map();

const page = (body) =>
  `<!doctype html><html><head><title>Acme IdP</title></head><body>${body}</body></html>`;
const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString());
}

async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new Error('another interaction');
  if (req.method === 'GET') {
    const hint = details.params.login_hint ?? '';
    res.setHeader('content-type', 'text/html');
    res.end(page(`<h1>Acme sign-in</h1>
<form method="post" action="/interaction/${uid}/login">
<label for="idp-login">Username</label><input id="idp-login" name="login" value="${escape(hint)}">
<label for="idp-password">Password</label><input id="idp-password" name="password" type="password">
<button type="submit" name="go" value="login">Sign-in</button>
<button type="submit" name="go" value="cancel">Cancel</button>
</form>`));
    return;
  }
  const form = await readForm(req);
  if (action !== 'login' || form.get('go') === 'cancel') {
    await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the user cancelled' });
    return;
  }
  const login = form.get('login') || 'nobody';
  const amr = login.includes('mfa') ? ['pwd', 'mfa'] : ['pwd'];
  await provider.interactionFinished(req, res, { login: { accountId: login, amr } }, { mergeWithLastSubmission: false });
}

// The proxy: the provider's answer, read whole, then the token or JWKS answer rewritten.
function capture(res) {
  const chunks = [];
  const { write, end, setHeader } = res;
  const headers = {};
  res.setHeader = (name, value) => { headers[name.toLowerCase()] = value; return res; };
  res.write = (chunk) => { chunks.push(Buffer.from(chunk)); return true; };
  return new Promise((resolve) => {
    res.end = (chunk) => {
      if (chunk) chunks.push(Buffer.from(chunk));
      res.write = write; res.end = end; res.setHeader = setHeader;
      resolve({ body: Buffer.concat(chunks), headers });
    };
  });
}

async function forged(idToken, clientSecret) {
  const claims = decodeJwt(idToken);
  const header = decodeProtectedHeader(idToken);
  const now = Math.floor(Date.now() / 1000);
  if (forge === 'alg_none') {
    const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${encode({ alg: 'none', typ: header.typ })}.${encode(claims)}.`;
  }
  if (forge === 'hs256') {
    return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(Buffer.from(clientSecret));
  }
  const changed = { ...claims };
  if (forge === 'iss') changed.iss = 'https://evil.example';
  if (forge === 'aud') changed.aud = 'another-client';
  if (forge === 'exp') { changed.iat = now - 200; changed.exp = now - 100; }
  if (forge === 'nonce') changed.nonce = 'not-this-sign-in';
  const key = forge === 'unknown_key' ? stranger.privateKey : forger.privateKey;
  const kid = forge === 'unknown_key' ? 'never-published' : 'forged-key';
  return new SignJWT(changed).setProtectedHeader({ alg: 'RS256', kid }).sign(key);
}

const handle = provider.callback();
server.on('request', async (req, res) => {
  try {
    const url = new URL(req.url, issuer);
    if (url.pathname === '/test/forge' && req.method === 'POST') {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      forge = JSON.parse(Buffer.concat(chunks).toString()).mode;
      res.end('ok');
      return;
    }
    if (url.pathname === '/test/email' && req.method === 'POST') {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const { sub, email } = JSON.parse(Buffer.concat(chunks).toString());
      emails.set(sub, email);
      res.end('ok');
      return;
    }
    const match = url.pathname.match(/^\/interaction\/([^/]+)(?:\/(\w+))?$/);
    if (match) {
      await interaction(req, res, match[1], match[2]);
      return;
    }
    if (forge !== 'none' && (url.pathname === '/token' || url.pathname === '/jwks')) {
      const authorization = req.headers.authorization ?? '';
      const answer = capture(res);
      handle(req, res);
      const { body, headers } = await answer;
      let json = JSON.parse(body.toString());
      if (url.pathname === '/jwks' && forge !== 'unknown_key') json.keys.push(forgerPublic);
      if (url.pathname === '/token' && json.id_token) {
        const basic = Buffer.from(authorization.replace(/^Basic /, ''), 'base64').toString();
        const secret = decodeURIComponent(basic.slice(basic.indexOf(':') + 1));
        json.id_token = await forged(json.id_token, secret);
      }
      const text = JSON.stringify(json);
      for (const [name, value] of Object.entries(headers)) if (name !== 'content-length') res.setHeader(name, value);
      res.setHeader('content-length', Buffer.byteLength(text));
      res.end(text);
      return;
    }
    handle(req, res);
  } catch (error) {
    res.statusCode = 500;
    res.end(String(error));
  }
});

console.log(`listening ${port}`);
