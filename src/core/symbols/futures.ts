import { type Decimal, decimal } from "../decimal.js";

/** Futures contract specifications: what a root trades on, in what currency, at what point value and tick. */
export interface FutureContract {
  readonly root: string;
  readonly description: string;
  /** ISO 10383 market identifier of the exchange. */
  readonly exchange: "XCME" | "XCBT" | "XNYM" | "XCEC" | "XICE" | "XEUR";
  readonly currency: string;
  /** Money per one point of price, per contract. */
  readonly pointValue: Decimal;
  readonly tickSize: Decimal;
  /** Month codes the contract is listed in. */
  readonly months: string;
}

/** Month codes of futures symbols: F = January ... Z = December. */
export const MONTH_CODES = "FGHJKMNQUVXZ";

const QUARTERLY = "HMUZ";
const ALL_MONTHS = MONTH_CODES;

const contract = (
  root: string,
  description: string,
  exchange: FutureContract["exchange"],
  currency: string,
  pointValue: string,
  tickSize: string,
  months: string,
): FutureContract => ({
  root,
  description,
  exchange,
  currency,
  pointValue: decimal(pointValue),
  tickSize: decimal(tickSize),
  months,
});

export const FUTURE_CONTRACTS: readonly FutureContract[] = [
  // CME equity indexes, currencies and livestock
  contract("ES", "E-mini S&P 500", "XCME", "USD", "50", "0.25", QUARTERLY),
  contract("MES", "Micro E-mini S&P 500", "XCME", "USD", "5", "0.25", QUARTERLY),
  contract("NQ", "E-mini Nasdaq-100", "XCME", "USD", "20", "0.25", QUARTERLY),
  contract("MNQ", "Micro E-mini Nasdaq-100", "XCME", "USD", "2", "0.25", QUARTERLY),
  contract("RTY", "E-mini Russell 2000", "XCME", "USD", "50", "0.1", QUARTERLY),
  contract("M2K", "Micro E-mini Russell 2000", "XCME", "USD", "5", "0.1", QUARTERLY),
  contract("6E", "Euro FX", "XCME", "USD", "125000", "0.00005", QUARTERLY),
  contract("6J", "Japanese Yen", "XCME", "USD", "12500000", "0.0000005", QUARTERLY),
  contract("6B", "British Pound", "XCME", "USD", "62500", "0.0001", QUARTERLY),
  contract("6A", "Australian Dollar", "XCME", "USD", "100000", "0.00005", QUARTERLY),
  contract("6C", "Canadian Dollar", "XCME", "USD", "100000", "0.00005", QUARTERLY),
  contract("6S", "Swiss Franc", "XCME", "USD", "125000", "0.00005", QUARTERLY),
  contract("HE", "Lean Hogs", "XCME", "USD", "400", "0.025", "GJKMNQVZ"),
  contract("LE", "Live Cattle", "XCME", "USD", "400", "0.025", "GJMQVZ"),
  contract("GF", "Feeder Cattle", "XCME", "USD", "500", "0.025", "FHJKQUVX"),
  // CBOT equity index, interest rates and grains
  contract("YM", "E-mini Dow", "XCBT", "USD", "5", "1", QUARTERLY),
  contract("MYM", "Micro E-mini Dow", "XCBT", "USD", "0.5", "1", QUARTERLY),
  contract("ZT", "2-Year T-Note", "XCBT", "USD", "2000", "0.00390625", QUARTERLY),
  contract("ZF", "5-Year T-Note", "XCBT", "USD", "1000", "0.0078125", QUARTERLY),
  contract("ZN", "10-Year T-Note", "XCBT", "USD", "1000", "0.015625", QUARTERLY),
  contract("ZB", "30-Year T-Bond", "XCBT", "USD", "1000", "0.03125", QUARTERLY),
  contract("ZC", "Corn", "XCBT", "USD", "50", "0.25", "HKNUZ"),
  contract("ZS", "Soybeans", "XCBT", "USD", "50", "0.25", "FHKNQUX"),
  contract("ZW", "Chicago SRW Wheat", "XCBT", "USD", "50", "0.25", "HKNUZ"),
  contract("ZM", "Soybean Meal", "XCBT", "USD", "100", "0.1", "FHKNQUVZ"),
  contract("ZL", "Soybean Oil", "XCBT", "USD", "600", "0.01", "FHKNQUVZ"),
  // NYMEX energy and platinum
  contract("CL", "Crude Oil WTI", "XNYM", "USD", "1000", "0.01", ALL_MONTHS),
  contract("MCL", "Micro WTI Crude Oil", "XNYM", "USD", "100", "0.01", ALL_MONTHS),
  contract("NG", "Henry Hub Natural Gas", "XNYM", "USD", "10000", "0.001", ALL_MONTHS),
  contract("RB", "RBOB Gasoline", "XNYM", "USD", "42000", "0.0001", ALL_MONTHS),
  contract("HO", "NY Harbor ULSD", "XNYM", "USD", "42000", "0.0001", ALL_MONTHS),
  contract("PL", "Platinum", "XNYM", "USD", "50", "0.1", "FJNV"),
  // COMEX metals
  contract("GC", "Gold", "XCEC", "USD", "100", "0.1", "GJMQVZ"),
  contract("MGC", "Micro Gold", "XCEC", "USD", "10", "0.1", "GJMQVZ"),
  contract("SI", "Silver", "XCEC", "USD", "5000", "0.005", "HKNUZ"),
  contract("HG", "Copper", "XCEC", "USD", "25000", "0.0005", "HKNUZ"),
  // ICE US softs and the dollar index
  contract("KC", "Coffee C", "XICE", "USD", "375", "0.05", "HKNUZ"),
  contract("SB", "Sugar No. 11", "XICE", "USD", "1120", "0.01", "HKNV"),
  contract("CC", "Cocoa", "XICE", "USD", "10", "1", "HKNUZ"),
  contract("CT", "Cotton No. 2", "XICE", "USD", "500", "0.01", "HKNVZ"),
  contract("DX", "US Dollar Index", "XICE", "USD", "1000", "0.005", QUARTERLY),
  // Eurex
  contract("FDAX", "DAX", "XEUR", "EUR", "25", "1", QUARTERLY),
  contract("FESX", "Euro STOXX 50", "XEUR", "EUR", "10", "1", QUARTERLY),
  contract("FGBL", "Euro-Bund", "XEUR", "EUR", "1000", "0.01", QUARTERLY),
];

export const FUTURES_BY_ROOT: ReadonlyMap<string, FutureContract> = new Map(FUTURE_CONTRACTS.map((c) => [c.root, c]));
