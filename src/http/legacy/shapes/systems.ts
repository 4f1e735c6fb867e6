import { Type } from "@sinclair/typebox";
import { Flag, NewYorkTime, ResponseList, Text } from "./values.js";

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

export const GetSystemRoster = {
  answer: ResponseList(RosterEntry),
};

export const ListAllSystems = { answer: ResponseList(ReachedSystem) };

export const GetSystemDetails = {
  answer: Type.Object({ response: SystemDetails }),
};

export const CreateNewSystem = {
  answer: Type.Object({ success: Type.Object({ NewSystemID: Text() }) }),
};

export const ChangeSystemAttribute = {
  answer: Type.Object({
    success: Type.Object({ changes: Type.Array(Text(), { description: "What changed, e.g. 'name updated'" }) }),
  }),
};
