/**
 * A geo-site's approval of a brokerage account, as the copier applies it
 * (docs/decisions.md, "Autotrade administration (issue 14)"). A geo-site may
 * require that its members' live accounts be approved before they autotrade
 * there (ApprovedAutotradeAccount). Until an account is approved its setups
 * only close: the copier makes no opening copy into it, but the closing ones
 * still go, so a follower whose approval is withdrawn still exits with the
 * strategy. A setup trading stocks as CFDs also needs the approval's IsCFD.
 * Paper accounts risk nothing and never need approval.
 */
export interface AccountApproval {
  /** The account may open positions. */
  readonly approved: boolean;
  /** The account may open stock positions as CFDs (TradeStocksAsCFD). */
  readonly cfd: boolean;
}

/** Where nothing is required: everything is allowed. */
export const NO_APPROVAL_NEEDED: AccountApproval = { approved: true, cfd: true };

export interface ApprovalFacts {
  /** The person's geo-site requires approval (sites.requires_account_approval). */
  readonly required: boolean;
  readonly isPaper: boolean;
  /** The geo-site's live autotrade approval of the account, if any. */
  readonly approval: { readonly isCfd: boolean } | null;
}

export function accountApproval(facts: ApprovalFacts): AccountApproval {
  if (!facts.required || facts.isPaper) return NO_APPROVAL_NEEDED;
  if (facts.approval === null) return { approved: false, cfd: false };
  return { approved: true, cfd: facts.approval.isCfd };
}

/** ApprovedAccount.ConnectionType (API.md Records). */
export const CONNECTION_TYPES = { Autotrade: 0, BrokerTransmit: 1 } as const;
export type ConnectionTypeName = keyof typeof CONNECTION_TYPES;
