import type { CreateTableBuilder } from "kysely";
import type { Backend } from "../storage.js";

/** An auto-assigned integer primary key on either backend. */
export function withId<T extends string>(backend: Backend, table: CreateTableBuilder<T, never>) {
  return backend === "postgres"
    ? table.addColumn("id", "bigserial", (column) => column.primaryKey())
    : table.addColumn("id", "integer", (column) => column.primaryKey().autoIncrement());
}
