import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { applyClockSetting } from "../../../services/clock.js";
import { defineOperation } from "../operation.js";
import { ClockRecord } from "../records.js";
import { DateTime } from "../schemas.js";

/**
 * Sandbox operations: service admins drive the service's clock (and, later,
 * its market) by hand. Absent unless the sandbox is enabled.
 */
export const sandboxOperations = [
  defineOperation({
    id: "SetClock",
    method: "POST",
    path: "/Sandbox/SetClock",
    servers: ["WL", "GEN", "GEO"],
    summary: "Sets the service clock to Now; from then on it stands still until set or advanced again.",
    input: Type.Object({ Now: DateTime({ description: "ISO 8601; UTC unless an offset is given" }) }),
    result: ClockRecord,
    permission: onlyRoles("admin"),
    sandbox: true,
    paginated: false,
    handler: async (ctx, input) => [
      { Now: await applyClockSetting(ctx.storage, ctx.clock, { kind: "fixed", atMs: Date.parse(input.Now) }) },
    ],
  }),
  defineOperation({
    id: "AdvanceClock",
    method: "POST",
    path: "/Sandbox/AdvanceClock",
    servers: ["WL", "GEN", "GEO"],
    summary: "Moves the service clock forward by Seconds; it stands still afterwards.",
    input: Type.Object({ Seconds: Type.Number({ minimum: 0, maximum: 3.2e9 }) }),
    result: ClockRecord,
    permission: onlyRoles("admin"),
    sandbox: true,
    paginated: false,
    handler: async (ctx, input) => [
      { Now: await applyClockSetting(ctx.storage, ctx.clock, ctx.clock.advancedBy(input.Seconds)) },
    ],
  }),
];
