import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import { isStorageUnavailable } from "../../src/store/unavailable.js";

/** The error `work` throws. */
function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  assert.fail("nothing was thrown");
}

const withCode = (code: string, message = "failed") => Object.assign(new Error(message), { code });

describe("storage unavailable or the work wrong", () => {
  test("SQLite: a write lock held past the wait is unavailability; a broken constraint is not", () => {
    const dir = mkdtempSync(join(tmpdir(), "strategy-hub-unavailable-"));
    const file = join(dir, "db.sqlite");
    const holder = new Database(file);
    const other = new Database(file, { timeout: 0 });
    try {
      holder.exec("create table t (id integer primary key)");
      holder.exec("begin immediate");
      const busy = thrown(() => other.exec("insert into t values (1)"));
      assert.equal((busy as { code: string }).code, "SQLITE_BUSY");
      assert.equal(isStorageUnavailable(busy), true);
      holder.exec("insert into t values (1)");
      holder.exec("commit");
      const constraint = thrown(() => other.exec("insert into t values (1)"));
      assert.match((constraint as { code: string }).code, /^SQLITE_CONSTRAINT/);
      assert.equal(isStorageUnavailable(constraint), false);
    } finally {
      other.close();
      holder.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("PostgreSQL that cannot be reached is unavailability", async () => {
    // Port 1 on this host: nothing listens there.
    const client = new pg.Client({ host: "127.0.0.1", port: 1, connectionTimeoutMillis: 2_000 });
    const refused = await client.connect().then(
      () => assert.fail("connected"),
      (error: unknown) => error,
    );
    assert.equal(isStorageUnavailable(refused), true);
  });

  test("by code: full and failing disks, lost connections, shutdowns and retryable conflicts", () => {
    for (const code of [
      "SQLITE_FULL",
      "SQLITE_IOERR_WRITE",
      "SQLITE_BUSY_SNAPSHOT",
      "SQLITE_READONLY",
      "53100",
      "53300",
      "08006",
      "57P01",
      "58030",
      "55P03",
      "40001",
      "40P01",
      "ECONNRESET",
    ]) {
      assert.equal(isStorageUnavailable(withCode(code)), true, code);
    }
    for (const code of [
      "SQLITE_CONSTRAINT_UNIQUE",
      "SQLITE_CORRUPT",
      "SQLITE_ERROR",
      "23505",
      "42P01",
      "P0001",
      "22003",
    ]) {
      assert.equal(isStorageUnavailable(withCode(code)), false, code);
    }
  });

  test("what the journal's thread sends across, node-postgres's words, and errors inside others", () => {
    assert.equal(isStorageUnavailable(withCode("SQLITE_FULL", "journal: database or disk is full")), true);
    assert.equal(isStorageUnavailable(new Error("journal: Connection terminated unexpectedly")), true);
    assert.equal(isStorageUnavailable(new Error("timeout exceeded when trying to connect")), true);
    assert.equal(isStorageUnavailable(new Error("journal: timeout expired")), true);
    assert.equal(isStorageUnavailable(new AggregateError([withCode("ECONNREFUSED")])), true);
    assert.equal(isStorageUnavailable(new Error("wrapped", { cause: withCode("53100") })), true);
    // A message alone never makes a refusal or a bug look like unavailability.
    assert.equal(isStorageUnavailable(new Error("journal: no space left on the device")), false);
    assert.equal(isStorageUnavailable(new TypeError("x is undefined")), false);
    assert.equal(isStorageUnavailable("database or disk is full"), false);
    assert.equal(isStorageUnavailable(null), false);
  });
});
