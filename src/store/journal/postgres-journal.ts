import type { Journal } from "./batch.js";
import { journalOnThread } from "./journal-thread.js";

/**
 * PostgreSQL's journal: batches go to a thread of its own
 * (postgres-journal-thread.ts) holding the journal's connection, so a
 * batch's round trips are answered at once instead of waiting for the
 * service's event loop between requests, and encoding a batch's arrays costs
 * the event loop nothing.
 */
export function openPostgresJournal(url: string, schema: string | undefined, origin: string): Journal {
  return journalOnThread(new URL("./postgres-journal-thread.ts", import.meta.url), { url, schema, origin });
}
