import { Type } from "@sinclair/typebox";
import { WATCHLIST_LIMITS } from "../../core/watchlists.js";
import { StrategyBasicDetailsRecord } from "./records.js";
import { DateTime, Nullable } from "./schemas.js";

/** Result records of the watchlist operations (docs/decisions.md "Watchlists (issue 14)"). */

export const WatchListRecord = Type.Object(
  {
    Id: Type.Integer({ description: "The watchlist's id (WatchListId)" }),
    Name: Type.String(),
    Kind: Type.Union([Type.Literal("Custom"), Type.Literal("Leaderboard")], {
      description: "Custom: the caller's own list. Leaderboard: the service's curated leaderboard, read only",
    }),
    IsReadOnly: Type.Boolean({ description: "True for the built-in list: ManageWatchList does not change it" }),
    PersonId: Nullable(Type.Integer({ description: "The owner; null for the built-in list" })),
    MemberCount: Type.Integer({ description: "The strategies in it the caller may see" }),
    MaxMembers: Nullable(
      Type.Integer({ description: `At most ${WATCHLIST_LIMITS.membersPerList} on a person's list; null: built in` }),
    ),
    CreatedDate: Nullable(DateTime()),
    LastModified: Nullable(DateTime()),
    DeletedDate: Nullable(
      DateTime({ description: "Set only on the answer of the DELETE that deleted the whole list" }),
    ),
  },
  { title: "WatchList" },
);

export const WatchListMemberRecord = Type.Object(
  {
    ...StrategyBasicDetailsRecord.properties,
    WatchListId: Type.Integer(),
    AddedDate: Nullable(
      DateTime({ description: "When it was added; null on the leaderboard (its order is the rank)" }),
    ),
  },
  { title: "WatchListMember" },
);
