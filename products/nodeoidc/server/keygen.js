// keygen.js FILE writes a new private JWK set for oidc-provider's `jwks`
// option to FILE, mode 0600: one RSA 2048 key for RS256 (the signing
// algorithm every client gets by default) with a random kid. The adapter
// runs it once per run (up); the key never leaves FILE.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';

const [file] = process.argv.slice(2);
if (!file) {
  console.error('usage: node keygen.js FILE');
  process.exit(2);
}
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
writeFileSync(file, `${JSON.stringify({ keys: [jwk] })}\n`, { mode: 0o600, flag: 'wx' });
