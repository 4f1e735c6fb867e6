import { ROLES, type Role } from "../core/access.js";
import { parseDateTime } from "../core/datetime.js";
import { formatDecimal, toNumber } from "../core/decimal.js";
import { Refusal } from "../core/errors.js";
import { dollarsOf } from "../core/money.js";
import { readToleranceBps, readWindowSeconds } from "../core/rule575.js";
import { openFrame } from "../engine/frame/open.js";
import { fundHouseAccount, setSiteSettings, setStrategyPrice } from "../services/commerce-admin.js";
import { describeDemo, seedDemo } from "../services/demo.js";
import { createKey, listKeys, revokeKey } from "../services/keys.js";
import { createPerson } from "../services/people.js";
import type { Runtime } from "../services/runtime.js";
import { createPlatform, createSite } from "../services/sites.js";
import { APPROVAL_COMMANDS } from "./approval-commands.js";
import { BILLING_COMMANDS } from "./billing-commands.js";
import { BROKER_COMMANDS } from "./broker-commands.js";
import { MUX_COMMANDS } from "./mux-commands.js";
import { dollarsOption, optionalId, required, requiredId } from "./options.js";
import { PLAN_COMMANDS } from "./plan-commands.js";
import { UsageError } from "./usage-error.js";

type OptionSpec = Record<string, { type: "string" } | { type: "boolean" }>;

export interface CliCommand {
  readonly noun: string;
  /** Absent for one-word commands (demo); two words for three-word commands (broker account create). */
  readonly verb?: string;
  readonly synopsis: string;
  readonly options: OptionSpec;
  readonly run: (
    runtime: Runtime,
    options: Readonly<Record<string, string | undefined>>,
    /** Tells a line of progress (on stderr: under --json, stdout holds the one JSON object). */
    progress: (line: string) => void,
  ) => Promise<{ readonly json: unknown; readonly text: string }>;
}

const str = { type: "string" } as const;

export const COMMANDS: readonly CliCommand[] = [
  {
    noun: "site",
    verb: "create",
    synopsis:
      "site create --kind whitelabel|geo --name NAME [--domain D] [--geo GEO_SITE_ID] [--support-company C] [--support-url U] [--support-email E]",
    options: {
      kind: str,
      name: str,
      domain: str,
      geo: str,
      "support-company": str,
      "support-url": str,
      "support-email": str,
    },
    async run(runtime, o) {
      const kind = required(o, "kind");
      if (kind !== "whitelabel" && kind !== "geo") throw new UsageError("--kind is whitelabel or geo");
      const site = await createSite(runtime, {
        kind,
        name: required(o, "name"),
        domain: o.domain,
        geoSiteId: optionalId(o, "geo"),
        supportCompanyName: o["support-company"],
        supportSiteUrl: o["support-url"],
        supportEmail: o["support-email"],
      });
      return { json: { Id: site.id }, text: `Created ${kind} site ${site.id}` };
    },
  },
  {
    noun: "person",
    verb: "create",
    synopsis:
      "person create --email E --first F --last L [--site SITE_ID] [--role admin|whitelabel-admin|geo-admin|person]",
    options: { email: str, first: str, last: str, site: str, role: str },
    async run(runtime, o) {
      const role = (o.role ?? "person") as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role is one of ${ROLES.join(", ")}`);
      const person = await createPerson(runtime, {
        email: required(o, "email"),
        firstName: required(o, "first"),
        lastName: required(o, "last"),
        role,
        siteId: optionalId(o, "site"),
      });
      return { json: { PersonId: person.personId }, text: `Created person ${person.personId} (${role})` };
    },
  },
  {
    noun: "platform",
    verb: "create",
    synopsis: "platform create --name NAME [--site WHITE_LABEL_SITE_ID]",
    options: { name: str, site: str },
    async run(runtime, o) {
      const platform = await createPlatform(runtime, {
        name: required(o, "name"),
        whiteLabelSiteId: optionalId(o, "site"),
      });
      return { json: { Id: platform.id }, text: `Created platform ${platform.id}` };
    },
  },
  {
    noun: "key",
    verb: "create",
    synopsis:
      "key create --person PERSON_ID [--expires ISO8601, UTC unless an offset is given] [--comment TEXT] [--platform PLATFORM_ID]",
    options: { person: str, expires: str, comment: str, platform: str },
    async run(runtime, o) {
      const personId = optionalId(o, "person");
      if (personId === undefined) throw new UsageError("--person is required");
      let expiresAt: Date | undefined;
      if (o.expires !== undefined) {
        // As the API reads date-times: UTC unless an offset is given, whatever the host's zone (TZ).
        const parsed = parseDateTime(o.expires);
        if (!parsed) {
          throw new UsageError(`--expires is not an ISO 8601 time such as 2027-12-31T00:00:00Z: ${o.expires}`);
        }
        expiresAt = parsed;
      }
      const key = await createKey(runtime, {
        personId,
        expiresAt,
        comment: o.comment,
        platformId: optionalId(o, "platform"),
      });
      return {
        json: { Id: key.id, AccessKey: key.accessKey },
        text: `Created key ${key.id} for person ${personId}. Its value, shown only now:\n${key.accessKey}`,
      };
    },
  },
  {
    noun: "key",
    verb: "list",
    synopsis: "key list [--person PERSON_ID]",
    options: { person: str },
    async run(runtime, o) {
      const keys = await listKeys(runtime, optionalId(o, "person"));
      const rows = keys.map((k) => ({
        Id: k.id,
        PersonId: k.personId,
        Email: k.email,
        Role: k.role,
        PlatformId: k.platformId,
        Comment: k.comment,
        CreateDate: k.createdAt.toISOString(),
        ExpiresDate: k.expiresAt?.toISOString() ?? null,
        RevokedDate: k.revokedAt?.toISOString() ?? null,
      }));
      const text = rows
        .map(
          (k) =>
            `${k.Id}\tperson ${k.PersonId} ${k.Email} (${k.Role})\tcreated ${k.CreateDate}` +
            (k.ExpiresDate ? `\texpires ${k.ExpiresDate}` : "") +
            (k.RevokedDate ? `\tREVOKED ${k.RevokedDate}` : "") +
            (k.Comment ? `\t${k.Comment}` : ""),
        )
        .join("\n");
      return { json: { Keys: rows }, text: text || "No keys" };
    },
  },
  {
    noun: "key",
    verb: "revoke",
    synopsis: "key revoke --id KEY_ID",
    options: { id: str },
    async run(runtime, o) {
      const id = optionalId(o, "id");
      if (id === undefined) throw new UsageError("--id is required");
      const revoked = await revokeKey(runtime, id);
      return {
        json: { Id: id, RevokedDate: revoked.revokedAt.toISOString() },
        text: `Key ${id} revoked at ${revoked.revokedAt.toISOString()}`,
      };
    },
  },
  {
    noun: "site",
    verb: "fund",
    synopsis: "site fund --id WHITE_LABEL_SITE_ID --amount DOLLARS   (credits the site's house account)",
    options: { id: str, amount: str },
    async run(runtime, o) {
      const siteId = requiredId(o, "id");
      const cents = dollarsOption(o, "amount", { zeroAllowed: false });
      const balance = await fundHouseAccount(runtime, siteId, cents);
      return {
        json: { SiteId: siteId, HouseAccountBalance: dollarsOf(balance) },
        text: `Site ${siteId}: house account balance ${dollarsOf(balance)}`,
      };
    },
  },
  {
    noun: "site",
    verb: "set",
    synopsis:
      "site set --id WHITE_LABEL_SITE_ID [--allow-negative-billing true|false] [--rule575-tolerance-bps BPS|default] [--rule575-window-seconds S|default]",
    options: {
      id: str,
      "allow-negative-billing": str,
      "rule575-tolerance-bps": str,
      "rule575-window-seconds": str,
    },
    async run(runtime, o) {
      const siteId = requiredId(o, "id");
      const allow = o["allow-negative-billing"];
      if (allow !== undefined && allow !== "true" && allow !== "false") {
        throw new UsageError("--allow-negative-billing is true or false");
      }
      const tolerance = rule575Option(
        o,
        "rule575-tolerance-bps",
        readToleranceBps,
        "basis points, 0 to 10000, to the hundredth",
      );
      const window = rule575Option(o, "rule575-window-seconds", readWindowSeconds, "whole seconds, 0 to 86400");
      if (allow === undefined && tolerance === undefined && window === undefined) {
        throw new UsageError("Give --allow-negative-billing, --rule575-tolerance-bps or --rule575-window-seconds");
      }
      const site = await setSiteSettings(runtime, siteId, {
        allowNegativeBilling: allow === undefined ? undefined : allow === "true",
        rule575ToleranceBps: tolerance,
        rule575WindowSeconds: window,
      });
      // The answer keeps its shape; the Rule 575 terms are added when they were set.
      const rule575Set = tolerance !== undefined || window !== undefined;
      return {
        json: {
          SiteId: site.siteId,
          AllowNegativeBilling: site.allowNegativeBilling,
          HouseAccountBalance: dollarsOf(site.houseAccountCents),
          ...(rule575Set
            ? {
                Rule575ToleranceBps: toNumber(site.rule575.toleranceBps),
                Rule575WindowSeconds: site.rule575.windowSeconds,
              }
            : {}),
        },
        text:
          `Site ${siteId}: negative billing ${site.allowNegativeBilling ? "allowed" : "not allowed"}` +
          (rule575Set
            ? `; Rule 575 tolerance ${formatDecimal(site.rule575.toleranceBps)} bps, window ${site.rule575.windowSeconds} s`
            : ""),
      };
    },
  },
  {
    noun: "strategy",
    verb: "price",
    synopsis: "strategy price --id STRATEGY_ID --monthly DOLLARS [--annual DOLLARS]   (the owner's subscription price)",
    options: { id: str, monthly: str, annual: str },
    async run(runtime, o) {
      const strategyId = requiredId(o, "id");
      const monthly = dollarsOption(o, "monthly", { zeroAllowed: true });
      const annual = o.annual === undefined ? null : dollarsOption(o, "annual", { zeroAllowed: false });
      const price = await setStrategyPrice(runtime, strategyId, monthly, annual);
      const annualCost = price.annualCents === null ? null : dollarsOf(price.annualCents);
      return {
        json: { StrategyId: strategyId, MonthlyCost: dollarsOf(price.monthlyCents), AnnualCost: annualCost },
        text: `Strategy ${strategyId}: ${dollarsOf(price.monthlyCents)} a month${annualCost === null ? "" : `, ${annualCost} a year`}`,
      };
    },
  },
  {
    noun: "demo",
    synopsis: "demo   (fills an empty database with demo sites, people, keys and strategies with a year of history)",
    options: {},
    async run(runtime, _options, progress) {
      const frame = openFrame(runtime.storage);
      const outcome = await seedDemo({ ...runtime, frame }, progress).finally(() => frame.close());
      if (outcome.kind === "skipped") throw new Refusal([{ name: "AlreadyExists", message: describeDemo(outcome) }]);
      return {
        json: {
          Sites: outcome.sites.map((site) => ({ Id: site.id, Kind: site.kind, Name: site.name })),
          Strategies: outcome.strategies.map((s) => ({ Id: s.id, Name: s.name, OwnerEmail: s.ownerEmail })),
          People: outcome.people.map((p) => ({
            PersonId: p.personId,
            Role: p.role,
            Email: p.email,
            SiteId: p.siteId,
            AccessKey: p.accessKey,
          })),
        },
        text: describeDemo(outcome),
      };
    },
  },
  ...PLAN_COMMANDS,
  ...BILLING_COMMANDS,
  ...BROKER_COMMANDS,
  ...MUX_COMMANDS,
  ...APPROVAL_COMMANDS,
];

/** A Rule 575 term as given: undefined when absent, null for `default`; a value the rule refuses is a usage error. */
function rule575Option<T>(
  options: Readonly<Record<string, string | undefined>>,
  name: string,
  read: (text: string) => T | null,
  what: string,
): T | null | undefined {
  const text = options[name];
  if (text === undefined) return undefined;
  if (text === "default") return null;
  const value = read(text);
  if (value === null) throw new UsageError(`--${name} is ${what}, or default`);
  return value;
}

export function usage(): string {
  return `Usage: npm run cli -- <command> [options] [--json]\n\n${COMMANDS.map((c) => `  ${c.synopsis}`).join("\n")}`;
}
