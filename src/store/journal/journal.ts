import type { Storage } from "../storage.js";
import type { Journal } from "./batch.js";
import { openPostgresJournal } from "./postgres-journal.js";
import { openSqliteJournal } from "./sqlite-journal.js";

/** The trading frame's writer for the storage: a thread of its own, with a connection of its own. */
export function openJournal(storage: Storage, origin: string): Journal {
  const { location } = storage;
  return location.backend === "sqlite"
    ? openSqliteJournal(location.file)
    : openPostgresJournal(location.url, location.options, origin);
}
