'use strict';
// Log databases for the benchmarks: migrated from dist/, and the logs table as an installation had it before its
// time partitions (migration 1764400000000), so that a seeded database is converted the way an upgrade converts one.
const path = require('node:path');
const { bar } = require('./progress-bar');
const { ROOT, databaseUrl } = require('./service');

const PARTITIONS = 'LogPartitions1764400000000';

function persistence() {
  return require(path.join(ROOT, 'dist/libs/persistence/src'));
}

/** Applies every pending migration (the partitions' too: the conversion, when the table is unpartitioned). */
async function migrate(name) {
  const { openDatabase, runMigrations } = persistence();
  const database = await openDatabase({ url: databaseUrl(name), dataDir: '' });
  try {
    return await runMigrations(database);
  } finally {
    await database.close();
  }
}

/** The logs table unpartitioned again (the partitions migration undone and unrecorded): for a fast seed. */
async function unpartitionLogs(name) {
  const { openDatabase, MIGRATIONS } = persistence();
  const database = await openDatabase({ url: databaseUrl(name), dataDir: '' });
  const runner = database.dataSource.createQueryRunner();
  try {
    await runner.connect();
    await new (MIGRATIONS.find((m) => m.name === PARTITIONS))().down(runner);
    await runner.query('DELETE FROM migrations WHERE name = $1', [PARTITIONS]);
  } finally {
    await runner.release();
    await database.close();
  }
}

/**
 * Drops the (unpartitioned) logs table's indexes and primary key before a load, and returns what builds them again
 * after it, with progress: building each once over the loaded rows beats maintaining them during the load.
 */
async function withoutLogIndexes(c) {
  const indexes = (await c.query("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'logs' AND indexname <> 'logs_pkey'")).rows;
  for (const ix of indexes) await c.query(`DROP INDEX "${ix.indexname}"`);
  await c.query('ALTER TABLE logs DROP CONSTRAINT logs_pkey');
  return async () => {
    const all = [{ indexname: 'logs_pkey', indexdef: 'ALTER TABLE logs ADD PRIMARY KEY (id)' }, ...indexes];
    const started = Date.now();
    for (let i = 0; i < all.length; i++) {
      bar(`indexing (${all[i].indexname})`.slice(0, 24), i, all.length, started);
      await c.query(all[i].indexdef);
    }
    bar('indexing', all.length, all.length, started);
  };
}

module.exports = { migrate, unpartitionLogs, withoutLogIndexes };
