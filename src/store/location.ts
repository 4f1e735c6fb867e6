import { currentSchema } from "./migrate.js";
import type { Storage } from "./storage.js";

/** Where storage is, for the start-up log: the SQLite file, or PostgreSQL's server, database and schema (never its user or password). */
export async function describeLocation(
  storage: Storage,
): Promise<
  | { readonly file: string }
  | { readonly host: string; readonly port: string; readonly database: string; readonly schema: string }
> {
  const { location } = storage;
  if (location.backend === "sqlite") return { file: location.file };
  const url = new URL(location.url);
  return {
    host: url.hostname || "localhost",
    port: url.port || "5432",
    database: decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || "postgres",
    schema: await currentSchema(storage),
  };
}
