import { Type } from "@sinclair/typebox";
import type { AccountName } from "../../services/autotrade-accounts.js";
import { Id } from "./schemas.js";

/** The request fields that name an autotraded brokerage account (issue 14's operations). */

const INT32_MAX = 2_147_483_647;

const BrokerId = Type.Integer({
  minimum: 1,
  maximum: INT32_MAX,
  description: "The account's broker: needed only when the account number is at more than one",
});

/** The account as its broker names it, without its owner (GetAutoTradeOpenPositions). */
export const ACCOUNT_FIELDS = {
  Account: Type.String({ minLength: 1, maxLength: 64, description: "The account as its broker names it" }),
  BrokerId: Type.Optional(BrokerId),
};

/** The account and its owner. */
export const OWNED_ACCOUNT_FIELDS = { ...ACCOUNT_FIELDS, PersonId: Id({ description: "The account's owner" }) };

/** Who may name an account, as the operations' summaries say it. */
export const WHO =
  "The account's owner, their site's administrators and service admins (an account of anyone else is not found).";

export const accountNameOf = (input: { Account: string; PersonId?: number; BrokerId?: number }): AccountName => ({
  personId: input.PersonId,
  account: input.Account,
  brokerId: input.BrokerId,
});
