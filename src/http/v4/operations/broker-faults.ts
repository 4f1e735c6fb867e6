import { type Static, Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { type Decimal, parseDecimal, ZERO } from "../../../core/decimal.js";
import { refuse } from "../../../core/errors.js";
import { fromServiceSymbol } from "../../../core/symbols/instrument.js";
import { DEFAULT_REASONS, FAULT_NAMES, type Fault, type FaultName } from "../../../engine/brokers/sim-faults.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";

/**
 * The simulated broker misbehaving on demand: a fault set on one of its
 * accounts (docs/decisions.md, "The simulated broker's faults").
 */
const BrokerFaultInput = Type.Object({
  Account: Type.String({ minLength: 1, maxLength: 64, description: "The account as the simulated broker names it" }),
  Fault: Type.Union(
    FAULT_NAMES.map((name) => Type.Literal(name)),
    { description: FAULT_NAMES.join(", ") },
  ),
  Count: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 10_000, description: "reject: how many of the next orders (default 1)" }),
  ),
  Reason: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: "reject, delink, marginCall, patternDayTrader: the broker's reason",
    }),
  ),
  Seconds: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 86_400, description: "delay: seconds of the service clock" }),
  ),
  Fraction: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      exclusiveMaximum: 1,
      description: "partialFill: the part of the quantity filled first",
    }),
  ),
  Symbol: Type.Optional(
    Type.String({ minLength: 1, maxLength: 40, description: "externalExecution: ServiceSymbol FullSymbol" }),
  ),
  Side: Type.Optional(Type.Union([Type.Literal("buy"), Type.Literal("sell")], { description: "externalExecution" })),
  Quantity: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: "externalExecution" })),
  Price: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, description: "externalExecution: the price (default: the quote's touch)" }),
  ),
});

type BrokerFaultRequest = Static<typeof BrokerFaultInput>;

/** The extra fields each fault takes, required first. */
const FIELDS: Readonly<
  Record<FaultName, { readonly required: readonly string[]; readonly optional: readonly string[] }>
> = {
  reject: { required: [], optional: ["Count", "Reason"] },
  delay: { required: ["Seconds"], optional: [] },
  partialFill: { required: ["Fraction"], optional: [] },
  disconnect: { required: [], optional: [] },
  reconnect: { required: [], optional: [] },
  delink: { required: [], optional: ["Reason"] },
  marginCall: { required: [], optional: ["Reason"] },
  patternDayTrader: { required: [], optional: ["Reason"] },
  externalExecution: { required: ["Symbol", "Side", "Quantity"], optional: ["Price"] },
  clear: { required: [], optional: [] },
};

const EXTRA = ["Count", "Reason", "Seconds", "Fraction", "Symbol", "Side", "Quantity", "Price"] as const;

const BrokerFaultRecord = Type.Object(
  {
    Account: Type.String(),
    Fault: Type.String(),
    /** The faults that stand on the account afterwards. */
    StandingFaults: Type.Array(Type.String()),
  },
  { title: "BrokerFault" },
);

function exactly(value: number, field: string): Decimal {
  const parsed = parseDecimal(value);
  if (parsed === null || parsed <= ZERO)
    throw refuse("InvalidValue", { field, message: `${field} has at most 8 places` });
  return parsed;
}

/** The fault the request names, with its fields checked: each fault takes its own fields and no other. */
function faultOf(input: BrokerFaultRequest): Fault {
  const fields = FIELDS[input.Fault];
  for (const name of EXTRA) {
    const given = input[name] !== undefined;
    if (given && !fields.required.includes(name) && !fields.optional.includes(name)) {
      throw refuse("InvalidValue", { field: name, message: `${name} does not apply to the fault ${input.Fault}` });
    }
    if (!given && fields.required.includes(name)) {
      throw refuse("MissingValue", { field: name, message: `The fault ${input.Fault} needs ${name}` });
    }
  }
  switch (input.Fault) {
    case "reject":
      return { kind: "reject", count: input.Count ?? 1, reason: input.Reason ?? DEFAULT_REASONS.reject };
    case "delay":
      return { kind: "delay", seconds: input.Seconds as number };
    case "partialFill":
      return { kind: "partialFill", fraction: exactly(input.Fraction as number, "Fraction") };
    case "delink":
    case "marginCall":
    case "patternDayTrader":
      return { kind: input.Fault, reason: input.Reason ?? DEFAULT_REASONS[input.Fault] };
    case "externalExecution": {
      const instrument = fromServiceSymbol(input.Symbol as string);
      if (!instrument) throw refuse("InvalidSymbol", { field: "Symbol", message: `Unknown symbol ${input.Symbol}` });
      return {
        kind: "externalExecution",
        symbol: instrument.fullSymbol,
        side: input.Side as "buy" | "sell",
        quantity: exactly(input.Quantity as number, "Quantity"),
        price: input.Price === undefined ? null : exactly(input.Price, "Price"),
      };
    }
    default:
      return { kind: input.Fault };
  }
}

export const brokerFaultOperations = [
  defineOperation({
    id: "SetBrokerFault",
    method: "POST",
    path: "/Sandbox/SetBrokerFault",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Makes the simulated broker misbehave for one account, durably, until cleared: reject {Count, Reason} (the next orders refused), delay {Seconds} (orders placed are acknowledged and fill that much later on the service clock), partialFill {Fraction} (orders placed fill that part first, the rest rests), disconnect (place, cancel and replace fail until reconnect), delink {Reason} (the broker delinks the account, canceling its open orders), marginCall and patternDayTrader {Reason} (the account is restricted: orders refused), externalExecution {Symbol, Side, Quantity, Price} (an order the service did not send executes in the account), clear (every standing fault removed).",
    input: BrokerFaultInput,
    result: BrokerFaultRecord,
    permission: onlyRoles("admin"),
    sandbox: true,
    paginated: false,
    example: { Account: EXAMPLE.brokerAccount, Fault: "reject", Count: 1, Reason: "Insufficient buying power" },
    handler: async (ctx, input) => {
      const fault = faultOf(input);
      const standing = await ctx.brokers.simulated.setFault(input.Account, fault);
      return [{ Account: input.Account, Fault: input.Fault, StandingFaults: standing }];
    },
  }),
];
