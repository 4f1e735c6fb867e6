import { isServiceAdmin, whiteLabelScope } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { asSiteId } from "../core/ids.js";
import { siteAccountEvents, siteExecutions } from "./account-events.js";
import { dbOf, type RequestContext } from "./runtime.js";
import type { SubscriptionRow } from "./subscription-rows.js";

/** The longest window one export covers. */
export const MAX_EXPORT_DAYS = 93;

export interface SessionEvent {
  readonly personId: number;
  readonly accessKeyId: number;
  readonly server: string;
  readonly ipAddress: string;
  readonly eventDate: Date;
}

export interface InstrumentationExport {
  readonly whiteLabelSiteId: number;
  readonly startDate: Date;
  readonly endDate: Date;
  readonly sessionEvents: readonly SessionEvent[];
  readonly subscriptions: readonly SubscriptionRow[];
  /** Stability events of the site's customers' brokerage accounts (src/core/autotrade/account-events.ts). */
  readonly autotradeAccountStability: Awaited<ReturnType<typeof siteAccountEvents>>;
  /** Fills in the site's customers' brokerage accounts. */
  readonly executions: Awaited<ReturnType<typeof siteExecutions>>;
}

/**
 * What happened on a white-label site in [start, end): its customers' key
 * sessions (the sign-in handshakes), subscriptions, autotrade account
 * stability and executions.
 */
export async function instrumentationExport(
  ctx: RequestContext,
  requestedSiteId: number | undefined,
  start: Date,
  end: Date,
): Promise<InstrumentationExport> {
  const scope = whiteLabelScope(ctx.caller, requestedSiteId === undefined ? undefined : asSiteId(requestedSiteId));
  if (!scope.ok) {
    if (requestedSiteId === undefined && isServiceAdmin(ctx.caller)) {
      throw refuse("MissingValue", { field: "WhiteLabelSiteId", message: "WhiteLabelSiteId is required" });
    }
    throw refuse("Forbidden", { field: "WhiteLabelSiteId", message: "Not an administrator of that site" });
  }
  if (end.getTime() <= start.getTime()) {
    throw refuse("InvalidValue", { field: "EndDate", message: "EndDate must be after StartDate" });
  }
  if (end.getTime() - start.getTime() > MAX_EXPORT_DAYS * 86_400_000) {
    throw refuse("InvalidValue", { field: "EndDate", message: `One export covers at most ${MAX_EXPORT_DAYS} days` });
  }
  const db = dbOf(ctx);
  const site = await db.selectFrom("sites").select("kind").where("id", "=", scope.siteId).executeTakeFirst();
  if (site?.kind !== "whitelabel") {
    throw refuse("NotFound", { field: "WhiteLabelSiteId", message: `No white-label site ${scope.siteId}` });
  }
  const sessions = await db
    .selectFrom("key_sessions")
    .select(["person_id", "key_id", "server", "ip_address", "started_at"])
    .where("white_label_site_id", "=", scope.siteId)
    .where("started_at", ">=", start.getTime())
    .where("started_at", "<", end.getTime())
    .orderBy("started_at")
    .orderBy("id")
    .execute();
  // The site's subscriptions live at any time in the window: those it sold or granted, and
  // every subscription of its customers (simulated and paper ones included).
  const subscriptions = await db
    .selectFrom("subscriptions as sub")
    .innerJoin("persons as p", "p.id", "sub.person_id")
    .selectAll("sub")
    .where((eb) => eb.or([eb("sub.site_id", "=", scope.siteId), eb("p.white_label_site_id", "=", scope.siteId)]))
    .where("sub.started_at", "<", end.getTime())
    .where((eb) => eb.or([eb("sub.ended_at", "is", null), eb("sub.ended_at", ">", start.getTime())]))
    .orderBy("sub.started_at")
    .orderBy("sub.id")
    .execute();
  return {
    whiteLabelSiteId: scope.siteId,
    startDate: start,
    endDate: end,
    sessionEvents: sessions.map((s) => ({
      personId: s.person_id,
      accessKeyId: s.key_id,
      server: s.server,
      ipAddress: s.ip_address,
      eventDate: new Date(s.started_at),
    })),
    subscriptions,
    autotradeAccountStability: await siteAccountEvents(db, scope.siteId, start.getTime(), end.getTime()),
    executions: await siteExecutions(db, scope.siteId, start.getTime(), end.getTime()),
  };
}
