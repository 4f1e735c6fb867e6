import { Type } from "@sinclair/typebox";
import { anyCaller, ROLE_NAMES } from "../../../core/access.js";
import { defineOperation } from "../operation.js";
import { AccessKeyRecord } from "../records.js";

/** Operations under /General (API.md 4.4). */
export const generalOperations = [
  defineOperation({
    id: "Hello",
    method: "POST",
    path: "/General/Hello",
    servers: ["WL", "GEN", "GEO"],
    summary: "Greets the caller: tests the key, the rate limits and the headers.",
    input: Type.Object({ Name: Type.Optional(Type.String({ description: "Any string" })) }),
    result: Type.String(),
    permission: anyCaller,
    paginated: false,
    example: { Name: "Ann" },
    handler: async (_ctx, input) => [input.Name === undefined ? "Hello!" : `Hello, ${input.Name}!`],
  }),
  defineOperation({
    id: "GetAccessKey",
    method: "GET",
    path: "/General/GetAccessKey",
    servers: ["WL", "GEN", "GEO"],
    summary: "The caller's key: its owner, role and expiration.",
    input: Type.Object({}),
    result: AccessKeyRecord,
    permission: anyCaller,
    fieldServers: { GeoSiteId: ["GEN"] },
    paginated: false,
    example: {},
    handler: async (ctx) => {
      const { caller } = ctx;
      return [
        {
          Id: caller.keyId,
          AccessKey: ctx.presentedKey,
          PersonId: caller.personId,
          FirstName: caller.firstName,
          LastName: caller.lastName,
          Email: caller.email,
          WhiteLabelSiteId: caller.whiteLabelSiteId,
          GeoSiteId: caller.geoSiteId,
          Role: ROLE_NAMES[caller.role],
          Message: caller.expiresAt
            ? `The key expires at ${caller.expiresAt.toISOString()}`
            : "The key does not expire",
          CreateDate: caller.createdAt,
          DeleteDate: caller.expiresAt,
          Comment: caller.comment,
        },
      ];
    },
  }),
];
