import { createHash } from "node:crypto";
import type { PostgresCursor, PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it anew on
 * each run, and planning a join costs more than running it (the autotrade sync
 * report: 5.5 ms of parse and plan against 0.35 ms of execution). A named
 * statement is parsed once per connection, and after a few runs PostgreSQL
 * keeps a generic plan for it. This pool names the statements Kysely sends,
 * as the SQLite side keeps its prepared statements by their text.
 *
 * Named only: reads and writes (select, insert, update, delete, with) of at
 * most `MAX_PARAMETERS` parameters (a long id list or a multi-row insert is a
 * text of its own per length, planned once per run anyway), and at most
 * `perConnection` of them per connection (PostgreSQL keeps each until the
 * connection closes); the rest go unnamed as before.
 *
 * A statement's result type is fixed when it is parsed, so a schema change
 * (create, alter, drop...) sent through this pool starts new names: a
 * statement parsed before it is never run again. Schema changes made by
 * another process (a migration run elsewhere while this one serves) are not
 * seen until a statement parsed before it fails for it (its one failure), and
 * that starts new names as well.
 */
const MAX_PARAMETERS = 100;
const DEFAULT_PER_CONNECTION = 500;
/** Names computed, by text; cleared when full (texts are bounded by the code, long lists aside). */
const NAME_CACHE = 10_000;

/** "cached plan must not change result type". */
const STALE_RESULT_TYPE = "0A000";
const PLANNED = /^\s*(select|insert|update|delete|with)\b/i;
const SCHEMA_CHANGE = /^\s*(create|alter|drop|truncate|comment|grant|revoke)\b/i;

export function namedStatementPool(pool: pg.Pool, perConnection = DEFAULT_PER_CONNECTION): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  let schemaVersion = 0;
  const names = new Map<string, string>();

  const schemaChanged = () => {
    schemaVersion++;
    names.clear();
  };
  const nameOf = (text: string): string => {
    let name = names.get(text);
    if (name === undefined) {
      if (names.size >= NAME_CACHE) names.clear();
      name = `k${schemaVersion}_${createHash("sha1").update(text).digest("base64url")}`;
      names.set(text, name);
    }
    return name;
  };

  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    // A connection lost while lent out (the server ended it, the network went) fails its queries,
    // which their callers hear; its 'error' event, which the pool listens to only while the
    // connection idles, would otherwise end the process. The pool drops it when it comes back.
    client.on("error", () => undefined);
    const named = new Set<string>();
    const query = (text: string, parameters: readonly unknown[]) => {
      const values = [...parameters];
      if (parameters.length <= MAX_PARAMETERS && PLANNED.test(text)) {
        const name = nameOf(text);
        if (named.has(name) || named.size < perConnection) {
          named.add(name);
          return client.query({ name, text, values }).catch((error: unknown) => {
            if ((error as { code?: string }).code === STALE_RESULT_TYPE) schemaChanged();
            throw error;
          });
        }
      } else if (SCHEMA_CHANGE.test(text)) {
        schemaChanged();
      }
      return client.query(text, values);
    };
    // Kysely asks for a cursor only when its dialect is given one (this service's is not): passed on as it is.
    const queryOf = (textOrCursor: string | PostgresCursor<unknown>, parameters?: readonly unknown[]) =>
      typeof textOrCursor === "string"
        ? query(textOrCursor, parameters ?? [])
        : client.query(textOrCursor as unknown as pg.Submittable);
    return {
      query: queryOf as unknown as PostgresPoolClient["query"],
      release: () => client.release(),
    };
  };

  return {
    async connect() {
      const client = await pool.connect();
      let pooled = wrapped.get(client);
      if (!pooled) {
        pooled = wrap(client);
        wrapped.set(client, pooled);
      }
      return pooled;
    },
    end: () => pool.end(),
  };
}
