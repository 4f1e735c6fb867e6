import type { FastifyInstance } from "fastify";
import pino from "pino";
import { POLL_INTERVAL_MS } from "../../src/core/checkout.js";
import { cursorCodec } from "../../src/http/cursor.js";
import { RateLimiter } from "../../src/http/rate-limit.js";
import type { Operation, V4Server } from "../../src/http/v4/operation.js";
import { PollGate } from "../../src/http/v4/poll-gate.js";
import { buildV4Server } from "../../src/http/v4/server.js";
import { OPERATIONS } from "../../src/http/v4/table.js";
import { KeySessions } from "../../src/services/key-sessions.js";
import type { TestService } from "./service.js";

/**
 * A real WL server over the test service's storage with extra operations that
 * exist only in the test, for transport behaviour no operation of the table
 * exercises yet (a 409, a crash, every input type).
 */
export function probeServer(
  service: TestService,
  extra: readonly Operation[],
  server: V4Server = "WL",
): Promise<FastifyInstance> {
  return buildV4Server(server, {
    runtime: service.app.runtime,
    limiter: new RateLimiter({ max: 100_000, windowSeconds: 60 }, Date.now),
    cursors: cursorCodec("probe-secret"),
    sandbox: false,
    logger: pino({ level: "silent" }),
    operations: [...OPERATIONS, ...extra],
    sessions: new KeySessions(),
    fillLoop: service.app.fillLoop,
    probes: service.app.probes,
    payments: service.app.payments,
    checkoutPolls: new PollGate(POLL_INTERVAL_MS, Date.now),
    biller: service.app.biller,
    approvals: service.app.approvals,
    snapshots: service.app.snapshots,
    webhooks: service.app.webhooks,
    brokers: service.app.brokers,
    desk: service.app.desk,
    sync: service.app.autoSync,
  });
}
