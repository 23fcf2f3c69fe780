// idpbench's oidc-provider server (products/nodeoidc): oidc-provider 9 in
// its documented configuration (docs/README.md of the module; the shape of
// its example/ folder: a Provider, a storage adapter, an account model and
// the interaction routes a deployment writes itself), its models in
// PostgreSQL (pg_adapter.js), one confidential client, the users
// user0..user(N-1) sharing one password, and a minimal HTML login form that
// finishes the login and grants consent at once, as a first-party client's
// login does. Every value that is not the module's default is in CONFIG
// below and is served, with the module's version, on the admin listener
// (GET /config) for readback.
//
// Environment (the adapter's; no secret in it):
//   NODEOIDC_ISSUER        the issuer, http://127.0.0.1:PORT
//   NODEOIDC_PORT          the OpenID port, bound to 127.0.0.1
//   NODEOIDC_ADMIN_PORT    the admin listener (GET /config), bound to 127.0.0.1
//   NODEOIDC_DATABASE_URL  PostgreSQL (trust authentication on loopback)
//   NODEOIDC_PG_POOL       the connection pool's size
//   NODEOIDC_SECRETS       the directory of the 0600 secret files: bench-svc
//                          (the client secret), users-password, cookie-keys
//                          (one key a line), jwks.json (the private signing keys)
//   NODEOIDC_USERS         how many users (user0..user(N-1))
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';

import Provider from 'oidc-provider';
import pg from 'pg';

import { MODELS, migrate, pgAdapter, tableName } from './pg_adapter.js';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const secret = (name) => readFileSync(join(env('NODEOIDC_SECRETS'), name), 'utf8').trim();

const ISSUER = env('NODEOIDC_ISSUER');
const PORT = Number(env('NODEOIDC_PORT'));
const ADMIN_PORT = Number(env('NODEOIDC_ADMIN_PORT'));
const POOL = Number(env('NODEOIDC_PG_POOL'));
const USERS = Number(env('NODEOIDC_USERS'));
const HOST = '127.0.0.1';

// The client every scenario uses, and its one redirect URI (nothing listens
// there: the headless login reads the code from the redirect).
const CLIENT_ID = 'bench-svc';
const REDIRECT_URI = 'http://127.0.0.1/cb';

// TTLs: the module's documented defaults (lib/helpers/defaults.js), set
// explicitly so that they are read back as configured and the module's
// "you SHOULD change it" notices stay out of the log. Seconds.
const TTL = {
  AccessToken: 3600,
  AuthorizationCode: 60,
  ClientCredentials: 600,
  IdToken: 3600,
  RefreshToken: 14 * 24 * 3600,
  Interaction: 3600,
  Session: 14 * 24 * 3600,
  Grant: 14 * 24 * 3600,
};

const pool = new pg.Pool({ connectionString: env('NODEOIDC_DATABASE_URL'), max: POOL });
pool.on('error', (err) => console.error(`nodeoidc: idle PostgreSQL connection: ${err.message}`));

// The users' password, compared in constant time (as digests, so that the
// lengths need not match). No account store: the accounts are the names
// user0..user(USERS-1); see docs/products/nodeoidc.md.
const passwordDigest = createHash('sha256').update(secret('users-password')).digest();
function checkLogin(username, password) {
  const m = /^user(0|[1-9][0-9]*)$/.exec(username ?? '');
  const ok = timingSafeEqual(createHash('sha256').update(password ?? '').digest(), passwordDigest);
  return ok && m && Number(m[1]) < USERS ? username : undefined;
}

// findAccount: the account model (docs: findAccount); claims are the
// subject only.
async function findAccount(ctx, sub) {
  const m = /^user(0|[1-9][0-9]*)$/.exec(sub);
  if (!m || Number(m[1]) >= USERS) return undefined;
  return { accountId: sub, async claims() { return { sub }; } };
}

const CONFIG = {
  adapter: pgAdapter(pool),
  clients: [{
    client_id: CLIENT_ID,
    client_secret: secret(CLIENT_ID),
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials', 'authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [REDIRECT_URI],
  }],
  findAccount,
  jwks: JSON.parse(secret('jwks.json')),
  cookies: { keys: secret('cookie-keys').split('\n').filter(Boolean) },
  features: {
    devInteractions: { enabled: false }, // the login below replaces the development-only one
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    userinfo: { enabled: true },
  },
  ttl: TTL,
};

const provider = new Provider(ISSUER, CONFIG);
provider.on('server_error', (ctx, err) => console.error(`nodeoidc: server_error on ${ctx.method} ${ctx.path}: ${err.message}`));

// --- the interaction routes: the login form ----------------------------------

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid, failed) {
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Sign-in</title></head>
<body>
<h1>Sign-in</h1>${failed ? '\n<p>Invalid username or password.</p>' : ''}
<form method="post" action="/interaction/${escape(uid)}/login" autocomplete="off">
<input type="text" name="username" placeholder="username" required>
<input type="password" name="password" placeholder="password" required>
<button type="submit">Sign-in</button>
</form>
</body></html>
`;
}

async function readForm(req) {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 8192) throw new Error('form too large');
  }
  return new URLSearchParams(body);
}

// grantAll establishes the grant a first-party client's consent would: the
// requested OpenID scopes and claims (the example's consent route, without
// the page).
async function grantAll(details, accountId) {
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: details.params.client_id });
  if (details.params.scope) grant.addOIDCScope(details.params.scope);
  if (details.prompt.details?.missingOIDCClaims) grant.addOIDCClaims(details.prompt.details.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(details.prompt.details?.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  return grant.save();
}

// interactions: GET /interaction/:uid shows the login form (or, for a
// consent prompt alone, grants it); POST /interaction/:uid/login checks the
// user and finishes login and consent in one result, so the provider's
// resume (GET /auth/:uid) redirects to the client with the code.
provider.use(async (ctx, next) => {
  const m = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?$/.exec(ctx.path);
  if (!m) return next();
  ctx.set('cache-control', 'no-store');
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (details.uid !== m[1]) ctx.throw(400, 'interaction mismatch');
  if (ctx.method === 'GET' && !m[2]) {
    if (details.prompt.name === 'login') {
      ctx.type = 'html';
      ctx.body = loginPage(details.uid, false);
      return undefined;
    }
    const grantId = await grantAll(details, details.session.accountId);
    return provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  if (ctx.method === 'POST' && m[2] && details.prompt.name === 'login') {
    const form = await readForm(ctx.req);
    const accountId = checkLogin(form.get('username'), form.get('password'));
    if (!accountId) {
      ctx.type = 'html';
      ctx.body = loginPage(details.uid, true);
      return undefined;
    }
    const grantId = await grantAll(details, accountId);
    return provider.interactionFinished(ctx.req, ctx.res,
      { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }
  return ctx.throw(405);
});

// --- the admin listener: what is in force, for readback ----------------------

const moduleVersion = JSON.parse(readFileSync(new URL('./node_modules/oidc-provider/package.json', import.meta.url), 'utf8')).version;

function configuration() {
  return {
    oidc_provider_version: moduleVersion,
    node_version: process.version,
    issuer: ISSUER,
    ttl_seconds: TTL,
    features: Object.entries(CONFIG.features).filter(([, f]) => f.enabled).map(([k]) => k),
    client: {
      client_id: CLIENT_ID,
      token_endpoint_auth_method: CONFIG.clients[0].token_endpoint_auth_method,
      grant_types: CONFIG.clients[0].grant_types,
      secret_storage: 'static client from the configuration: held in memory as given, compared in constant time',
    },
    signing_keys: CONFIG.jwks.keys.map((k) => ({ kty: k.kty, alg: k.alg, kid: k.kid, use: k.use })),
    storage: { adapter: 'pg_adapter.js: one table per model, payload jsonb', pool_max: POOL, tables: MODELS.map(tableName) },
    users: USERS,
  };
}

const admin = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/config') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`${JSON.stringify(configuration(), null, 2)}\n`);
    return;
  }
  res.writeHead(404).end();
});

// --- start and stop ----------------------------------------------------------

await migrate(pool);
const server = createServer(provider.callback());
await new Promise((resolve) => { server.listen(PORT, HOST, resolve); });
await new Promise((resolve) => { admin.listen(ADMIN_PORT, HOST, resolve); });
console.error(`nodeoidc: oidc-provider ${moduleVersion} on node ${process.version}: issuer ${ISSUER}, admin http://${HOST}:${ADMIN_PORT}/config`);

function shutdown(signal) {
  console.error(`nodeoidc: ${signal}: closing`);
  server.close();
  admin.close();
  server.closeAllConnections();
  pool.end().finally(() => process.exit(0));
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
