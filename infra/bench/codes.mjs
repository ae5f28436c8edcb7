// infra/bench/latency.sh: authorization codes for the code grant's load, made before it is
// measured. One browser-like sign-in (the authorize page, its password form, the consent), then
// each further code from a GET of the authorize URL with the sign-in session's cookie, which a
// remembered consent answers at once with a redirect carrying a new code. No Argon2id per code,
// so thousands take seconds. Writes one token-request form per line (the code, the redirect URI
// and the PKCE verifier); each code works once and for five minutes.
//
//   node codes.mjs BASE_URL CLIENT_ID LOGIN PASSWORD COUNT OUT_FILE
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";

const [base, clientId, login, password, count, out] = process.argv.slice(2);
const redirectUri = `${base}/demo/callback`;
const verifier = "bench-code-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";
const challenge = createHash("sha256").update(verifier).digest("base64url");
const authorize = `${base}/oauth2/v0/authorize?${new URLSearchParams({
  client_id: clientId,
  redirect_uri: redirectUri,
  response_type: "code",
  scope: "profile payroll",
  state: "bench",
  code_challenge: challenge,
  code_challenge_method: "S256",
})}`;

const cookies = new Map();
const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");
function keepCookies(response) {
  for (const set of response.headers.getSetCookie()) {
    const [pair] = set.split(";");
    const at = pair.indexOf("=");
    cookies.set(pair.slice(0, at), pair.slice(at + 1));
  }
}
async function call(url, form) {
  const response = await fetch(url, {
    method: form ? "POST" : "GET",
    redirect: "manual",
    headers: {
      cookie: cookieHeader(),
      ...(form && { "content-type": "application/x-www-form-urlencoded" }),
    },
    body: form && new URLSearchParams(form).toString(),
  });
  keepCookies(response);
  return response;
}
const csrf = (html) => html.match(/name="csrf_token" value="([^"]+)"/)?.[1];
function codeOf(response, step) {
  const location = response.headers.get("location");
  const code = location && new URL(location).searchParams.get("code");
  if (response.status !== 302 || !code) {
    throw new Error(`${step}: expected a redirect with a code, got ${response.status} ${location ?? ""}`);
  }
  return code;
}

const page = await call(authorize);
let answer = await call(`${base}/oauth2/v0/authorize`, {
  csrf_token: csrf(await page.text()),
  login,
  password,
});
if (answer.status === 200) {
  answer = await call(`${base}/oauth2/v0/authorize`, {
    csrf_token: csrf(await answer.text()),
    decision: "approve",
  });
}
const codes = [codeOf(answer, "sign-in and consent")];
while (codes.length < Number(count)) {
  codes.push(codeOf(await call(authorize), "authorize with the session"));
}
const form = (code) =>
  new URLSearchParams({
    grant_type: "authorization_code",
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
  }).toString();
writeFileSync(out, codes.map(form).join("\n") + "\n");
