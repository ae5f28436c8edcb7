// The peer of `infra/bench.sh`: node-oidc-provider 9, in memory (its default adapter), with one
// client_credentials client and opaque access tokens (its default without resource indicators).
//
//   BENCH_OIDC_PROVIDER=<path to oidc-provider/lib/index.js> PORT=<port> node provider.mjs
//
// The package lives in the ignored .cache/, where bench.sh installs it; ESM resolves imports
// from this file's folder, so the entry point is passed in rather than imported by name.
import { pathToFileURL } from 'node:url';

const { default: Provider } = await import(pathToFileURL(process.env.BENCH_OIDC_PROVIDER).href);
const port = Number(process.env.PORT);

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: process.env.BENCH_CLIENT_ID,
      client_secret: process.env.BENCH_CLIENT_SECRET,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  features: {
    clientCredentials: { enabled: true },
    devInteractions: { enabled: false },
  },
  // Fixed for a benchmark peer only; nothing here signs anything of value.
  cookies: { keys: ['bench-cookie-key'] },
});

provider.listen(port, '127.0.0.1', () => {
  console.log(`node-oidc-provider listening on 127.0.0.1:${port}`);
});
