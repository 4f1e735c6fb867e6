/**
 * How long a new PostgreSQL connection may take (the pool's, the listeners',
 * the journal's): a server that does not answer (down behind a black hole,
 * mid-failover) fails a request in seconds, answered 503 (unavailable.ts),
 * not after the kernel gives up on the connection.
 */
export const PG_CONNECT_TIMEOUT_MS = 5_000;
