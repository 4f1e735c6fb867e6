/**
 * Whether an error says that storage cannot take work now, rather than that
 * the work was wrong: the disk is full or failing, the database is locked by
 * another writer past the busy timeout, or PostgreSQL is unreachable, out of
 * resources or shutting down. Such a request is answered 503 with
 * Retry-After (the client may send it again), and a batch that meets it is
 * not tried again account by account (each part would meet the same storage).
 * A constraint, a bad statement or a corrupt file is not unavailability: that
 * stays an internal failure.
 */

/** better-sqlite3's SqliteError codes (extended codes begin with the primary one). */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|CANTOPEN|NOMEM|READONLY)/;

/**
 * PostgreSQL's SQLSTATEs: connection exceptions (08), insufficient resources
 * (53: disk full, out of memory, too many connections), operator intervention
 * (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now),
 * system errors (58: I/O), a lock not had within the journal's lock_timeout
 * (55P03), and a serialization failure or deadlock (40001, 40P01), which a
 * later try passes.
 */
const PG_UNAVAILABLE = /^(08...|53...|57P0[1-3]|58...|55P03|40001|40P01)$/;

/** The socket's errors when the database server cannot be reached or goes away. */
const NETWORK_UNAVAILABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/**
 * node-postgres says a lost or unopenable connection in words, without a code:
 * a client's connect past its timeout is "timeout expired", the pool's
 * "timeout exceeded when trying to connect".
 */
const PG_CONNECTION_LOST =
  /^(Connection terminated|timeout exceeded when trying to connect|timeout expired$|Client has encountered a connection error)/;

/** The code an error carries, if any: the journal's thread sends it across with the message. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

export function isStorageUnavailable(error: unknown): boolean {
  return unavailable(error, 0);
}

function unavailable(error: unknown, depth: number): boolean {
  if (typeof error !== "object" || error === null || depth > 3) return false;
  const code = errorCode(error);
  if (
    code !== undefined &&
    (SQLITE_UNAVAILABLE.test(code) || PG_UNAVAILABLE.test(code) || NETWORK_UNAVAILABLE.has(code))
  )
    return true;
  const { message, cause, errors } = error as { message?: unknown; cause?: unknown; errors?: unknown };
  // The journal's thread prefixes what it sends across with "journal: ".
  if (typeof message === "string" && PG_CONNECTION_LOST.test(message.replace(/^journal: /, ""))) return true;
  // Connecting to every address of a host may fail as an AggregateError of each attempt.
  if (Array.isArray(errors) && errors.some((inner) => unavailable(inner, depth + 1))) return true;
  return unavailable(cause, depth + 1);
}
