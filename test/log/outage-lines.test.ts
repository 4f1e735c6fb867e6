import assert from "node:assert/strict";
import { test } from "node:test";
import { serviceLogger } from "../../src/log.js";
import { OUTAGE_QUIET_MS, OutageLines } from "../../src/outage-lines.js";

/**
 * The log through a storage outage (src/outage-lines.ts): every background
 * pass and request fails alike for as long as it lasts, so a repeated storage
 * failure is logged once a minute, saying how many like it were left out;
 * any other failure is logged every time.
 */

const diskFull = () => Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
const refused = () => Object.assign(new Error("UNIQUE constraint failed: orders.id"), { code: "SQLITE_CONSTRAINT" });

function loggerAt() {
  let nowMs = 1_000_000;
  const lines: Record<string, unknown>[] = [];
  const logger = serviceLogger(
    "info",
    { write: (line: string) => lines.push(JSON.parse(line)) },
    new OutageLines(() => nowMs),
  );
  return {
    logger,
    lines,
    pass: (ms: number) => {
      nowMs += ms;
    },
  };
}

test("a storage failure repeated within a minute is logged once, the next line saying how many were left out", () => {
  const { logger, lines, pass } = loggerAt();
  const biller = logger.child({ component: "biller" });
  for (let i = 0; i < 30; i++) {
    biller.error({ err: diskFull() }, "billing pass failed; taken up at the next tick");
    pass(1_000);
  }
  assert.equal(lines.length, 1);
  assert.equal(lines[0]?.msg, "billing pass failed; taken up at the next tick");
  assert.equal(lines[0]?.component, "biller", "the first line keeps its context");
  assert.equal(lines[0]?.suppressed, undefined);
  pass(OUTAGE_QUIET_MS);
  biller.error({ err: diskFull() }, "billing pass failed; taken up at the next tick");
  assert.equal(lines.length, 2);
  assert.equal(lines[1]?.suppressed, 29);
  assert.equal((lines[1]?.err as { code?: string } | undefined)?.code, "SQLITE_FULL");
});

test("each message and each error code is told apart; an error logged alone counts by its own message", () => {
  const { logger, lines } = loggerAt();
  const locked = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
  for (let i = 0; i < 3; i++) {
    logger.error({ err: diskFull() }, "marking failed");
    logger.error({ err: diskFull() }, "catching up failed");
    logger.error({ err: locked }, "marking failed");
    logger.error(diskFull());
  }
  assert.deepEqual(
    lines.map((line) => line.msg),
    ["marking failed", "catching up failed", "marking failed", "database or disk is full"],
  );
});

test("failures other than storage being unavailable, and lines without an error, are never left out", () => {
  const { logger, lines } = loggerAt();
  for (let i = 0; i < 5; i++) {
    logger.error({ err: refused() }, "operation failed");
    logger.warn({ accountId: 7 }, "a copy was held");
  }
  assert.equal(lines.length, 10);
  assert.ok(lines.every((line) => line.suppressed === undefined));
});

test("a request's failure in an outage: the first is logged with its request id, the rest of the minute's are not", () => {
  const { logger, lines } = loggerAt();
  for (let i = 0; i < 100; i++) {
    logger.child({ reqId: `req-${i}` }).error({ err: diskFull() }, "operation failed: storage is unavailable");
  }
  assert.equal(lines.length, 1);
  assert.equal(lines[0]?.reqId, "req-0");
});
