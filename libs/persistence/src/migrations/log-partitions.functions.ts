/**
 * The SQL of the logs' time partitions (docs/audit-trail.md, "Time partitions"), created by migration 1764400000000.
 * Every function runs in UTC (`SET timezone`), so partition bounds are UTC midnights whatever the session's zone,
 * and month arithmetic never shifts by a daylight-saving hour.
 */

/** Serialises whoever creates or drops partitions (the worker's task, a writer missing one, retention). */
export const LOG_PARTITION_LOCK = 7_363_616_001;

export const LOG_PARTITION_FUNCTIONS = [
  // The unit new partitions are cut in: the worker records LOG_PARTITION_INTERVAL here, so a writer that creates one
  // on demand cuts it the same way without knowing the configuration.
  `CREATE TABLE IF NOT EXISTS "log_partition_settings" (
    "singleton" boolean PRIMARY KEY DEFAULT true CHECK ("singleton"),
    "unit" varchar(8) NOT NULL CHECK ("unit" IN ('day', 'week', 'month')))`,
  `INSERT INTO "log_partition_settings" ("unit") VALUES ('month') ON CONFLICT DO NOTHING`,

  // Every partition of logs with its range [from_at, to_at); from_at NULL for MINVALUE (the table converted by the
  // migration holds everything before its bound).
  `CREATE OR REPLACE FUNCTION "log_partitions"() RETURNS TABLE (name text, from_at timestamptz, to_at timestamptz)
    LANGUAGE sql STABLE SET timezone TO 'UTC' AS $$
      SELECT c.relname::text, nullif(b.m[1], 'MINVALUE')::timestamptz, b.m[2]::timestamptz
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      CROSS JOIN LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid),
        'FROM \\(''?([^'')]+)''?\\) TO \\(''?([^'')]+)''?\\)') AS m) b
      WHERE i.inhparent = 'logs'::regclass
      ORDER BY 2 NULLS FIRST $$`,

  // Creates the partitions missing for [from_at, to_at), one unit each (clipped to its neighbours when the unit
  // changed); returns their names. An empty table gets its (tenant_id, seq) unique index, then is attached: ATTACH
  // takes SHARE UPDATE EXCLUSIVE on logs, which inserts and reads do not wait for.
  `CREATE OR REPLACE FUNCTION "log_partitions_ensure"(from_at timestamptz, to_at timestamptz, cut text DEFAULT NULL)
    RETURNS SETOF text LANGUAGE plpgsql SET timezone TO 'UTC' AS $$
    DECLARE
      step interval;
      c timestamptz := from_at;
      e timestamptz;
      lo timestamptz;
      hi timestamptz;
      part text;
    BEGIN
      IF cut IS NULL THEN
        SELECT s.unit INTO cut FROM log_partition_settings s;
      ELSIF cut NOT IN ('day', 'week', 'month') THEN
        RAISE EXCEPTION 'a log partition is a day, a week or a month, not %', cut USING ERRCODE = '22023';
      ELSE
        UPDATE log_partition_settings SET unit = cut WHERE unit IS DISTINCT FROM cut;
      END IF;
      step := ('1 ' || cut)::interval;
      PERFORM pg_advisory_xact_lock(${LOG_PARTITION_LOCK});
      WHILE c < to_at LOOP
        SELECT p.to_at INTO e FROM log_partitions() p WHERE (p.from_at IS NULL OR p.from_at <= c) AND p.to_at > c;
        IF FOUND THEN
          c := e;
          CONTINUE;
        END IF;
        lo := greatest(date_trunc(cut, c), (SELECT max(p.to_at) FROM log_partitions() p WHERE p.to_at <= c));
        hi := least(date_trunc(cut, c) + step, (SELECT min(p.from_at) FROM log_partitions() p WHERE p.from_at > c));
        part := 'logs_p' || to_char(lo, 'YYYYMMDD');
        EXECUTE format('CREATE TABLE %I (LIKE logs INCLUDING DEFAULTS)', part);
        EXECUTE format('CREATE UNIQUE INDEX %I ON %I (tenant_id, seq)', part || '_tenant_seq_idx', part);
        EXECUTE format('ALTER TABLE logs ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
        RETURN NEXT part;
        c := hi;
      END LOOP;
    END $$`,

  // Drops every partition whose range ends at or before \`before\` (its logs are gone for good), and the ids of its
  // logs from log_ids; returns their names. For retention, after it signed its checkpoint.
  `CREATE OR REPLACE FUNCTION "log_partitions_drop_before"(before timestamptz)
    RETURNS SETOF text LANGUAGE plpgsql SET timezone TO 'UTC' AS $$
    DECLARE
      p record;
    BEGIN
      PERFORM pg_advisory_xact_lock(${LOG_PARTITION_LOCK});
      FOR p IN SELECT * FROM log_partitions() WHERE to_at <= before ORDER BY to_at LOOP
        EXECUTE format('DELETE FROM log_ids i USING %I l WHERE i.id = l.id', p.name);
        EXECUTE format('DROP TABLE %I', p.name);
        RETURN NEXT p.name;
      END LOOP;
    END $$`,
];

export const DROP_LOG_PARTITION_FUNCTIONS = [
  'DROP FUNCTION IF EXISTS "log_partitions_drop_before"(timestamptz)',
  'DROP FUNCTION IF EXISTS "log_partitions_ensure"(timestamptz, timestamptz, text)',
  'DROP FUNCTION IF EXISTS "log_partitions"()',
  'DROP TABLE IF EXISTS "log_partition_settings"',
];

/**
 * The insert of `log_chain_append` over partitions: an id is claimed in log_ids (the ids' uniqueness across every
 * partition and tenant), and only the logs whose ids were claimed are inserted; ROW_COUNT is how many.
 */
export const INSERT_CLAIMED_LOGS = `WITH b AS MATERIALIZED (SELECT * FROM json_populate_recordset(NULL::logs, batch)),
          claimed AS (INSERT INTO log_ids (id, tenant_id) SELECT id, tenant_id FROM b ON CONFLICT (id) DO NOTHING RETURNING id)
        INSERT INTO logs (id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at,
                          request_id, source_ip, user_agent, seq, hash)
          SELECT id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at,
                 request_id, source_ip, user_agent, seq, hash
          FROM b WHERE b.id IN (SELECT id FROM claimed);`;
