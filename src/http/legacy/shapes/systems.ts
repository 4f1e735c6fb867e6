import { Type } from "@sinclair/typebox";
import {
  AmountIn,
  CountIn,
  Flag,
  FlagIn,
  NewYorkTime,
  OneOf,
  ResponseList,
  SystemIdIn,
  Text,
  WholeIn,
} from "./values.js";

/** The system commands' requests and answers: the roster, details, creating and changing systems. */

const RosterEntry = Type.Object(
  {
    system_id: Text(),
    ownerpersonid: Text(),
    trades_stocks: Flag(),
    trades_stocks_short: Flag(),
    trades_options: Flag(),
    trades_options_short: Flag(),
    trades_forex: Flag(),
    trades_futures: Flag(),
    minimum_portfolio_size_required: Text(),
    freeTrialPeriodDays: Text(),
    owner_screenname: Text(),
    created_when: NewYorkTime("Created"),
    system_name: Text(),
    recently_inactive_since: NewYorkTime("Stopped"),
    equitycurve_startingcapital: Text(),
    monthlyFee: Text(),
    isAlive: Flag(),
  },
  { title: "LegacyRosterEntry" },
);

const ReachedSystem = Type.Object(
  {
    longDescription: Text(),
    system_id: Text(),
    systemName: Text(),
    monthlyFee: Text(),
    createdWhen: NewYorkTime("Created"),
    isAlive: Flag(),
    shortDescription: Text(),
    freeTrialPeriodDays: Text(),
    creatorScreenName: Text(),
  },
  { title: "LegacySystem" },
);

const Statistic = Type.Object(
  {
    value: Text("Empty when not known yet"),
    metainfo: Type.Object({
      bunch: Text(),
      dataset: Text(),
      group: Text(),
      suffix: Text(),
      helpText: Text(),
      category: Text(),
      precision: Text(),
      prefix: Text(),
      multiplier: Text(),
    }),
  },
  { title: "LegacyStatistic" },
);

const SystemDetails = Type.Object(
  {
    system_id: Text(),
    systemName: Text(),
    ownerpersonid: Text(),
    owner_screenname: Text(),
    longDescription: Text(),
    shortDescription: Text(),
    createdWhen: NewYorkTime("Created"),
    monthlyFee: Text(),
    freeTrialPeriodDays: Text(),
    minimum_portfolio_size_required: Text(),
    equitycurve_startingcapital: Text(),
    isAlive: Flag(),
    test_system: Flag(),
    trades_stocks: Flag(),
    trades_options: Flag(),
    trades_futures: Flag(),
    trades_forex: Flag(),
    shorts_stocks: Flag(),
    shorts_options: Flag(),
    trades_own_system_percent: Text(),
    trades_own_system_count: Text(),
    creditSystemTimeUntil_epochSecs: Text(),
    creditSystemTimeUntil_clock: NewYorkTime("Credit time ends"),
    marginEquityData: Type.Object({
      buyPower: Text(),
      modelAccountValue: Text(),
      marginUsed: Text(),
      equity: Text(),
      cash: Text(),
      updatedLastTimeET: NewYorkTime("Read"),
      systemid: Text(),
    }),
    statistics: Type.Object(
      {},
      { additionalProperties: Statistic, description: "By name: return, sharpe, maxDrawdown..." },
    ),
  },
  { title: "LegacySystemDetails" },
);

const name = Type.String({ maxLength: 200, description: "3 to 40 letters, digits, spaces, apostrophes, # or /" });
const capital = (description: string) => AmountIn(`${description}: 1000 to 10000000`);
const longDescription = Type.String({ description: "Up to 8000 characters" });

export const GetSystemRoster = {
  input: Type.Object({
    filter: Type.Optional(OneOf(["active", "recently_active"], "active when absent")),
  }),
  answer: ResponseList(RosterEntry),
};

export const ListAllSystems = { input: Type.Object({}), answer: ResponseList(ReachedSystem) };

export const GetSystemDetails = {
  input: Type.Object({ systemid: SystemIdIn }),
  answer: Type.Object({ response: SystemDetails }),
};

export const CreateNewSystem = {
  input: Type.Object({
    name,
    startingcapital: capital("Starting capital"),
    ownerpersonid: Type.Optional(WholeIn("The owner; the key's own person when absent")),
    longDescription: Type.Optional(longDescription),
    creditSystemTimeInSeconds: Type.Optional(CountIn("0 to 86400*365*20")),
    site_visibility_status: Type.Optional(FlagIn("1: public from the start")),
  }),
  answer: Type.Object({ success: Type.Object({ NewSystemID: Text() }) }),
};

export const ChangeSystemAttribute = {
  input: Type.Object({
    systemid: SystemIdIn,
    name: Type.Optional(name),
    longDescription: Type.Optional(longDescription),
    shortDescription: Type.Optional(Type.String({ description: "Up to 255 characters" })),
    ownerpersonid: Type.Optional(WholeIn("The new owner")),
    equitycurve_startingcapital: Type.Optional(capital("Starting capital, until the system trades")),
    monthlyfee: Type.Optional(CountIn("Dollars a month")),
    trialdays: Type.Optional(CountIn("Days of free trial")),
    creditSystemTimeInSeconds: Type.Optional(CountIn("0 to 86400*365*20")),
    freeSignalEntryCredits: Type.Optional(CountIn("0 to 9999999999")),
    test_system: Type.Optional(FlagIn("1: a test system")),
    isAlive: Type.Optional(FlagIn("0 stops the system")),
    minimum_portfolio_size_required: Type.Optional(capital("Minimum portfolio")),
  }),
  answer: Type.Object({
    success: Type.Object({ changes: Type.Array(Text(), { description: "What changed, e.g. 'name updated'" }) }),
  }),
};
