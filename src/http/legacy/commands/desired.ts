import { type Static, Type } from "@sinclair/typebox";
import { formatDecimal } from "../../../core/decimal.js";
import { fromServiceSymbol } from "../../../core/symbols/instrument.js";
import { sentSymbolOf } from "../../../core/symbols/original-futures.js";
import {
  type DesiredPosition,
  heldPortfolio,
  releasePortfolio,
  setDesiredPositions,
} from "../../../services/desired-positions.js";
import { defineLegacyCommand, type LegacyCommand, LegacyFailure } from "../command.js";
import { amount, amountOf, id, text } from "../fields.js";
import { systemActedFor } from "../reach.js";
import { GetDesiredPositions, SetDesiredPositions } from "../shapes/desired.js";

/**
 * The legacy desired-positions mode (API.md "Legacy desired-positions mode"):
 * setDesiredPositions with a portfolio holds the strategy at it (market orders
 * make up every difference; signal entry is off), flat/flat holds it flat, and
 * stop/stop or off/off turns the mode off, leaving the holdings as they are.
 */
const row = (position: DesiredPosition) => ({
  underlying: position.instrument.underlying ?? position.instrument.exchangeSymbol,
  symbol: position.sentSymbol ?? position.instrument.fullSymbol,
  strike: position.instrument.strike === null ? "" : formatDecimal(position.instrument.strike),
  putcall: position.instrument.putOrCall ?? "",
  typeofsymbol: position.instrument.symbolType,
  quant: formatDecimal(position.quantity),
  expir: position.instrument.expiry ?? "",
});

/** One entry of positions: a symbol and its signed quantity, or a special entry (flat/flat, stop/stop, off/off). */
const Position = Type.Object({
  symbol: text(40),
  typeofsymbol: Type.Optional(text(10)),
  quant: Type.Optional(amount()),
});

/** As many entries as v4's SetDesiredPositions takes. */
const Positions = Type.Array(Position, { maxItems: 500 });

/** The portfolio of a setDesiredPositions request, its symbols read at `nowMs`. */
function portfolioOf(entries: Static<typeof Positions>, nowMs: number): DesiredPosition[] | "flat" | "off" {
  const special = entries.length === 1 ? entries[0] : undefined;
  const word = (value: string | undefined) => (value ?? "").trim().toLowerCase();
  if (special && word(special.symbol) === word(special.typeofsymbol)) {
    if (word(special.symbol) === "flat") return "flat";
    if (word(special.symbol) === "stop" || word(special.symbol) === "off") return "off";
  }
  return entries.map((entry, i) => {
    const written = entry.symbol;
    const instrument = fromServiceSymbol(written, entry.typeofsymbol ?? "stock", nowMs);
    if (!instrument) throw new LegacyFailure("InvalidSymbol", `positions[${i}]: ${written} is not known`);
    const field = `positions[${i}].quant`;
    if (entry.quant === undefined) throw new LegacyFailure("InvalidRequest", `${field} must be a signed whole number`);
    const quantity = amountOf(entry.quant, field, "InvalidRequest");
    return { instrument, quantity, sentSymbol: sentSymbolOf(written, instrument) };
  });
}

export const desiredPositionCommands: readonly LegacyCommand[] = [
  defineLegacyCommand({
    name: "getDesiredPositions",
    summary: "The portfolio the system is held at in desired-positions mode; empty when the mode is off.",
    answer: GetDesiredPositions.answer,
    contexts: ["world", "platform"],
    input: Type.Object({ systemid: id() }),
    async handler(ctx, { systemid }) {
      const { strategyId } = await systemActedFor(ctx, systemid);
      return { response: ((await heldPortfolio(ctx, strategyId)) ?? []).map(row) };
    },
  }),
  defineLegacyCommand({
    name: "setDesiredPositions",
    summary:
      "Holds the system at a portfolio: market orders make up every difference and signal entry is off. flat/flat holds it flat; stop/stop (or off/off) ends the mode, leaving the holdings.",
    answer: SetDesiredPositions.answer,
    contexts: ["world", "platform"],
    input: Type.Object({ systemid: id(), positions: Positions }),
    async handler(ctx, input) {
      const { strategyId, acting } = await systemActedFor(ctx, input.systemid);
      const portfolio = portfolioOf(input.positions, ctx.clock.nowMs());
      if (portfolio === "off") {
        await releasePortfolio(acting, strategyId);
        return { response: [], mode: "off" };
      }
      const target = portfolio === "flat" ? [] : portfolio;
      await setDesiredPositions(acting, strategyId, target, true);
      return { response: target.map(row), mode: "engaged" };
    },
  }),
];
