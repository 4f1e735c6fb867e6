import { Type } from "@sinclair/typebox";
import { MAX_SCALING_PERCENTAGE } from "../../core/autotrade/settings.js";
import { Amount, Id } from "./schemas.js";

/**
 * The StartAutotrade body (API.md 4.3, with the field names the issue gives):
 * one schema for GEN and GEO's start and WL's approval request under both
 * spellings.
 */
const INT32_MAX = 2_147_483_647;
const Maximum = (description: string) => Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX, description }));

export const START_AUTOTRADE_FIELDS = {
  Account: Type.String({ minLength: 1, maxLength: 64, description: "The brokerage account number" }),
  PersonId: Id({ description: "The account holder" }),
  StrategyId: Id({ description: "A strategy the person follows or owns" }),
  BrokerId: Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "int32 (GetBrokers)" }),
  ScalingPercentage: Amount({
    description: `Percent of the strategy's size copied: above 0, at most ${MAX_SCALING_PERCENTAGE}`,
  }),
  EnableFutures: Type.Optional(Type.Boolean({ description: "Default false" })),
  MaxFuturesContracts: Maximum("Contracts per position"),
  EnableForex: Type.Optional(Type.Boolean({ description: "Default false" })),
  MaxForexUnits: Maximum("Units per position; one unit is 1,000 currency units"),
  EnableStocks: Type.Optional(Type.Boolean({ description: "Default false" })),
  MaxStocksDollars: Maximum("Whole dollars per position"),
  TradeStocksAsCFD: Type.Optional(
    Type.Boolean({
      description:
        "An addition to the spec's body (default false): stocks are traded as CFDs; where the geo-site requires account approval, the approval must allow CFDs (IsCFD)",
    }),
  ),
  EnableOptions: Type.Optional(Type.Boolean({ description: "Default false" })),
  EnableOptionsShorting: Type.Optional(Type.Boolean({ description: "Default false" })),
  MaxOptionsContracts: Maximum("Contracts per position"),
  DoNotJoinOpenPositions: Type.Optional(
    Type.Boolean({ description: "New setups only: true is refused when modifying a live setup" }),
  ),
  AutoStopLossDollars: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: 1_000_000_000,
      description: "Loss in dollars at which an automatic stop loss closes a copied position",
    }),
  ),
  BrokerUsername: Type.Optional(Type.String({ maxLength: 128, description: "Needed only by some brokers" })),
};
