import type { Journal } from "./batch.js";
import { journalOnThread, siblingModule } from "./journal-thread.js";

/**
 * PostgreSQL's journal: batches go to a thread of its own
 * (postgres-journal-thread.ts) holding the journal's connection, so a
 * batch's round trips are answered at once instead of waiting for the
 * service's event loop between requests, and encoding a batch's arrays costs
 * the event loop nothing.
 */
export function openPostgresJournal(url: string, options: string | undefined, origin: string): Journal {
  return journalOnThread(siblingModule("postgres-journal-thread", import.meta.url), { url, options, origin });
}
