import assert from "node:assert/strict";
import type { Static } from "@sinclair/typebox";
import type { Caller } from "../../src/core/access.js";
import { type OrderDto, readOrder } from "../../src/http/v4/orders-wire.js";
import { authenticate } from "../../src/services/keys.js";
import type { OrderInput } from "../../src/services/orders.js";
import type { TestService } from "./service.js";
import { MARKET_OPEN } from "./trading.js";

/** Calling the trading services directly, with what the HTTP layer would hand them. */

/** The caller a key authenticates as. */
export async function callerOf(service: TestService, key: string): Promise<Caller> {
  const authentication = await authenticate(service.app.runtime, key);
  assert.ok(authentication.ok, "the key authenticates");
  return authentication.principal;
}

/** The service's input for an OrderDTO (see stockOrder), read as NewStrategyOrder reads it at `nowMs`. */
export const orderInput = (dto: Record<string, unknown>, nowMs = Date.parse(MARKET_OPEN)): OrderInput =>
  readOrder(dto as Static<typeof OrderDto>, nowMs);
