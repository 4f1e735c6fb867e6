import type { Operation } from "./operation.js";
import { autotradeAccountReadOperations } from "./operations/autotrade-account-reads.js";
import { autotradeAdminOperations } from "./operations/autotrade-admin.js";
import { autotradeApprovalOperations } from "./operations/autotrade-approvals.js";
import { autotradeOrderEntryOperations } from "./operations/autotrade-order-entry.js";
import { autotradeSetupOperations } from "./operations/autotrade-setups.js";
import { autotradeSyncOperations } from "./operations/autotrade-sync.js";
import { brokerFaultOperations } from "./operations/broker-faults.js";
import { checkoutOperations } from "./operations/checkout.js";
import { discoveryOperations } from "./operations/discovery.js";
import { generalOperations } from "./operations/general.js";
import { geoApprovalOperations } from "./operations/geo-approvals.js";
import { instrumentationOperations } from "./operations/instrumentation.js";
import { kycOperations } from "./operations/kyc.js";
import { orderOperations } from "./operations/orders.js";
import { performanceOperations } from "./operations/performance.js";
import { planOperations } from "./operations/plans.js";
import { profileOperations } from "./operations/profiles.js";
import { rule575Operations } from "./operations/rule575.js";
import { sandboxOperations } from "./operations/sandbox.js";
import { simOperations } from "./operations/sims.js";
import { siteCommerceOperations } from "./operations/site-commerce.js";
import { siteOperations } from "./operations/sites.js";
import { strategyOperations } from "./operations/strategies.js";
import { strategyMuxOperations } from "./operations/strategy-mux.js";
import { subscriptionOperations } from "./operations/subscriptions.js";
import { symbolOperations } from "./operations/symbols.js";
import { watchlistOperations } from "./operations/watchlists.js";
import { webhookOperations } from "./operations/webhooks.js";

/** Every v4 operation. The three servers, their OpenAPI documents and the permission tests come from here. */
export const OPERATIONS: readonly Operation[] = [
  ...generalOperations,
  ...checkoutOperations,
  ...profileOperations,
  ...siteOperations,
  ...kycOperations,
  ...instrumentationOperations,
  ...strategyOperations,
  ...subscriptionOperations,
  ...orderOperations,
  ...performanceOperations,
  ...discoveryOperations,
  ...symbolOperations,
  ...sandboxOperations,
  ...simOperations,
  ...planOperations,
  ...siteCommerceOperations,
  ...autotradeApprovalOperations,
  ...webhookOperations,
  // Before the setup operations: their examples (StopAutotrade) stop the setup these examples trade in.
  ...autotradeAccountReadOperations,
  ...autotradeOrderEntryOperations,
  ...autotradeSetupOperations,
  ...autotradeSyncOperations,
  ...brokerFaultOperations,
  ...autotradeAdminOperations,
  ...geoApprovalOperations,
  ...watchlistOperations,
  ...rule575Operations,
  ...strategyMuxOperations,
];
