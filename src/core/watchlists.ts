import type { ErrorEntry } from "./errors.js";
import { fold } from "./search.js";

/**
 * The rules of a person's watchlists (API.md Limits: names shorter than 60
 * characters; the numbers of lists and of members are the service's, in
 * docs/decisions.md "Watchlists (issue 14)"). Each refusal names the field
 * and the limit, in its message and in Meta.Limit.
 */
export const WATCHLIST_LIMITS = {
  /** Shorter than 60 characters. */
  nameLength: 59,
  listsPerPerson: 20,
  membersPerList: 200,
} as const;

export type NameCheck =
  | { readonly ok: true; readonly name: string; readonly key: string }
  | { readonly ok: false; readonly error: ErrorEntry };

/** A list's name: trimmed, 1 to 59 characters; its key (folded to lower case) is unique per person. */
export function checkWatchlistName(value: string, field = "Name"): NameCheck {
  const name = value.trim();
  const max = WATCHLIST_LIMITS.nameLength;
  if (name.length === 0) return { ok: false, error: { name: "MissingValue", field, message: `${field} is empty` } };
  if ([...name].length > max) {
    return {
      ok: false,
      error: {
        name: "InvalidValue",
        field,
        message: `${field} must be shorter than ${max + 1} characters`,
        meta: { Limit: max },
      },
    };
  }
  return { ok: true, name, key: fold(name) };
}

/** The refusal of a person's list beyond the limit, or null while there is room. */
export function listsOverLimit(held: number, field = "Name"): ErrorEntry | null {
  const limit = WATCHLIST_LIMITS.listsPerPerson;
  if (held < limit) return null;
  return {
    name: "LimitReached",
    field,
    message: `A person keeps at most ${limit} watchlists`,
    meta: { Limit: limit, Count: held },
  };
}

/** The refusal of members beyond a list's limit (those held and those added), or null when they fit. */
export function membersOverLimit(held: number, adding: number, field = "StrategyIds"): ErrorEntry | null {
  const limit = WATCHLIST_LIMITS.membersPerList;
  if (held + adding <= limit) return null;
  return {
    name: "LimitReached",
    field,
    message: `A watchlist holds at most ${limit} strategies: it holds ${held} and ${adding} more were added`,
    meta: { Limit: limit, Count: held, Adding: adding },
  };
}
