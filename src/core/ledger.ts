/**
 * Double-entry bookkeeping, pure. Money moves by transfers between ledger
 * accounts; a transfer is two entries of opposite sign, so every transaction's
 * entries sum to zero and a balance is only ever the sum of its entries.
 * Accounts are named by their owner: house:<site>, owner:<person>, external
 * (money from outside: an operator funding a house account) and provider
 * (money taken by the payment provider).
 */

export const houseAccount = (siteId: number): string => `house:${siteId}`;
export const ownerAccount = (personId: number): string => `owner:${personId}`;
export const EXTERNAL_ACCOUNT = "external";
export const PROVIDER_ACCOUNT = "provider";

export interface Transfer {
  readonly from: string;
  readonly to: string;
  /** Whole cents, above zero. */
  readonly cents: number;
}

export interface Entry {
  readonly account: string;
  /** Signed whole cents: money in is positive. */
  readonly cents: number;
}

/** The entries of transfers: each one takes from one account what it gives to another. */
export function entriesOf(transfers: readonly Transfer[]): Entry[] {
  const entries: Entry[] = [];
  for (const { from, to, cents } of transfers) {
    if (!Number.isSafeInteger(cents) || cents <= 0)
      throw new RangeError(`A transfer is whole cents above zero: ${cents}`);
    entries.push({ account: from, cents: -cents }, { account: to, cents });
  }
  return entries;
}

/** The transfers that undo these (a refund of a charge). */
export const reversalOf = (transfers: readonly Transfer[]): Transfer[] =>
  transfers.map(({ from, to, cents }) => ({ from: to, to: from, cents }));

/** Balances by account: the sums of their entries. */
export function balancesOf(entries: Iterable<Entry>): Map<string, number> {
  const balances = new Map<string, number>();
  for (const { account, cents } of entries) balances.set(account, (balances.get(account) ?? 0) + cents);
  return balances;
}

/** What a house account can pay: its balance, or without limit where negative billing is allowed. */
export const covers = (balanceCents: number, chargeCents: number, allowNegative: boolean): boolean =>
  allowNegative || balanceCents >= chargeCents;
