import { amountProblemMessage, readAmount } from "../../../core/amounts.js";
import { formatDecimal } from "../../../core/decimal.js";
import { fromServiceSymbol } from "../../../core/symbols/instrument.js";
import { sentSymbolOf } from "../../../core/symbols/original-futures.js";
import {
  type DesiredPosition,
  heldPortfolio,
  releasePortfolio,
  setDesiredPositions,
} from "../../../services/desired-positions.js";
import { type LegacyCommand, LegacyFailure } from "../command.js";
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

/** The portfolio of a setDesiredPositions request, its symbols read at `nowMs`. */
function portfolioOf(raw: unknown, nowMs: number): DesiredPosition[] | "flat" | "off" {
  if (!Array.isArray(raw)) throw new LegacyFailure("InvalidRequest", "positions must be a list");
  const entries = raw as Readonly<Record<string, unknown>>[];
  const special = entries.length === 1 ? entries[0] : undefined;
  const word = (value: unknown) =>
    String(value ?? "")
      .trim()
      .toLowerCase();
  if (special && word(special.symbol) === word(special.typeofsymbol)) {
    if (word(special.symbol) === "flat") return "flat";
    if (word(special.symbol) === "stop" || word(special.symbol) === "off") return "off";
  }
  return entries.map((entry, i) => {
    const written = String(entry.symbol ?? "");
    const instrument = fromServiceSymbol(written, String(entry.typeofsymbol ?? "stock"), nowMs);
    if (!instrument) throw new LegacyFailure("InvalidSymbol", `positions[${i}]: ${written} is not known`);
    const field = `positions[${i}].quant`;
    const reading = typeof entry.quant === "number" || typeof entry.quant === "string" ? readAmount(entry.quant) : null;
    if (reading === null) throw new LegacyFailure("InvalidRequest", `${field} must be a signed whole number`);
    if (!reading.ok) throw new LegacyFailure("InvalidRequest", amountProblemMessage(field, reading.problem));
    return { instrument, quantity: reading.value, sentSymbol: sentSymbolOf(written, instrument) };
  });
}

export const desiredPositionCommands: readonly LegacyCommand[] = [
  {
    name: "getDesiredPositions",
    summary: "The portfolio the system is held at in desired-positions mode; empty when the mode is off.",
    input: GetDesiredPositions.input,
    answer: GetDesiredPositions.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId } = await systemActedFor(ctx, request);
      return { response: ((await heldPortfolio(ctx, strategyId)) ?? []).map(row) };
    },
  },
  {
    name: "setDesiredPositions",
    summary:
      "Holds the system at a portfolio: market orders make up every difference and signal entry is off. flat/flat holds it flat; stop/stop (or off/off) ends the mode, leaving the holdings.",
    input: SetDesiredPositions.input,
    answer: SetDesiredPositions.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId, acting } = await systemActedFor(ctx, request);
      const portfolio = portfolioOf(request.positions, ctx.clock.nowMs());
      if (portfolio === "off") {
        await releasePortfolio(acting, strategyId);
        return { response: [], mode: "off" };
      }
      const target = portfolio === "flat" ? [] : portfolio;
      await setDesiredPositions(acting, strategyId, target, true);
      return { response: target.map(row), mode: "engaged" };
    },
  },
];
