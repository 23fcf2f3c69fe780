// The storage adapter: oidc-provider's models in PostgreSQL, one table per
// model (oidc_<model in snake case>), each row the model's payload as JSONB
// beside the columns the adapter interface looks up by (id, grant_id, uid,
// user_code), its expiry and when it was consumed. It implements the
// interface of oidc-provider's example/my_adapter.js (upsert, find,
// findByUid, findByUserCode, consume, destroy, revokeByGrantId) the way its
// example sequelize adapter lays out its tables (one table per model, the
// payload in a JSON column), written for node-postgres.
//
// One table per model rather than the knex example's single table with a
// type column: each model's lookups stay in its own primary key and
// indexes (introspection and userinfo read AccessToken/ClientCredentials
// rows, never a table shared with sessions and interactions), and the
// facts can name the tables a run wrote to.
//
// Expired rows are filtered out on find, not deleted: like the example
// adapters, nothing here sweeps them (a deployment would, by a job).

// The models oidc-provider 9 asks an adapter for (lib/models), and which of
// them carry a grantId (revokeByGrantId), a session uid or a user code.
export const MODELS = [
  'Session', 'AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'ClientCredentials',
  'Client', 'InitialAccessToken', 'RegistrationAccessToken', 'Interaction', 'ReplayDetection',
  'PushedAuthorizationRequest', 'Grant', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode',
];
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode',
  'BackchannelAuthenticationRequest', 'PreAuthorizedCode']);

// tableName is the model's table: oidc_access_token for AccessToken.
export function tableName(model) {
  return `oidc_${model.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase()}`;
}

// migrate creates every model's table and its lookup indexes when missing
// (the first start on an empty database: cold start A).
export async function migrate(pool) {
  for (const model of MODELS) {
    const t = tableName(model);
    await pool.query(`CREATE TABLE IF NOT EXISTS ${t} (
      id text PRIMARY KEY,
      payload jsonb NOT NULL,
      grant_id text,
      uid text,
      user_code text,
      expires_at timestamptz,
      consumed_at timestamptz)`);
    if (GRANTABLE.has(model)) await pool.query(`CREATE INDEX IF NOT EXISTS ${t}_grant_id ON ${t} (grant_id)`);
    if (model === 'Session') await pool.query(`CREATE INDEX IF NOT EXISTS ${t}_uid ON ${t} (uid)`);
    if (model === 'DeviceCode') await pool.query(`CREATE INDEX IF NOT EXISTS ${t}_user_code ON ${t} (user_code)`);
  }
}

// pgAdapter returns the adapter class oidc-provider constructs once per
// model name, on pool.
export function pgAdapter(pool) {
  return class PgAdapter {
    constructor(model) {
      if (!MODELS.includes(model)) throw new Error(`no table for oidc-provider model ${model}`);
      this.table = tableName(model);
    }

    async upsert(id, payload, expiresIn) {
      await pool.query(
        `INSERT INTO ${this.table} (id, payload, grant_id, uid, user_code, expires_at)
         VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::int IS NULL THEN NULL ELSE now() + make_interval(secs => $6::int) END)
         ON CONFLICT (id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
           uid = EXCLUDED.uid, user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at`,
        [id, payload, payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null,
          Number.isFinite(expiresIn) ? Math.ceil(expiresIn) : null],
      );
    }

    async find(id) {
      return this.#findBy('id', id);
    }

    async findByUid(uid) {
      return this.#findBy('uid', uid);
    }

    async findByUserCode(userCode) {
      return this.#findBy('user_code', userCode);
    }

    async consume(id) {
      await pool.query(`UPDATE ${this.table} SET consumed_at = now() WHERE id = $1`, [id]);
    }

    async destroy(id) {
      await pool.query(`DELETE FROM ${this.table} WHERE id = $1`, [id]);
    }

    async revokeByGrantId(grantId) {
      await pool.query(`DELETE FROM ${this.table} WHERE grant_id = $1`, [grantId]);
    }

    // #findBy returns the payload of the live row whose column equals value,
    // with consumed (epoch seconds) when it was consumed; undefined when none.
    async #findBy(column, value) {
      const { rows } = await pool.query(
        `SELECT payload, extract(epoch FROM consumed_at)::bigint AS consumed FROM ${this.table}
         WHERE ${column} = $1 AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
        [value],
      );
      if (rows.length === 0) return undefined;
      const { payload, consumed } = rows[0];
      return consumed == null ? payload : { ...payload, consumed: Number(consumed) };
    }
  };
}
