import { setAccountApprovalRequired } from "../services/geo-approvals.js";
import type { CliCommand } from "./commands.js";
import { required, requiredId } from "./options.js";
import { UsageError } from "./usage-error.js";

/**
 * Whether a geo-site requires its members' live brokerage accounts to be
 * approved (ApprovedAutotradeAccount) before they open autotrade positions:
 * the operator decides it for the region. A running service's copier reads
 * it on its next pass (every 5 seconds).
 */
export const APPROVAL_COMMANDS: readonly CliCommand[] = [
  {
    noun: "site",
    verb: "approval",
    synopsis: "site approval --id GEO_SITE_ID --required true|false   (live accounts autotrade there once approved)",
    options: { id: { type: "string" }, required: { type: "string" } },
    async run(runtime, o) {
      const siteId = requiredId(o, "id");
      const value = required(o, "required");
      if (value !== "true" && value !== "false") throw new UsageError("--required is true or false");
      await setAccountApprovalRequired(runtime, siteId, value === "true");
      return {
        json: { SiteId: siteId, RequiresAccountApproval: value === "true" },
        text: `Geo-site ${siteId}: live accounts ${value === "true" ? "autotrade once approved" : "need no approval"}`,
      };
    },
  },
];
