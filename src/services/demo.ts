import { type Caller, membership, type Role } from "../core/access.js";
import { asPersonId } from "../core/ids.js";
import { withTransaction } from "../store/transaction.js";
import { type DemoTrader, tradeDemoHistory } from "./demo-history.js";
import { createKey } from "./keys.js";
import { addKycInfo } from "./kyc.js";
import { createPerson } from "./people.js";
import { addProfile, type NewProfile } from "./profiles.js";
import { dbOf, type Runtime } from "./runtime.js";
import { createSite } from "./sites.js";
import type { TradingRuntime } from "./trading.js";

/** One person of the demo data with a key to call the service as them. */
export interface DemoPerson {
  readonly role: Role;
  readonly email: string;
  readonly personId: number;
  readonly siteId: number | null;
  readonly accessKey: string;
}

export type DemoOutcome =
  | {
      readonly kind: "created";
      readonly sites: readonly DemoSite[];
      readonly people: readonly DemoPerson[];
      readonly strategies: readonly DemoStrategy[];
    }
  | { readonly kind: "skipped"; readonly reason: string };

export interface DemoStrategy {
  readonly id: number;
  readonly name: string;
  readonly ownerEmail: string;
}

export interface DemoSite {
  readonly id: number;
  readonly kind: "whitelabel" | "geo";
  readonly name: string;
}

const PASSWORD = "demo password 2026";

/**
 * Fills an empty database with a geo-site, two white-label sites (one inside
 * the geo-site), their administrators and customers, each with a key, and
 * three customers' strategies with a year of trading history made by the
 * engine, so a newcomer can call every operation at once. Customers are signed up through
 * AddProfile's own rules, as their site's administrator.
 */
export async function seedDemo(
  runtime: Runtime & Pick<TradingRuntime, "frame">,
  /** Told a line per phase as the seeding goes (it takes seconds). */
  progress: (line: string) => void = () => undefined,
): Promise<DemoOutcome> {
  const db = dbOf(runtime);
  const site = await db.selectFrom("sites").select("id").limit(1).executeTakeFirst();
  const customer = await db.selectFrom("persons").select("id").where("role", "!=", "admin").limit(1).executeTakeFirst();
  if (site || customer) {
    return {
      kind: "skipped",
      reason: "the database already holds sites or people: demo data goes into an empty one only",
    };
  }
  progress("demo data: sites and their administrators");
  const geo = await createSite(runtime, {
    kind: "geo",
    name: "Demo Europe",
    domain: "eu.demo.example",
    supportCompanyName: "Demo Europe Support",
    supportSiteUrl: "https://eu.demo.example/support",
    supportEmail: "support@eu.demo.example",
  });
  const alpine = await createSite(runtime, {
    kind: "whitelabel",
    name: "Alpine Brokerage",
    domain: "alpine.demo.example",
    geoSiteId: geo.id,
    supportCompanyName: "Alpine Brokerage AG",
    supportSiteUrl: "https://alpine.demo.example/help",
    supportEmail: "help@alpine.demo.example",
  });
  const harbor = await createSite(runtime, {
    kind: "whitelabel",
    name: "Harbor Trading",
    domain: "harbor.demo.example",
    supportEmail: "desk@harbor.demo.example",
  });
  const people: DemoPerson[] = [];
  const operator = async (role: Role, email: string, first: string, last: string, siteId?: number) => {
    // The person and their key commit together.
    const { personId, accessKey } = await withTransaction(runtime, async (ctx) => {
      const person = await createPerson(ctx, { email, firstName: first, lastName: last, role, siteId });
      const key = await createKey(ctx, { personId: person.personId, comment: "demo" });
      return { personId: person.personId, accessKey: key.accessKey };
    });
    people.push({ role, email, personId, siteId: siteId ?? null, accessKey });
    return personId;
  };
  await operator("admin", "admin@demo.example", "Demo", "Administrator");
  const geoAdmin = await operator("geo-admin", "admin@eu.demo.example", "Greta", "Lindqvist", geo.id);
  const alpineAdmin = await operator("whitelabel-admin", "admin@alpine.demo.example", "Jonas", "Keller", alpine.id);
  const harborAdmin = await operator("whitelabel-admin", "admin@harbor.demo.example", "Olivia", "Brooks", harbor.id);

  const as = (personId: number, role: Role, whiteLabelSiteId: number | null, geoSiteId: number | null): Caller => ({
    personId: asPersonId(personId),
    role,
    ...membership(whiteLabelSiteId, geoSiteId),
    platformId: null,
  });
  const customers: [Caller, NewProfile][] = [
    [
      as(alpineAdmin, "whitelabel-admin", alpine.id, geo.id),
      profile("Anna", "Müller", "anna.m", "deu", "DE", "BY", "+4915112345678", {
        whiteLabelSiteId: alpine.id,
        ipAddress: "198.51.100.23",
        city: "München",
      }),
    ],
    [
      as(alpineAdmin, "whitelabel-admin", alpine.id, geo.id),
      profile("Luca", "Rossi", "luca_trades", "ita", "IT", "MI", "+393471234567", { city: "Milano" }),
    ],
    [
      as(harborAdmin, "whitelabel-admin", harbor.id, null),
      profile("John", "Carter", "jcarter", "eng", "US", "NY", "+12125550123", {
        whiteLabelSiteId: harbor.id,
        ipAddress: "203.0.113.41",
        city: "New York",
      }),
    ],
    [
      as(harborAdmin, "whitelabel-admin", harbor.id, null),
      profile("Mei", "Chen", "mei.chen", "zho", "US", "CA", "+14155552671", { city: "San Francisco" }),
    ],
    [
      as(geoAdmin, "geo-admin", null, geo.id),
      profile("Sophie", "Martin", "sophie.m", "fra", "FR", "75C", "+33612345678", { city: "Paris" }),
    ],
  ];
  progress("demo data: customers, with profiles and KYC data");
  const customerCallers = new Map<string, Caller>();
  for (const [caller, input] of customers) {
    const ctx = { ...runtime, caller };
    const added = await addProfile(ctx, input);
    customerCallers.set(input.email, {
      personId: asPersonId(added.personId),
      role: "person",
      ...membership(caller.whiteLabelSiteId, caller.geoSiteId),
      platformId: null,
    });
    const key = await createKey(runtime, { personId: added.personId, comment: "demo" });
    people.push({
      role: "person",
      email: input.email,
      personId: added.personId,
      siteId: caller.whiteLabelSiteId ?? caller.geoSiteId,
      accessKey: key.accessKey,
    });
    if (input.screenName === "anna.m") {
      await addKycInfo(ctx, {
        userToken: added.userToken,
        firstName: "Anna",
        lastName: "Müller",
        email: "anna.mueller@mail.demo.example",
        phone: "+4915112345678",
        isPhoneVerified: true,
        street: "Leopoldstraße 12",
        city: "München",
        province: "Bayern",
        postCode: "80802",
        country: "DE",
        photoId1: "kyc-provider://documents/passport-0001",
        photoId1Title: "Passport",
      });
    }
  }
  const alpineCreator = as(alpineAdmin, "whitelabel-admin", alpine.id, geo.id);
  const harborCreator = as(harborAdmin, "whitelabel-admin", harbor.id, null);
  const plans: (Omit<DemoTrader, "owner"> & { ownerEmail: string })[] = [
    {
      name: "Alpine Momentum",
      ownerEmail: "annam@mail.demo.example",
      creator: alpineCreator,
      isPublic: true,
      startingCapital: 100_000,
      symbols: ["AAPL", "MSFT", "NVDA"],
      size: [20, 100],
      brackets: false,
      shorts: false,
    },
    {
      name: "Harbor FX Swing",
      ownerEmail: "jcarter@mail.demo.example",
      creator: harborCreator,
      isPublic: true,
      startingCapital: 50_000,
      symbols: ["EURUSD", "GBPUSD"],
      size: [10_000, 50_000],
      brackets: false,
      shorts: true,
    },
    {
      name: "Index Brackets",
      ownerEmail: "meichen@mail.demo.example",
      creator: harborCreator,
      isPublic: false,
      startingCapital: 250_000,
      symbols: ["SPY", "QQQ"],
      size: [10, 50],
      brackets: true,
      shorts: true,
    },
  ];
  const traders = plans.map((plan) => ({ ...plan, owner: customerCallers.get(plan.ownerEmail) as Caller }));
  progress("demo data: strategies traded through a little more than a year");
  const strategyIds = await tradeDemoHistory(runtime, traders, runtime.clock.nowMs(), progress);
  progress("demo data: done");
  return {
    kind: "created",
    strategies: traders.map((trader, i) => ({
      id: strategyIds[i] as number,
      name: trader.name,
      ownerEmail: trader.ownerEmail,
    })),
    sites: [
      { id: geo.id, kind: "geo", name: "Demo Europe" },
      { id: alpine.id, kind: "whitelabel", name: "Alpine Brokerage" },
      { id: harbor.id, kind: "whitelabel", name: "Harbor Trading" },
    ],
    people,
  };
}

function profile(
  firstName: string,
  lastName: string,
  screenName: string,
  language: string,
  countryCode: string,
  divisionCode: string,
  phone: string,
  extra: Partial<NewProfile>,
): NewProfile {
  const email = `${screenName.replace(/[^a-z0-9]/gi, "")}@mail.demo.example`;
  return {
    firstName,
    lastName,
    screenName,
    email,
    password: PASSWORD,
    language,
    countryCode,
    divisionCode,
    phone,
    ...extra,
  };
}

/** The demo people as a table an operator can read. */
export function describeDemo(outcome: DemoOutcome): string {
  if (outcome.kind === "skipped") return `Demo data skipped: ${outcome.reason}`;
  const sites = outcome.sites.map((s) => `  site ${s.id}  ${s.kind.padEnd(10)}  ${s.name}`).join("\n");
  const people = outcome.people
    .map((p) => `  ${String(p.personId).padStart(3)}  ${p.role.padEnd(16)}  ${p.email.padEnd(32)}  ${p.accessKey}`)
    .join("\n");
  const strategies = outcome.strategies
    .map((s) => `  strategy ${s.id}  ${s.name.padEnd(18)}  owned by ${s.ownerEmail}`)
    .join("\n");
  return `Demo data created.\n\nSites:\n${sites}\n\nPeople (person id, role, email, access key):\n${people}\n\nStrategies, with a year of trading history:\n${strategies}\n`;
}
