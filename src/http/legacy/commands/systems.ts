import type { Selectable } from "kysely";
import { isServiceAdmin } from "../../../core/access.js";
import { type Decimal, formatDecimal } from "../../../core/decimal.js";
import type { StrategyStatistics } from "../../../core/statistics.js";
import { strategyDetails } from "../../../services/strategy-details.js";
import { changeSystem, createSystem, type SystemChanges } from "../../../services/systems.js";
import type { StrategiesTable } from "../../../store/schema.js";
import { type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { integerOf, newYorkTime, service, system } from "./signals.js";

/**
 * The legacy system commands (API.md 4.7): the roster, details with
 * statistics, creating and changing systems, and the list of systems a key
 * reaches. A World key reaches its own person's systems (a service admin's,
 * all); a Private Platform key also those of its platform's site's people.
 */
type Strategy = Selectable<StrategiesTable>;
const RECENTLY_INACTIVE_MS = 30 * 86_400_000;

/** Who the key may act for: its own person, or (platform) the people of the platform's site. */
async function reachablePeople(ctx: LegacyRequestContext): Promise<{ all: true } | { all: false; ids: number[] }> {
  if (isServiceAdmin(ctx.caller)) return { all: true };
  const ids = [Number(ctx.caller.personId)];
  if (ctx.context === "platform" && ctx.platformId !== null) {
    const platform = await ctx.storage.db
      .selectFrom("platforms")
      .select("white_label_site_id")
      .where("id", "=", ctx.platformId)
      .executeTakeFirst();
    if (platform?.white_label_site_id != null) {
      const people = await ctx.storage.db
        .selectFrom("persons")
        .select("id")
        .where("white_label_site_id", "=", platform.white_label_site_id)
        .execute();
      ids.push(...people.map((p) => p.id));
    }
  }
  return { all: false, ids };
}

async function reachableSystems(ctx: LegacyRequestContext): Promise<(Strategy & { owner_alias: string | null })[]> {
  const people = await reachablePeople(ctx);
  let query = ctx.storage.db
    .selectFrom("strategies as st")
    .innerJoin("persons as p", "p.id", "st.owner_person_id")
    .selectAll("st")
    .select("p.alias as owner_alias");
  if (!people.all) query = query.where("st.owner_person_id", "in", people.ids);
  return query.orderBy("st.id").execute();
}

const flag = (value: number | null | undefined) => (value === 1 ? "1" : "0");
const textOf = (value: string | number | null | undefined) =>
  value === null || value === undefined ? "" : String(value);

/** Whether each system has shorted each kind of instrument. */
async function shortsOf(ctx: LegacyRequestContext, ids: readonly number[]) {
  if (ids.length === 0) return new Set<string>();
  const rows = await ctx.storage.db
    .selectFrom("orders")
    .select(["strategy_id", "symbol_type"])
    .where("strategy_id", "in", [...ids])
    .where("side", "=", "sell")
    .where("open_close", "=", "open")
    .groupBy(["strategy_id", "symbol_type"])
    .execute();
  return new Set(rows.map((r) => `${r.strategy_id}:${r.symbol_type}`));
}

/** One statistic as getSystemDetails shows it, with how to display it. */
interface StatisticEntry {
  readonly name: string;
  readonly value: (st: StrategyStatistics) => number | Decimal | string | null;
  readonly group: string;
  readonly helpText: string;
  readonly suffix?: string;
  readonly prefix?: string;
  readonly multiplier?: number;
  readonly precision: number;
}

const STATISTICS: readonly StatisticEntry[] = [
  {
    name: "return",
    value: (s) => s.return,
    group: "returns",
    helpText: "Cumulative, or annualized after a year (returnLabel)",
    suffix: "%",
    multiplier: 100,
    precision: 2,
  },
  {
    name: "returnLabel",
    value: (s) => s.returnLabel,
    group: "returns",
    helpText: "Cumulative or Annualized",
    precision: 0,
  },
  {
    name: "sp500Return",
    value: (s) => s.sp500Return,
    group: "returns",
    helpText: "The S&P 500 proxy over the same span",
    suffix: "%",
    multiplier: 100,
    precision: 2,
  },
  {
    name: "maxDrawdown",
    value: (s) => s.maxDrawdown,
    group: "risk",
    helpText: "Largest fall from a peak of equity",
    suffix: "%",
    multiplier: 100,
    precision: 2,
  },
  { name: "sharpe", value: (s) => s.sharpe, group: "risk", helpText: "Annualized Sharpe ratio", precision: 2 },
  { name: "sortino", value: (s) => s.sortino, group: "risk", helpText: "Annualized Sortino ratio", precision: 2 },
  {
    name: "calmar",
    value: (s) => s.calmar,
    group: "risk",
    helpText: "Annualized return over max drawdown",
    precision: 2,
  },
  { name: "alpha", value: (s) => s.alpha, group: "risk", helpText: "Jensen's alpha, annualized", precision: 4 },
  { name: "beta", value: (s) => s.beta, group: "risk", helpText: "Against the S&P 500 proxy", precision: 2 },
  {
    name: "correlationSP500",
    value: (s) => s.correlationSP500,
    group: "risk",
    helpText: "Correlation of daily returns",
    precision: 2,
  },
  { name: "numTrades", value: (s) => s.numTrades, group: "trades", helpText: "Closed trades", precision: 0 },
  {
    name: "percentWinTrades",
    value: (s) => s.percentWinTrades,
    group: "trades",
    helpText: "Closed trades that won",
    suffix: "%",
    multiplier: 100,
    precision: 1,
  },
  {
    name: "profitFactor",
    value: (s) => s.profitFactor,
    group: "trades",
    helpText: "Sum of winners over sum of losers",
    precision: 2,
  },
  {
    name: "avgWinDollars",
    value: (s) => s.avgWinDollars,
    group: "trades",
    helpText: "Average winning trade",
    prefix: "$",
    precision: 2,
  },
  {
    name: "avgLossDollars",
    value: (s) => s.avgLossDollars,
    group: "trades",
    helpText: "Average losing trade",
    prefix: "$",
    precision: 2,
  },
  {
    name: "avgTradeDuration",
    value: (s) => s.avgTradeDuration,
    group: "trades",
    helpText: "Days",
    suffix: " days",
    precision: 1,
  },
  {
    name: "winMonthsInUI",
    value: (s) => s.winMonthsInUI,
    group: "months",
    helpText: "Winning months of all months",
    precision: 0,
  },
  {
    name: "ageInDays",
    value: (s) => s.ageInDays,
    group: "age",
    helpText: "Days since the system started",
    suffix: " days",
    precision: 0,
  },
];

function statisticsOf(st: StrategyStatistics) {
  const out: Record<string, unknown> = {};
  for (const entry of STATISTICS) {
    const raw = entry.value(st);
    out[entry.name] = {
      value: raw === null ? "" : typeof raw === "bigint" ? formatDecimal(raw) : String(raw),
      metainfo: {
        bunch: "statistics",
        dataset: "model account",
        group: entry.group,
        suffix: entry.suffix ?? "",
        helpText: entry.helpText,
        category: entry.group,
        precision: String(entry.precision),
        prefix: entry.prefix ?? "",
        multiplier: String(entry.multiplier ?? 1),
      },
    };
  }
  return out;
}

function bool(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const text = String(value).trim();
  if (text !== "0" && text !== "1") throw new LegacyFailure("Invalid value", `${field} must be 0 or 1`);
  return text === "1";
}

function whole(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const text = String(value).trim();
  if (!/^-?\d{1,15}$/.test(text)) throw new LegacyFailure("Invalid value", `${field} must be a whole number`);
  return Number(text);
}

const textField = (value: unknown) => (value === undefined || value === null ? undefined : String(value));

export const systemCommands: readonly LegacyCommand[] = [
  {
    name: "getSystemRoster",
    contexts: ["world"],
    async handler(ctx, request) {
      const filter = String(request.filter ?? "active");
      if (filter !== "active" && filter !== "recently_active") {
        throw new LegacyFailure("Invalid value", "filter must be active or recently_active");
      }
      const now = ctx.clock.nowMs();
      const systems = (await reachableSystems(ctx)).filter(
        (s) =>
          s.is_alive === 1 ||
          (filter === "recently_active" && s.inactive_since !== null && now - s.inactive_since <= RECENTLY_INACTIVE_MS),
      );
      const shorts = await shortsOf(
        ctx,
        systems.map((s) => s.id),
      );
      return {
        response: systems.map((s) => ({
          system_id: String(s.id),
          ownerpersonid: String(s.owner_person_id),
          trades_stocks: flag(s.trades_stocks),
          trades_stocks_short: shorts.has(`${s.id}:stock`) ? "1" : "0",
          trades_options: flag(s.trades_options),
          trades_options_short: shorts.has(`${s.id}:option`) ? "1" : "0",
          trades_forex: flag(s.trades_forex),
          trades_futures: flag(s.trades_futures),
          minimum_portfolio_size_required: textOf(s.minimum_portfolio),
          freeTrialPeriodDays: textOf(s.trial_days ?? 0),
          owner_screenname: s.owner_alias ?? "",
          created_when: newYorkTime(s.created_at).text,
          system_name: s.name,
          recently_inactive_since: newYorkTime(s.inactive_since).text,
          equitycurve_startingcapital: s.starting_capital,
          monthlyFee: s.monthly_cost,
          isAlive: flag(s.is_alive),
        })),
      };
    },
  },
  {
    name: "listAllSystems",
    contexts: ["world", "platform"],
    async handler(ctx) {
      return {
        response: (await reachableSystems(ctx)).map((s) => ({
          longDescription: s.long_description ?? "",
          system_id: String(s.id),
          systemName: s.name,
          monthlyFee: s.monthly_cost,
          createdWhen: newYorkTime(s.created_at).text,
          isAlive: flag(s.is_alive),
          shortDescription: s.short_description ?? "",
          freeTrialPeriodDays: textOf(s.trial_days ?? 0),
          creatorScreenName: s.owner_alias ?? "",
        })),
      };
    },
  },
  {
    name: "getSystemDetails",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId, acting } = await system(ctx, request);
      const details = await service(() => strategyDetails(acting, strategyId));
      const s = details.strategy;
      const shorts = await shortsOf(ctx, [strategyId]);
      const now = newYorkTime(ctx.clock.nowMs());
      const account = details.account;
      return {
        response: {
          system_id: String(s.id),
          systemName: s.name,
          ownerpersonid: String(s.owner_person_id),
          owner_screenname: details.ownerName,
          longDescription: s.long_description ?? "",
          shortDescription: s.short_description ?? "",
          createdWhen: newYorkTime(s.created_at).text,
          monthlyFee: s.monthly_cost,
          freeTrialPeriodDays: textOf(s.trial_days ?? 0),
          minimum_portfolio_size_required: textOf(s.minimum_portfolio),
          equitycurve_startingcapital: s.starting_capital,
          isAlive: flag(s.is_alive),
          test_system: flag(s.is_test),
          trades_stocks: flag(s.trades_stocks),
          trades_options: flag(s.trades_options),
          trades_futures: flag(s.trades_futures),
          trades_forex: flag(s.trades_forex),
          shorts_stocks: shorts.has(`${s.id}:stock`) ? "1" : "0",
          shorts_options: shorts.has(`${s.id}:option`) ? "1" : "0",
          trades_own_system_percent: "0",
          trades_own_system_count: "0",
          creditSystemTimeUntil_epochSecs:
            s.credit_system_until === null ? "" : String(Math.floor(s.credit_system_until / 1000)),
          creditSystemTimeUntil_clock: newYorkTime(s.credit_system_until).text,
          marginEquityData: {
            buyPower: formatDecimal(account.buyingPower),
            modelAccountValue: formatDecimal(account.equity),
            marginUsed: formatDecimal(account.marginUsed),
            equity: formatDecimal(account.equity),
            cash: formatDecimal(account.cash),
            updatedLastTimeET: now.text,
            systemid: String(s.id),
          },
          statistics: statisticsOf(details.statistics),
        },
      };
    },
  },
  {
    name: "createNewSystem",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const ownerPersonId =
        request.ownerpersonid === undefined
          ? Number(ctx.caller.personId)
          : integerOf(request.ownerpersonid, "ownerpersonid");
      const people = await reachablePeople(ctx);
      if (!people.all && !people.ids.includes(ownerPersonId)) {
        throw new LegacyFailure(
          "Unable to access this person",
          `This apikey cannot create systems for person ${ownerPersonId}`,
        );
      }
      const visibility = bool(request.site_visibility_status, "site_visibility_status");
      const id = await service(() =>
        createSystem(ctx, {
          ownerPersonId,
          name: String(request.name ?? ""),
          startingCapital: String(request.startingcapital ?? ""),
          longDescription: textField(request.longDescription),
          isPublic: visibility === true,
          creditSystemSeconds: whole(request.creditSystemTimeInSeconds, "creditSystemTimeInSeconds"),
        }),
      );
      return { success: { NewSystemID: String(id) } };
    },
  },
  {
    name: "changeSystemAttribute",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId } = await system(ctx, request);
      const people = await reachablePeople(ctx);
      const changes: SystemChanges = {
        name: textField(request.name),
        longDescription: textField(request.longDescription),
        shortDescription: textField(request.shortDescription),
        ownerPersonId:
          request.ownerpersonid === undefined ? undefined : integerOf(request.ownerpersonid, "ownerpersonid"),
        startingCapital: textField(request.equitycurve_startingcapital),
        monthlyFee: whole(request.monthlyfee, "monthlyfee"),
        trialDays: whole(request.trialdays, "trialdays"),
        creditSystemSeconds: whole(request.creditSystemTimeInSeconds, "creditSystemTimeInSeconds"),
        freeSignalCredits: whole(request.freeSignalEntryCredits, "freeSignalEntryCredits"),
        isTest: bool(request.test_system, "test_system"),
        isAlive: bool(request.isAlive, "isAlive"),
        minimumPortfolio: textField(request.minimum_portfolio_size_required),
      };
      const done = await service(() =>
        changeSystem(
          ctx,
          strategyId,
          changes,
          async (ownerId) => people.all || (ctx.context === "platform" && people.ids.includes(ownerId)),
        ),
      );
      return { success: { changes: done } };
    },
  },
];
