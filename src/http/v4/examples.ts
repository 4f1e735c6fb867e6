/**
 * The objects the operations' examples name, as the example service holds
 * them: a fresh database given, in this order, a geo-site, a white-label site
 * inside it, that site's administrator and a customer (person 1 is the
 * service administrator made at the first start), two strategies of the
 * customer's and three resting orders in the first. test/helpers/examples.ts
 * builds it, and a test sends every example to it.
 */
export const EXAMPLE = {
  /** The clock of the example service: a Tuesday at 10:00 New York, every market open. */
  now: "2026-03-10T14:00:00Z",
  geoSite: "Geo Europe",
  whiteLabelSiteId: 2,
  customerId: 3,
  /** The customer's private KYC token. */
  userToken: "p8Xr2LqN5vTzW0aYc3KdE7hJm9BsF1uG",
  /** Public, with a description change waiting for review. */
  strategyId: 1,
  /** The strategy SetDesiredPositions' example holds at a portfolio. */
  portfolioStrategyId: 2,
  /** Resting orders of the strategy: one replaced by ReplaceStrategyOrder's example, one canceled by CancelStrategyOrder's. */
  replacedSignalId: 1,
  canceledSignalId: 2,
  restingSignalId: 3,
  symbol: "AAPL",
  /** A marketplace strategy of the service administrator's, in the site's resale catalog at 49 dollars a month. */
  resoldStrategyId: 3,
  /** The customer's autotrade approval request made by StartAutotrade's example (superseded by WhiteLabelStartAutotrade's). */
  approvalRequestId: 1,
  /** The endpoint RegisterWebhook's example registers on the site and UnregisterWebhook's removes. */
  webhookUrl: "https://hooks.alpine.example.com/strategy-hub",
  /** The customer's brokerage account at the simulated broker, autotrading the first strategy (the customer's own). */
  autotradeAccount: "SIM-100200",
  brokerId: 1,
  /** The customer's account at the simulated broker. */
  brokerAccount: "SIM-BEN-1",
  /**
   * Manual exit orders resting in the autotrade account (which holds a copy of the strategy's
   * buy): CancelAutotradeOrder's example cancels the first, ReplaceAutotradeOrder's reprices the second.
   */
  canceledAccountOrderId: "2",
  replacedAccountOrderId: "3",
  /** The customer's paper account at the simulated broker, which ResetPaperTrade's example resets. */
  paperAccount: "SIM-PAPER-7",
  /** The service's built-in Leaderboard watchlist (migration 0027 makes it first). */
  leaderboardWatchListId: 1,
  /** The service administrator's watchlist ManageWatchList's example makes (and its DELETE's example empties). */
  watchListId: 2,
} as const;
