/** Read-only look-ups in the suite's database, for facts no API shows (a key's internal id). */
import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { suiteInfo } from './suite-info';

export interface StoredKey {
  id: string;
  accountId: string;
  type: string;
  maskedKey: string;
}

/** The stored record of a key, found by its SHA-256 hash as the key service finds it. */
export async function storedKey(value: string): Promise<StoredKey> {
  const client = new Client({ connectionString: suiteInfo().env.DATABASE_URL });
  await client.connect();
  try {
    const hash = createHash('sha256').update(value).digest('hex');
    const result = await client.query('SELECT id, account_id, type, masked_key FROM api_keys WHERE key_hash = $1', [hash]);
    if (result.rows.length !== 1) throw new Error(`no stored key for ${value.slice(0, 8)}…`);
    const row = result.rows[0];
    return { id: row.id, accountId: row.account_id, type: String(row.type), maskedKey: row.masked_key };
  } finally {
    await client.end();
  }
}
