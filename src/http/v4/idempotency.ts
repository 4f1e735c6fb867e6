import { refuse } from "../../core/errors.js";
import { type Claimed, claimIdempotencyKey } from "../../services/idempotency.js";
import type { OperationContext } from "./operation.js";

/**
 * The Idempotency-Key header of order entry (NewStrategyOrder,
 * ReplaceStrategyOrder, CancelStrategyOrder, SetDesiredPositions): a request
 * sent again with the same key and the same body within 24 hours answers
 * what the first answered, marked `Idempotent-Replayed: true`, and makes
 * nothing (src/services/idempotency.ts keeps the keys).
 */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** Visible ASCII, as a header value carries it: a UUID or any token a client makes up. */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** The header's key; a malformed one is refused (400, the header named). */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header.join(",") : header.trim();
  if (!KEY.test(key)) {
    throw refuse("InvalidValue", {
      field: IDEMPOTENCY_HEADER,
      message: `${IDEMPOTENCY_HEADER} must be 1 to 255 visible ASCII characters`,
    });
  }
  return key;
}

/**
 * Runs the operation under its key: `run` gets the context marked with the
 * key and answers the body to send; a repeat gets the first body instead.
 */
export async function answerOnce(
  ctx: OperationContext,
  operation: string,
  key: string,
  input: unknown,
  run: (ctx: OperationContext) => Promise<string>,
): Promise<{ readonly body: string; readonly replayed: boolean }> {
  const mark = { personId: ctx.caller.personId, key };
  const claimed: Claimed = await claimIdempotencyKey(ctx, { ...mark, operation, input });
  if (claimed.kind === "replay") return { body: claimed.body, replayed: true };
  let body: string;
  try {
    body = await run({ ...ctx, idempotency: mark });
  } catch (error) {
    // The request's own failure is what is answered: storage that just failed it may fail this too.
    await claimed.abandon().catch(() => undefined);
    throw error;
  }
  // Kept best effort: the orders are made; if the answer is not kept, a repeat is told so (1204).
  await claimed.answered(body).catch(() => undefined);
  return { body, replayed: false };
}
