import type { Generated } from "kysely";
import type { Role } from "../core/access.js";
import type { BillingInterval } from "../core/billing.js";
import type { CheckoutStatus } from "../core/checkout.js";

/**
 * The tables as Kysely sees them. Times are integer milliseconds since the
 * epoch (UTC) and booleans are 0/1 integers, so one set of queries serves
 * SQLite and PostgreSQL alike.
 */
export interface Database {
  service_settings: ServiceSettingsTable;
  sites: SitesTable;
  persons: PersonsTable;
  platforms: PlatformsTable;
  access_keys: AccessKeysTable;
  kyc_scores: KycScoresTable;
  kyc_infos: KycInfosTable;
  key_sessions: KeySessionsTable;
  strategies: StrategiesTable;
  oca_groups: OcaGroupsTable;
  orders: OrdersTable;
  fills: FillsTable;
  positions: PositionsTable;
  trades: TradesTable;
  equity_marks: EquityMarksTable;
  leaderboard: LeaderboardTable;
  subscriptions: SubscriptionsTable;
  accounts: AccountsTable;
  order_events: OrderEventsTable;
  outbox_positions: OutboxPositionsTable;
  strategy_records: StrategyRecordsTable;
  idempotency_keys: IdempotencyKeysTable;
  site_catalog: SiteCatalogTable;
  ledger_accounts: LedgerAccountsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  license_plans: LicensePlansTable;
  plan_subscriptions: PlanSubscriptionsTable;
  subscription_grants: SubscriptionGrantsTable;
  subscription_checkouts: SubscriptionCheckoutsTable;
  sandbox_charges: SandboxChargesTable;
  brokers: BrokersTable;
  broker_accounts: BrokerAccountsTable;
  autotrade_setups: AutotradeSetupsTable;
  account_orders: AccountOrdersTable;
  account_fills: AccountFillsTable;
  autotrade_positions: AutotradePositionsTable;
  copy_skips: CopySkipsTable;
  autotrade_approvals: AutotradeApprovalsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  customer_notices: CustomerNoticesTable;
  sim_broker_accounts: SimBrokerAccountsTable;
  sim_broker_orders: SimBrokerOrdersTable;
  sim_broker_executions: SimBrokerExecutionsTable;
  sim_broker_positions: SimBrokerPositionsTable;
  sim_broker_faults: SimBrokerFaultsTable;
  confirmation_links: ConfirmationLinksTable;
  approved_accounts: ApprovedAccountsTable;
  account_events: AccountEventsTable;
  autotrade_stats: AutotradeStatsTable;
  account_marks: AccountMarksTable;
  autotrade_marks: AutotradeMarksTable;
  watchlists: WatchlistsTable;
  watchlist_members: WatchlistMembersTable;
  strategy_mux: StrategyMuxTable;
  mux_orders: MuxOrdersTable;
  autotrade_syncs: AutotradeSyncsTable;
}

export interface ServiceSettingsTable {
  name: string;
  value: string;
}

export type SiteKind = "whitelabel" | "geo";

export interface SitesTable {
  id: Generated<number>;
  kind: SiteKind;
  name: string;
  domain: string | null;
  /** The geo-site a white-label site belongs to, if any. */
  geo_site_id: number | null;
  created_at: number;
  support_company_name: string | null;
  /** A geo-site: 1 when its members' live accounts autotrade only once the geo-site approved them (0026). */
  requires_account_approval: Generated<number>;
  support_site_url: string | null;
  support_email: string | null;
  /** 1: resold subscriptions may be charged into a negative house-account balance. */
  allow_negative_billing: Generated<number>;
  /** Who pays the AutoTrading licence of the site's customers: CustomerPays or SitePays. */
  autotrade_fee_policy: Generated<AutotradeFeePolicy>;
  /** Rule 575: basis points a copy fill may be worse than the strategy's (exact decimal text); null: the default. */
  rule575_tolerance_bps: string | null;
  /** Rule 575: seconds after the strategy's last fill a copy fill may execute; null: the default. */
  rule575_window_seconds: number | null;
}

export interface PersonsTable {
  id: Generated<number>;
  email: string;
  first_name: string;
  last_name: string;
  role: Role;
  white_label_site_id: number | null;
  /** Direct geo-site membership; members of a white-label site inherit the site's. */
  geo_site_id: number | null;
  alias: string | null;
  phone: string | null;
  is_phone_verified: Generated<number>;
  language: string | null;
  country_code: string | null;
  division_code: string | null;
  is_email_validated: Generated<number>;
  is_alive: Generated<number>;
  last_logged_in: number | null;
  last_ip: string | null;
  created_at: number;
  /** The screen name folded to lower case: unique. */
  alias_key: string | null;
  /** Names folded to lower case for case-insensitive search on both backends. */
  first_name_folded: string | null;
  last_name_folded: string | null;
  /** scrypt$N$r$p$salt$hash of the sign-up password. */
  password_hash: string | null;
  street: string | null;
  street2: string | null;
  city: string | null;
  zip_code: string | null;
  company: string | null;
  signup_ip: string | null;
  /** The private per-person token KYC operations name the person by. */
  user_token: string | null;
  /** SHA-256 of the CSRF token issued at sign-up. */
  csrf_hash: string | null;
}

export interface PlatformsTable {
  id: Generated<number>;
  name: string;
  white_label_site_id: number | null;
  created_at: number;
}

export interface AccessKeysTable {
  id: Generated<number>;
  person_id: number;
  /** SHA-256 of the key; the key itself is never stored. */
  key_hash: string;
  platform_id: number | null;
  comment: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

export interface KycScoresTable {
  id: Generated<number>;
  person_id: number;
  created_at: number;
  started_at: number | null;
  approved_at: number | null;
  finished_at: number | null;
  redirected_times: Generated<number>;
  score: number | null;
}

export interface KycInfosTable {
  id: Generated<number>;
  person_id: number;
  first_name: string;
  last_name: string;
  email: string;
  phone: string;
  is_phone_verified: number;
  street: string;
  city: string;
  province: string;
  post_code: string;
  country: string;
  /** References to identity documents held by the site's KYC provider; never the images. */
  photo_id1: string | null;
  photo_id1_title: string | null;
  photo_id2: string | null;
  photo_id2_title: string | null;
  updated_at: number;
}

/** A key session: the first use of a key, or its first use after a pause. */
export interface KeySessionsTable {
  id: Generated<number>;
  key_id: number;
  person_id: number;
  white_label_site_id: number | null;
  server: string;
  ip_address: string;
  started_at: number;
}

export type DescriptionReview = "none" | "pending" | "approved" | "rejected";

export interface StrategiesTable {
  id: Generated<number>;
  name: string;
  owner_person_id: number;
  white_label_site_id: number | null;
  is_private: number;
  is_alive: Generated<number>;
  /** Exact decimal text. */
  starting_capital: string;
  monthly_cost: Generated<string>;
  /** The yearly price when the owner offers annual billing (exact decimal text); null: monthly only. */
  annual_cost: string | null;
  /** The published descriptions. */
  short_description: string | null;
  long_description: string | null;
  /** A change waiting for review: null = none, "" = clear the description. */
  pending_short_description: string | null;
  pending_long_description: string | null;
  review_status: Generated<DescriptionReview>;
  review_note: string | null;
  created_at: number;
  updated_at: number;
  /** SecurityTypesEnabled: 1 once the strategy has placed an order of the kind. */
  trades_stocks: Generated<number>;
  trades_options: Generated<number>;
  trades_futures: Generated<number>;
  trades_forex: Generated<number>;
  /** The name folded to lower case, for case-insensitive search. */
  name_folded: string | null;
  /** Legacy system settings. */
  trial_days: number | null;
  minimum_portfolio: string | null;
  credit_system_until: number | null;
  free_signal_credits: number | null;
  is_test: number | null;
  /** When the strategy stopped being alive (isAlive 0). */
  inactive_since: number | null;
  /** The legacy desired-positions mode: the target portfolio as JSON, or null when the mode is off. */
  desired_positions: string | null;
}

/** A strategy's model account, or a brokerage account autotrade copies orders into. */
export type AccountKind = "model" | "broker";

/**
 * A trading account: cash, orders, fills, positions and trades belong to one.
 * A strategy's model account is the first kind. Money is exact decimal text.
 */
export interface AccountsTable {
  id: Generated<number>;
  kind: AccountKind;
  /** The strategy whose model account this is. */
  strategy_id: number | null;
  cash: string;
  starting_cash: string;
  /** Counts the account's commits: the trading frame writes only from the version it read. */
  version: Generated<number>;
  /** The sequence number of the account's latest order event in the outbox. */
  event_seq: Generated<number>;
  /** Commissions paid, dollars: equity plus this is equity without commissions. */
  commissions_paid: Generated<string>;
  /** Running totals of what the fills would cost under each plan: {"Institutional": "1.05", ...}. */
  plan_commissions: Generated<string>;
  /** The commission plan the account pays. */
  commission_plan: string;
  created_at: number;
}

/** The outbox: an order event or a fill of an account, in the commit that made it. */
export interface OrderEventsTable {
  id: Generated<number>;
  account_id: number;
  /** Gap-free per account. */
  seq: number;
  kind: string;
  order_id: number | null;
  /** The event's detail as JSON. */
  payload: string;
  /** Who acted, and for whom when a platform key or an administrator acted for someone. */
  actor_person_id: number | null;
  on_behalf_of_person_id: number | null;
  /** The process that committed it. */
  origin: string;
  at: number;
}

/** How far each consumer of the outbox has read, per account. */
export interface OutboxPositionsTable {
  consumer: string;
  account_id: number;
  seq: number;
}

/** A strategy's record totals, kept by the records consumer of the outbox from its fills. */
export interface StrategyRecordsTable {
  strategy_id: number;
  /** Fills by kind of instrument (PrimarySecurityTypes). */
  fills_stock: number;
  fills_option: number;
  fills_future: number;
  fills_forex: number;
  latest_fill_at: number | null;
  closed_trades: number;
  winners: number;
  losers: number;
  /** Profits after commissions, in cents: winners' sum (positive) and losers' (negative). */
  sum_winners_cents: number;
  sum_losers_cents: number;
  /** The closed trades' durations added up. */
  duration_ms: number;
}

export interface OcaGroupsTable {
  id: Generated<number>;
  strategy_id: number;
  account_id: number;
  /** The legacy API's caller-chosen ocaid, unique per strategy. */
  local_id: string | null;
}

/** One order (signal) of a strategy. Prices and quantities are exact decimal text. */
export interface OrdersTable {
  id: Generated<number>;
  strategy_id: number;
  account_id: number;
  /** ServiceSymbol.FullSymbol and SymbolType. */
  symbol: string;
  symbol_type: string;
  order_type: "market" | "limit" | "stop";
  side: "buy" | "sell";
  open_close: "open" | "close";
  tif: "day" | "gtc";
  quantity: string;
  limit_price: string | null;
  stop_price: string | null;
  profit_target: string | null;
  stop_loss: string | null;
  do_not_create_oca: Generated<number>;
  do_not_sync_to_open: Generated<number>;
  parent_id: number | null;
  oca_group_id: number | null;
  /** The order this one replaced. */
  cancel_replace_id: number | null;
  parked_until: number | null;
  expires_at: number | null;
  signal_type: number;
  /** An OrderStatus name (Working, Filled...). */
  status: string;
  filled_quantity: Generated<string>;
  /** Sum of fill quantity × price: the average fill price is this over the filled quantity. */
  filled_notional: Generated<string>;
  info: string | null;
  posted_at: number;
  updated_at: number;
  /** When the order reached its final status. */
  closed_at: number | null;
  /** The legacy API's caller-chosen signalid, unique per strategy. */
  local_signal_id: string | null;
  /** A future as the client wrote it when not in the service's form (`@ESZ6`): legacy answers name it so. */
  sent_symbol: string | null;
}

export interface FillsTable {
  id: Generated<number>;
  order_id: number;
  strategy_id: number;
  account_id: number;
  symbol: string;
  symbol_type: string;
  side: "buy" | "sell";
  quantity: string;
  price: string;
  /** Dollars, to the cent. */
  commission: string;
  realized: string;
  cash: string;
  usd_rate: string;
  position_after: string;
  filled_at: number;
  /** Null only for fills made before trades were recorded. */
  trade_id: number | null;
}

export interface PositionsTable {
  account_id: number;
  strategy_id: number;
  symbol: string;
  symbol_type: string;
  quantity: string;
  /** Signed cost of the open quantity (average cost × quantity). */
  cost: string;
  opened_at: number;
  /** The open trade the position is. */
  trade_id: number | null;
}

/** A trade: a position's life from flat to flat. Amounts are exact decimal text, money in dollars. */
export interface TradesTable {
  id: Generated<number>;
  strategy_id: number;
  account_id: number;
  symbol: string;
  symbol_type: string;
  /** The opening side: buy for a long trade, sell for a short one. */
  side: "buy" | "sell";
  opened_at: number;
  closed_at: number | null;
  opened_quantity: string;
  closed_quantity: string;
  open_notional: string;
  close_notional: string;
  realized: string;
  commission: string;
  evaluated_at: number;
  /** The maximum adverse excursion: null while the trade has never been under water. */
  mae_amount: string | null;
  mae_worst_price: string | null;
  mae_worst_price_at: number | null;
  mae_equity: string | null;
  mae_entry_price: string | null;
  mae_open_quantity: string | null;
  /** What the trade's fills would cost under each plan. */
  plan_commissions: Generated<string>;
}

/** A strategy's model account at an NYSE close. Money in dollars, exact decimal text. */
export interface EquityMarksTable {
  strategy_id: number;
  /** The trading day, YYYY-MM-DD (New York). */
  day: string;
  marked_at: number;
  equity: string;
  cash: string;
  /** Gross exposure: the sum of the positions' absolute notional values. */
  exposure: string;
  /** Commissions paid up to the mark. */
  commissions_paid: string;
  /** The S&P 500 proxy's price at the close; 0 when no quote was known. */
  benchmark: string;
  /** The strategy's commissions under each plan up to the mark. */
  plan_commissions: Generated<string>;
}

/** The curated leaderboard: service admins rank public strategies. */
export interface LeaderboardTable {
  rank: number;
  strategy_id: number;
}

/** real: live signals; simulated: aggregate performance only; paper: a paper-trading account follows. */
export type SubscriptionKind = "real" | "simulated" | "paper";

/**
 * Who pays whom. free: no price (a free strategy, or the legacy subscribe of one);
 * grant: a white-label site's finite access to a strategy it owns, billed by the site
 * itself; resale: a catalog strategy billed monthly to the site's house account;
 * direct: the customer pays the price through the payment provider (GEN checkout).
 */
export type SubscriptionLane = "free" | "grant" | "resale" | "direct";

/** A person following a strategy: live while ended_at is null or in the future. Money in integer cents. */
export interface SubscriptionsTable {
  id: Generated<number>;
  /** The public id (subscription_guid). */
  guid: string;
  strategy_id: number;
  person_id: number;
  /** The platform whose key made it, if any (privately managed subscriptions). */
  platform_id: number | null;
  started_at: number;
  ended_at: number | null;
  kind: Generated<SubscriptionKind>;
  lane: Generated<SubscriptionLane>;
  /** The white-label site that sold or granted it. */
  site_id: number | null;
  /** What the payer is charged each interval: the wholesale price on resale, the customer's on direct. */
  price_cents: Generated<number>;
  /** The revenue row: the strategy's base price and the site's markup when it started. */
  base_price_cents: Generated<number>;
  markup_cents: Generated<number>;
  billing_interval: BillingInterval | null;
  billing_interval_count: number | null;
  /** The end of the paid or granted term; null: access is not bought by terms (free). */
  paid_until: number | null;
  /** When the biller charges next and how much; null: nothing more is charged. */
  next_charge_at: number | null;
  next_charge_cents: number | null;
  /** 1 once an end-of-term stop is asked for: billing stopped, access runs to paid_until. */
  cancel_pending: Generated<number>;
  failure_count: Generated<number>;
  last_failure_reason: string | null;
  last_failure_at: number | null;
  last_charge_at: number | null;
  last_charge_cents: number | null;
  /** Charges settled so far: the next charge's ledger reference is charge:<id>:<charge_seq + 1>. */
  charge_seq: Generated<number>;
  /** The IdempotencyKey of the call that made it and a hash of that call's parameters. */
  idempotency_key: string | null;
  request_fingerprint: string | null;
  /** Simulated: the strategy's equity when the simulation started (exact decimal text). */
  start_equity: string | null;
  /** Why it ended: stopped, immediate, lapsed, billing_failed, superseded, unsubscribed. */
  end_reason: string | null;
  /** The payment provider's reference of the customer's payment method (direct lane). */
  payment_ref: string | null;
  /** person:strategy while live (unique: one live subscription per person and strategy), null once ended. */
  live_key: string | null;
  /**
   * Real time until which a biller holds the subscription's due charge while it asks the payment
   * provider: another biller leaves it alone until then (and retries it, same reference, after a crash).
   */
  billing_claimed_until: number | null;
}

/** A strategy a white-label site resells, with the site's markup and presentation. */
export interface SiteCatalogTable {
  site_id: number;
  strategy_id: number;
  markup_cents: Generated<number>;
  /** Shown instead of the strategy's name when set. */
  display_name: string | null;
  short_description: string | null;
  long_description: string | null;
  added_at: number;
  updated_at: number;
}

/** house: a white-label site's prepaid funds; owner: what a strategy owner earned; external, provider: money from outside. */
export type LedgerAccountKind = "house" | "owner" | "external" | "provider";

export interface LedgerAccountsTable {
  id: Generated<number>;
  /** house:<site>, owner:<person>, external, provider: one account per owner. */
  owner_key: string;
  kind: LedgerAccountKind;
  site_id: number | null;
  person_id: number | null;
  created_at: number;
}

export type LedgerTransactionKind = "fund" | "charge" | "refund";

/** One movement of money; its entries sum to zero. */
export interface LedgerTransactionsTable {
  id: Generated<number>;
  kind: LedgerTransactionKind;
  /** Unique when set: a charge is charge:<subscription>:<seq>, so no period is charged twice. */
  reference: string | null;
  subscription_id: number | null;
  memo: string | null;
  created_at: number;
}

/** One side of a transaction: a signed amount in cents on one account. */
export interface LedgerEntriesTable {
  id: Generated<number>;
  transaction_id: number;
  account_id: number;
  amount_cents: number;
  /** The account's balance after this entry: the sum of its entries up to here. */
  balance_after_cents: number;
}

export interface IdempotencyKeysTable {
  person_id: number;
  key: string;
  /** The v4 operation the key was first sent with. */
  operation: string;
  /** A hash of the operation and its input as read: the same key must come with the same request. */
  fingerprint: string;
  /** pending: claimed, running; committed: its orders are stored, its answer not yet; answered. */
  state: "pending" | "committed" | "answered";
  /** The process (trading frame origin) holding a pending claim, and since when (real time). */
  claimed_by: string;
  claimed_at: number;
  /** Service clock: the key is remembered for 24 hours from here. */
  created_at: number;
  /** The answer's body as sent (a success: refusals are not remembered). */
  answer: string | null;
}

/** Who pays the AutoTrading licence of a white-label site's customers. */
export type AutotradeFeePolicy = "CustomerPays" | "SitePays";

export type PlanKind = "investor" | "manager" | "autotrade";

/** A licence plan: service-wide (no site) or one site's. */
export interface LicensePlansTable {
  id: Generated<number>;
  site_id: number | null;
  /** The licence type's name (LicenseType) and number (LicenseTypeId). */
  license_type: string;
  license_type_id: number;
  kind: PlanKind;
  monthly_cost_cents: number;
  is_recurring: number;
  created_at: number;
}

/** A person's subscription to a licence plan; live while started and not ended. */
export interface PlanSubscriptionsTable {
  id: Generated<number>;
  person_id: number;
  plan_id: number;
  started_at: number;
  /** null: open-ended (a recurring plan runs until stopped). */
  ended_at: number | null;
  is_recurring: number;
  /** The plan's monthly cost when subscribed. */
  cost_cents: number;
}
/** One WhiteLabelStartSubscription call granting access to a strategy the site owns, under its IdempotencyKey. */
export interface SubscriptionGrantsTable {
  id: Generated<number>;
  site_id: number;
  /** Unique per site: the same key again replays this grant (same parameters) or is refused. */
  idempotency_key: string;
  /** A hash of the call's parameters (customer, strategy, term). */
  request_fingerprint: string;
  /** The subscription granted or extended; null only while the call that claimed the key runs. */
  subscription_id: number | null;
  /** The end of access this call granted. */
  granted_until: number | null;
  created_at: number;
}

/** A GEN checkout: a customer's intent to buy a subscription, approved on its page (src/core/checkout.ts). */
export interface SubscriptionCheckoutsTable {
  id: Generated<number>;
  person_id: number;
  strategy_id: number;
  status: CheckoutStatus;
  status_detail: string;
  billing_interval: BillingInterval;
  billing_interval_count: number;
  /** What the customer pays per interval. */
  price_cents: number;
  /** With the service's checkout secret, makes the page token and the form token; the token itself is not stored. */
  nonce: string;
  /** sha256 of the page token: how the page finds its checkout. */
  token_hash: string;
  /** person:strategy while a human step or the charge is pending (unique: one pending checkout each). */
  pending_key: string | null;
  /** The subscription made at consent (active once its first charge settled). */
  subscription_id: number | null;
  /** The payment method the customer paid with. */
  payment_ref: string | null;
  created_at: number;
  updated_at: number;
  /** Service clock: a checkout not approved by then expires. */
  expires_at: number;
}

/** A charge the sandbox payment provider answered: one outcome per reference. */
export interface SandboxChargesTable {
  reference: string;
  outcome: "settled" | "declined" | "action_required";
  reason: string | null;
  provider_ref: string;
  payment_ref: string;
  amount_cents: number;
  created_at: number;
  updated_at: number;
}

/** A broker the service trades through (GetBrokers). */
export interface BrokersTable {
  id: Generated<number>;
  name: string;
  /** Broker.ConnectionName. */
  connection_name: string;
  is_enabled: number;
  created_at: number;
}

/** A person's account at a broker: an account of kind broker, whose value the broker reports. */
export interface BrokerAccountsTable {
  account_id: number;
  person_id: number;
  broker_id: number;
  /** The account as the broker names it (the API's Account). */
  account_number: string;
  is_paper: number;
  /** AccountType: 1 live, 2 paper (docs/decisions.md). */
  account_type: number;
  currency: string;
  broker_username: string | null;
  /** 0 once the broker delinked the account. */
  is_linked: number;
  /** The account's value as the broker last reported it (decimal text). */
  net_liquidation: string | null;
  net_liquidation_at: number | null;
  /** When autotrade first traded in the account. */
  first_activation_at: number | null;
  created_at: number;
  /** When the paper account was last reset to its starting cash (ResetPaperTrade); null: never. */
  reset_at: Generated<number | null>;
}

export type SetupStatus = "active" | "stop_requested" | "stopped";

/** An autotrade setup: a brokerage account following a strategy, scaled, with its settings. */
export interface AutotradeSetupsTable {
  id: Generated<number>;
  account_id: number;
  person_id: number;
  broker_id: number;
  strategy_id: number;
  /** The white-label site the setup was approved through, if any. */
  site_id: number | null;
  status: SetupStatus;
  /** account:strategy while not stopped (unique: one live setup per account and strategy). */
  live_key: string | null;
  scaling_percentage: string;
  is_autotrade_enabled: number;
  autotrade_disabled_reason: string | null;
  is_sync_enabled: number;
  sync_disabled_reason: string | null;
  is_confirmation_needed: number;
  approved: number;
  /** The per-class and other settings as JSON (src/core/autotrade/settings.ts). */
  settings: string;
  /** WillSyncToOpen flags by market suffix, JSON. */
  sync_to_open: string;
  /** LastSync times by market suffix (ms), JSON. */
  last_sync: string;
  do_not_join_open_positions: number;
  stop_requested_at: number | null;
  stop_leave_positions_open: number | null;
  stop_terminate_subscription: number | null;
  started_at: number;
  updated_at: number;
  stopped_at: number | null;
}

/** AutoSync's latest open synced per setup and venue (0029): claimed by moving `opens_at` forward only. */
export interface AutotradeSyncsTable {
  setup_id: number;
  /** A market at one schedule (src/core/autotrade/sync-markets.ts). */
  venue: string;
  /** The WillSyncToOpen market suffix the venue belongs to. */
  market: string;
  /** The open of the session last synced (0: none yet). */
  opens_at: number;
  /** When that sync ran; null while only requested. */
  synced_at: number | null;
  /** An open SyncPositionsToOpen asked to be synced at (the market was closed), until it is. */
  requested_for: number | null;
}

/** What an account order is for (sync: AutoSync or SyncPositionsToOpen bringing the account to the strategy). */
export type AccountOrderPurpose = "copy" | "close" | "auto_stop" | "manual" | "sync";

/** An order in a brokerage account: a strategy order's scaled copy (or a close, an automatic stop, a manual exit). */
export interface AccountOrdersTable {
  id: Generated<number>;
  account_id: number;
  setup_id: number | null;
  /** The strategy the order trades for. */
  strategy_id: number;
  /** The strategy order it copies, if any. */
  source_order_id: number | null;
  purpose: AccountOrderPurpose;
  symbol: string;
  symbol_type: string;
  side: "buy" | "sell";
  open_close: "open" | "close";
  order_type: "market" | "limit" | "stop";
  tif: "day" | "gtc";
  quantity: string;
  limit_price: string | null;
  stop_price: string | null;
  /** A broker-order status (src/core/autotrade/broker-order.ts). */
  status: string;
  /** The status a pending cancel or replace returns to when the broker refuses it. */
  prior_status: string | null;
  /** Held for the customer's confirmation before it is sent. */
  awaiting_confirmation: number;
  /** 1: a virtual limit (VirtualLimitOrdersEnabled), kept here until the strategy's order fills, then sent at market. */
  virtual_limit: number;
  /** 1: a stock order the broker trades as a CFD (TradeStocksAsCFD). */
  as_cfd: number;
  filled_quantity: string;
  filled_notional: string;
  /** What the broker dedupes the order by: a retry or a second process never sends it twice. */
  idempotency_key: string;
  broker_order_id: string | null;
  /** The account order this one replaced. */
  replaces_id: number | null;
  /** Why it was rejected, canceled by the service, or held. */
  reason: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
  closed_at: number | null;
}

export interface AccountFillsTable {
  id: Generated<number>;
  account_order_id: number;
  account_id: number;
  strategy_id: number;
  symbol: string;
  side: "buy" | "sell";
  quantity: string;
  price: string;
  /** The broker's id of the execution: a report heard twice counts once. */
  broker_fill_id: string;
  filled_at: number;
}

/** What a setup holds in its account, by symbol (the broker nets; the service attributes). */
export interface AutotradePositionsTable {
  account_id: number;
  strategy_id: number;
  symbol: string;
  symbol_type: string;
  /** Signed: negative is short. */
  quantity: string;
  cost: string;
  opened_at: number;
}

/** A strategy order a setup did not copy, and why. */
export interface CopySkipsTable {
  id: Generated<number>;
  setup_id: number;
  account_id: number;
  strategy_id: number;
  source_order_id: number;
  reason: string;
  message: string;
  at: number;
}

/** A white-label autotrade approval request (API.md States). */
export interface AutotradeApprovalsTable {
  id: Generated<number>;
  site_id: number;
  person_id: number;
  strategy_id: number;
  broker_id: number;
  account_number: string;
  /** The StartAutotrade body as received (JSON). */
  request: string;
  status: "PendingCustomer" | "Processing" | "PendingBroker" | "Completed" | "Failed" | "Expired" | "Superseded";
  status_detail: string | null;
  nonce: string;
  token_hash: string;
  setup_id: number | null;
  superseded_by: number | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

/** A white-label site's webhook endpoint (POST /Webhooks/Register). */
export interface WebhookEndpointsTable {
  id: Generated<number>;
  site_id: number;
  url: string;
  /** The signing secret (HMAC-SHA256 needs it itself; answered once, at registration). */
  secret: string;
  /** site:url while registered (unique: one live registration per site and URL). */
  live_key: string | null;
  created_at: number;
  deleted_at: number | null;
}

/** An event owed to an endpoint: delivered at least once, deduplicated by event id. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  endpoint_id: number;
  event_id: string;
  event_type: string;
  /** The body sent, exactly (the signature covers it). */
  payload: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  /** Service clock: when the next attempt is due. */
  next_attempt_at: number | null;
  /** Real time: a deliverer holds the row until then. */
  claimed_until: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

/** A notice to a customer (a white-label stop that retired their pending approvals, say). */
export interface CustomerNoticesTable {
  id: Generated<number>;
  person_id: number;
  site_id: number | null;
  kind: string;
  message: string;
  created_at: number;
}

/** An account at the simulated broker (its own books, not the service's). */
export interface SimBrokerAccountsTable {
  /** The account as the broker names it. */
  account: string;
  cash: string;
  is_linked: number;
  username: string | null;
  created_at: number;
}

/** An order at the simulated broker, one per idempotency key the service sent. */
export interface SimBrokerOrdersTable {
  /** The broker's first id of the order; a replace gives it a new broker order id, not a new row. */
  id: string;
  idempotency_key: string;
  broker_order_id: string;
  account: string;
  symbol: string;
  symbol_type: "stock" | "option" | "future" | "forex";
  side: "buy" | "sell";
  order_type: "market" | "limit" | "stop";
  tif: "day" | "gtc";
  quantity: string;
  limit_price: string | null;
  stop_price: string | null;
  /** 1: sent as a CFD on the stock rather than the shares. */
  as_cfd: number;
  /** new (not yet acknowledged), working, filled, canceled, rejected, expired. */
  status: "new" | "working" | "filled" | "canceled" | "rejected" | "expired";
  filled_quantity: string;
  reason: string | null;
  /** A partialFill fault: the first execution takes only this fraction of the quantity. */
  partial_fraction: string | null;
  /** A delay fault: not acknowledged nor filled before this instant (service clock). */
  held_until: number | null;
  /** DAY orders: the close they expire at. */
  expires_at: number | null;
  replacements: number;
  /** 0 until the reports of the order's last change were handed to the listeners. */
  reported: number;
  created_at: number;
  updated_at: number;
}

/** An execution at the simulated broker: of an order, or (order_id null) one the service did not send. */
export interface SimBrokerExecutionsTable {
  id: string;
  order_id: string | null;
  account: string;
  symbol: string;
  side: "buy" | "sell";
  quantity: string;
  price: string;
  executed_at: number;
}

export interface SimBrokerPositionsTable {
  account: string;
  symbol: string;
  symbol_type: "stock" | "option" | "future" | "forex";
  /** Signed: negative is short. */
  quantity: string;
}

/** A fault the sandbox set on an account (src/engine/brokers/sim-faults.ts). */
export interface SimBrokerFaultsTable {
  account: string;
  fault: string;
  /** The fault's fields as JSON. */
  detail: string;
  created_at: number;
}

/** A brokerage account's link to the page confirming its held autotrade copies (0024). */
export interface ConfirmationLinksTable {
  account_id: number;
  /** sha256 of the page's token (hex). */
  token_hash: string;
  nonce: string;
  /** Holds that made or refreshed the link (a spent link is marked used only if none came since). */
  holds: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/**
 * A brokerage account marked at an NYSE close (issue 14): its value then, the
 * broker's cash and positions at the close's prices.
 */
export interface AccountMarksTable {
  account_id: number;
  /** The trading day, YYYY-MM-DD (New York). */
  day: string;
  marked_at: number;
  value: string;
  cash: string;
}

/**
 * What a strategy's setup holds in a brokerage account, marked at an NYSE
 * close: the holdings' value at the close's prices and the running profit and
 * loss (every fill's cash flow plus the holdings' value), from which the
 * dashboard's returns are computed.
 */
export interface AutotradeMarksTable {
  account_id: number;
  strategy_id: number;
  day: string;
  marked_at: number;
  holdings_value: string;
  pnl: string;
}

/** What a watchlist is: a person's own, or the one the service offers everyone (0027). */
export type WatchlistKind = "custom" | "leaderboard";

/** A watchlist: a person's own list of strategies, or the service's leaderboard list (no owner). */
export interface WatchlistsTable {
  id: Generated<number>;
  kind: WatchlistKind;
  person_id: number | null;
  name: string;
  /** The name folded to lower case: a person's names are unique without regard to case (null: built in). */
  name_key: string | null;
  created_at: number;
  updated_at: number;
}

export interface WatchlistMembersTable {
  watchlist_id: number;
  strategy_id: number;
  added_at: number;
}

/** A variant (child strategy) mirroring its parent's orders (0027). */
export interface StrategyMuxTable {
  child_strategy_id: number;
  parent_strategy_id: number;
  /** Exact decimal text: the child's orders are the parent's × this / 100. */
  scaling_percentage: string;
  /** The parent's last order event when the child was linked: later ones are mirrored. */
  from_seq: number;
  linked_at: number;
  updated_at: number;
}

export type MuxAction = "place" | "replace" | "cancel";
export type MuxOutcome = "mirrored" | "failed" | "skipped";

/** What became of a parent order for one child: once per child, parent order and action. */
export interface MuxOrdersTable {
  id: Generated<number>;
  parent_strategy_id: number;
  child_strategy_id: number;
  parent_order_id: number;
  action: MuxAction;
  status: MuxOutcome;
  /** The child's order that mirrors it (placed, replacing, or canceled). */
  child_order_id: number | null;
  /** Why it failed or was skipped: a code. */
  reason: string | null;
  message: string | null;
  /** The parent's event it came from. */
  parent_seq: number;
  at: number;
}

/** ApprovedAccount.ConnectionType: 0 Autotrade, 1 BrokerTransmit. */
export type ConnectionType = 0 | 1;

/** A geo-site's approval of a member's brokerage account (ApprovedAutotradeAccount, ApprovedBrokerTransmitAccount). */
export interface ApprovedAccountsTable {
  id: Generated<number>;
  connection_type: ConnectionType;
  geo_site_id: number;
  person_id: number;
  account_id: number;
  broker_id: number;
  account_number: string;
  /** The person's white-label site when approved, if any. */
  white_label_site_id: number | null;
  /** The account may trade CFDs (a setup's TradeStocksAsCFD needs it where approval is required). */
  is_cfd: number;
  added_at: number;
  added_by_person_id: number;
  deleted_at: number | null;
  deleted_by_person_id: number | null;
  /** type:geo-site:account while not deleted (unique: one live approval of each kind per geo-site and account). */
  live_key: string | null;
}

/** A stability event of a brokerage account, stored as it happens (src/core/autotrade/account-events.ts). */
export interface AccountEventsTable {
  id: Generated<number>;
  account_id: number;
  person_id: number;
  kind: string;
  reason: string | null;
  at: number;
}

/** One account's autotrade snapshot of one UTC day (GetAutotradeStats), taken by the scheduled job. */
export interface AutotradeStatsTable {
  id: Generated<number>;
  account_id: number;
  /** The UTC midnight the day starts at (DateUtc). */
  day_at: number;
  taken_at: number;
  person_id: number;
  broker_id: number;
  white_label_site_id: number | null;
  geo_site_id: number | null;
  net_liquidation: string | null;
  net_liquidation_at: number | null;
  first_activation_at: number | null;
  currency: string;
  /** Active setups of the account enabling each class, and the strategies they follow. */
  autotraded_stocks: number;
  autotraded_futures: number;
  autotraded_options: number;
  autotraded_forex: number;
  autotraded_crypto: number;
  autotraded_unique: number;
  is_sync_enabled: number;
  is_manual_confirmation: number;
  is_disabled: number;
  is_broker_enabled: number;
}
