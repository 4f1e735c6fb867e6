import pg from "pg";

/**
 * int8 (bigserial ids, millisecond times, versions) arrives as a string by
 * default; all our int8 values are below 2^53, so numbers are exact. Each
 * thread's pg module is its own: every thread talking to PostgreSQL calls this.
 */
export function readInt8AsNumber(): void {
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
}
