import IORedis from 'ioredis';
import type { DataSource } from 'typeorm';

/**
 * Where any of `secrets` is stored in plaintext: every row of every table of the database (as text; bytea columns
 * appear as hex, so the hex and base64 forms of each secret are looked for too), every key and value of the Redis
 * database `redisUrl` names. Returns one line per finding, naming where and which secret (by index), never the value:
 * an empty list means nothing was found. The token vault's scans extend the secrets, not the places.
 */
export async function findPlaintext(dataSource: DataSource, redisUrl: string | undefined, secrets: string[]): Promise<string[]> {
  const needles = secrets.map((secret) => [secret, Buffer.from(secret).toString('hex'), Buffer.from(secret).toString('base64')]);
  const findings: string[] = [];
  const look = (where: string, text: string) => {
    needles.forEach((forms, i) => {
      if (forms.some((form) => text.includes(form))) findings.push(`${where} holds secret #${i}`);
    });
  };
  const tables: { name: string }[] = await dataSource.query(
    `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
  );
  for (const { name } of tables) {
    const rows: { text: string }[] = await dataSource.query(`SELECT t::text AS text FROM ${name} t`);
    for (const row of rows) look(`table ${name}`, row.text);
  }
  if (redisUrl) {
    const redis = new IORedis(redisUrl, { maxRetriesPerRequest: 1 });
    try {
      for (const key of await redis.keys('*')) {
        look(`redis key name ${key}`, key);
        look(`redis key ${key}`, await redisValue(redis, key));
      }
    } finally {
      redis.disconnect();
    }
  }
  return findings;
}

async function redisValue(redis: IORedis, key: string): Promise<string> {
  switch (await redis.type(key)) {
    case 'string':
      return (await redis.getBuffer(key))?.toString('latin1') ?? '';
    case 'hash':
      return JSON.stringify(await redis.hgetall(key));
    case 'list':
      return JSON.stringify(await redis.lrange(key, 0, -1));
    case 'set':
      return JSON.stringify(await redis.smembers(key));
    case 'zset':
      return JSON.stringify(await redis.zrange(key, 0, -1));
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      return '';
  }
}
