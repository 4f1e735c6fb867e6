/**
 * The unique index a failed write ran into, or null when the error is
 * something else. Checks before inserts catch the usual case; this catches
 * the race where two requests pass the check together (PostgreSQL runs them
 * concurrently), so the loser still gets a 409 instead of a 500.
 */
export function uniqueViolation(error: unknown): string | null {
  if (typeof error !== "object" || error === null) return null;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  // PostgreSQL: unique_violation, naming the index.
  if (code === "23505" && typeof constraint === "string") return constraint;
  // SQLite: "UNIQUE constraint failed: persons.email".
  if (typeof code === "string" && code.startsWith("SQLITE_CONSTRAINT") && typeof message === "string") {
    const match = /UNIQUE constraint failed: (.+)$/.exec(message);
    if (match?.[1]) return match[1];
  }
  return null;
}
