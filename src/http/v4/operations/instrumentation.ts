import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { instrumentationExport, MAX_EXPORT_DAYS } from "../../../services/instrumentation.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { InstrumentationExportRecord } from "../records.js";
import { DateTime, Id } from "../schemas.js";

export const instrumentationOperations = [
  defineOperation({
    id: "GetWlInstrumentationExport",
    method: "GET",
    path: "/General/GetWlInstrumentationExport",
    servers: ["WL"],
    summary: `The site's key sessions (sign-in handshakes), subscriptions, autotrade account stability and executions in [StartDate, EndDate), at most ${MAX_EXPORT_DAYS} days. White-label admins (service admins name the site).`,
    input: Type.Object({
      StartDate: DateTime(),
      EndDate: DateTime(),
      WhiteLabelSiteId: Type.Optional(Id({ description: "Service admin keys only" })),
    }),
    result: InstrumentationExportRecord,
    permission: onlyRoles("admin", "whitelabel-admin"),
    paginated: false,
    example: {
      StartDate: "2026-03-01T00:00:00Z",
      EndDate: "2026-03-11T00:00:00Z",
      WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
    },
    handler: async (ctx, input) => {
      const report = await instrumentationExport(
        ctx,
        input.WhiteLabelSiteId,
        new Date(input.StartDate),
        new Date(input.EndDate),
      );
      return [
        {
          WhiteLabelSiteId: report.whiteLabelSiteId,
          StartDate: report.startDate,
          EndDate: report.endDate,
          SessionEvents: report.sessionEvents.map((event) => ({
            EventType: "KeySession",
            PersonId: event.personId,
            AccessKeyId: event.accessKeyId,
            Server: event.server,
            IPAddress: event.ipAddress,
            EventDate: event.eventDate,
          })),
          Subscriptions: report.subscriptions,
          AutotradeAccountStability: report.autotradeAccountStability,
          Executions: report.executions,
        },
      ];
    },
  }),
];
