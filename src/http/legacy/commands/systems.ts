import { Type } from "@sinclair/typebox";
import { type Decimal, formatDecimal } from "../../../core/decimal.js";
import type { StrategyStatistics } from "../../../core/statistics.js";
import { strategyDetails } from "../../../services/strategy-details.js";
import {
  changeSystem,
  createSystem,
  reachedSystems,
  type SystemChanges,
  shortedKinds,
  systemRoster,
} from "../../../services/systems.js";
import { defineLegacyCommand, type LegacyCommand, LegacyFailure } from "../command.js";
import { decimalText, type FieldOptions, flag as flagField, id, text, wholeNumber } from "../fields.js";
import { mustReachPerson, personOr, systemActedFor } from "../reach.js";
import {
  ChangeSystemAttribute,
  CreateNewSystem,
  GetSystemDetails,
  GetSystemRoster,
  ListAllSystems,
} from "../shapes/systems.js";
import { newYorkTime } from "./signals.js";

/**
 * The legacy system commands (API.md 4.7): the roster, details with
 * statistics, creating and changing systems, and the list of systems a key
 * reaches. A World key reaches its own person's systems (a service admin's,
 * all); a Private Platform key also those of its platform's site's people.
 */
const flag = (value: number | null | undefined) => (value === 1 ? "1" : "0");
const textOf = (value: string | number | null | undefined) =>
  value === null || value === undefined ? "" : String(value);

/** "1" when the system has sold to open that kind of instrument. */
const shortFlag = (shorted: ReadonlyMap<number, ReadonlySet<string>>, strategyId: number, kind: string) =>
  shorted.get(strategyId)?.has(kind) ? "1" : "0";

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

/** What the system commands' fields that cannot be read answer with, as for values their rules refuse. */
const VALUE: FieldOptions = { failure: "InvalidValue" };

/** An optional 0/1 flag: undefined when not given. */
const flagOf = (value: string | undefined) => (value?.trim() ? value.trim() === "1" : undefined);

/** An optional whole number: undefined when not given. */
const wholeOf = (value: string | undefined) => (value?.trim() ? Number(value) : undefined);

/** An optional decimal or word: undefined when not given ("" is "not given", as for the flags and whole numbers). */
const givenOf = (value: string | undefined) => (value?.trim() ? value : undefined);

export const systemCommands: readonly LegacyCommand[] = [
  defineLegacyCommand({
    name: "getSystemRoster",
    summary: "The public systems that are alive (active) or stopped lately (recently_active). World context only.",
    answer: GetSystemRoster.answer,
    contexts: ["world"],
    input: Type.Object({ filter: Type.Optional(text(40, VALUE)) }),
    async handler(ctx, input) {
      const filter = givenOf(input.filter)?.trim() ?? "active";
      if (filter !== "active" && filter !== "recently_active") {
        throw new LegacyFailure("InvalidValue", "filter must be active or recently_active");
      }
      const systems = await systemRoster(ctx, ctx.platformId, filter);
      const shorted = await shortedKinds(
        ctx,
        systems.map((s) => s.id),
      );
      return {
        response: systems.map((s) => ({
          system_id: String(s.id),
          ownerpersonid: String(s.owner_person_id),
          trades_stocks: flag(s.trades_stocks),
          trades_stocks_short: shortFlag(shorted, s.id, "stock"),
          trades_options: flag(s.trades_options),
          trades_options_short: shortFlag(shorted, s.id, "option"),
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
  }),
  defineLegacyCommand({
    name: "listAllSystems",
    contexts: ["world", "platform"],
    summary:
      "The systems with real-time access: its person's own (a Private Platform key: also those of its site's people) and those the person's subscription gives access to.",
    answer: ListAllSystems.answer,
    input: Type.Object({}),
    async handler(ctx) {
      return {
        response: (await reachedSystems(ctx, ctx.platformId, { subscribed: true })).map((s) => ({
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
  }),
  defineLegacyCommand({
    name: "getSystemDetails",
    contexts: ["world", "platform"],
    summary: "A system's description, model account and statistics.",
    answer: GetSystemDetails.answer,
    input: Type.Object({ systemid: id() }),
    async handler(ctx, { systemid }) {
      const { strategyId, acting } = await systemActedFor(ctx, systemid);
      const details = await strategyDetails(acting, strategyId);
      const s = details.strategy;
      const shorted = await shortedKinds(ctx, [strategyId]);
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
          shorts_stocks: shortFlag(shorted, s.id, "stock"),
          shorts_options: shortFlag(shorted, s.id, "option"),
          trades_own_system_percent: formatDecimal(details.autotrade.ownSystemPercent),
          trades_own_system_count: String(details.autotrade.ownSystemAccounts),
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
  }),
  defineLegacyCommand({
    name: "createNewSystem",
    contexts: ["world", "platform"],
    summary: "Creates a system for the key's person or, for a platform key, a person of its site.",
    answer: CreateNewSystem.answer,
    input: Type.Object({
      name: text(40, VALUE),
      startingcapital: decimalText(VALUE),
      longDescription: Type.Optional(text(8000, { ...VALUE, free: true })),
      ownerpersonid: Type.Optional(id()),
      creditSystemTimeInSeconds: Type.Optional(wholeNumber(VALUE)),
      site_visibility_status: Type.Optional(flagField(VALUE)),
    }),
    async handler(ctx, input) {
      const ownerPersonId = personOr(ctx, input.ownerpersonid);
      await mustReachPerson(ctx, ownerPersonId, `This apikey cannot create systems for person ${ownerPersonId}`);
      const systemId = await createSystem(ctx, {
        ownerPersonId,
        name: input.name,
        startingCapital: input.startingcapital,
        longDescription: input.longDescription,
        isPublic: flagOf(input.site_visibility_status) === true,
        creditSystemSeconds: wholeOf(input.creditSystemTimeInSeconds),
      });
      return { success: { NewSystemID: String(systemId) } };
    },
  }),
  defineLegacyCommand({
    name: "changeSystemAttribute",
    contexts: ["world", "platform"],
    summary:
      "Changes a system's name, descriptions, owner, starting capital (until it trades), fees and flags; answers what changed.",
    answer: ChangeSystemAttribute.answer,
    input: Type.Object({
      systemid: id(),
      name: Type.Optional(text(40, VALUE)),
      longDescription: Type.Optional(text(8000, { ...VALUE, free: true })),
      shortDescription: Type.Optional(text(255, { ...VALUE, free: true })),
      ownerpersonid: Type.Optional(id()),
      equitycurve_startingcapital: Type.Optional(decimalText(VALUE)),
      monthlyfee: Type.Optional(wholeNumber(VALUE)),
      trialdays: Type.Optional(wholeNumber(VALUE)),
      creditSystemTimeInSeconds: Type.Optional(wholeNumber(VALUE)),
      freeSignalEntryCredits: Type.Optional(wholeNumber(VALUE)),
      test_system: Type.Optional(flagField(VALUE)),
      isAlive: Type.Optional(flagField(VALUE)),
      minimum_portfolio_size_required: Type.Optional(decimalText(VALUE)),
    }),
    async handler(ctx, input) {
      const { strategyId } = await systemActedFor(ctx, input.systemid);
      const changes: SystemChanges = {
        name: input.name,
        longDescription: input.longDescription,
        shortDescription: input.shortDescription,
        ownerPersonId: input.ownerpersonid,
        startingCapital: givenOf(input.equitycurve_startingcapital),
        monthlyFee: wholeOf(input.monthlyfee),
        trialDays: wholeOf(input.trialdays),
        creditSystemSeconds: wholeOf(input.creditSystemTimeInSeconds),
        freeSignalCredits: wholeOf(input.freeSignalEntryCredits),
        isTest: flagOf(input.test_system),
        isAlive: flagOf(input.isAlive),
        minimumPortfolio: givenOf(input.minimum_portfolio_size_required),
      };
      const owner = changes.ownerPersonId;
      if (owner !== undefined) {
        await mustReachPerson(ctx, owner, `This apikey cannot give systems to person ${owner}`);
      }
      const done = await changeSystem(ctx, strategyId, changes);
      return { success: { changes: done } };
    },
  }),
];
