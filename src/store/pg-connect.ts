/**
 * How long a new PostgreSQL connection may take (the pool's, the listeners',
 * the journal's): a server that does not answer (down behind a black hole,
 * mid-failover) fails a request in seconds, answered 503 (unavailable.ts),
 * not after the kernel gives up on the connection.
 */
export const PG_CONNECT_TIMEOUT_MS = 5_000;

/**
 * How long a statement waits for a lock another session holds (an operator's
 * `LOCK TABLE`, a transaction left open) on the pool's and the journal's
 * connections: then it fails with 55P03 and its request answers 503, as on
 * SQLite, whose writers wait as long for its write lock. The service's own
 * locks are held for milliseconds. Migrations wait for one another without a
 * limit (migrate.ts).
 */
export const PG_LOCK_TIMEOUT_MS = 5_000;
