import { Type } from "@sinclair/typebox";
import { anyCaller } from "../../../core/access.js";
import { WATCHLIST_LIMITS } from "../../../core/watchlists.js";
import { type WatchlistView, watchlistMembers, watchlistsOf } from "../../../services/watchlist-reads.js";
import { deleteFromWatchlist, editWatchlist } from "../../../services/watchlists.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { Id } from "../schemas.js";
import { WatchListMemberRecord, WatchListRecord } from "../watchlist-records.js";
import { basicDetailsOf } from "./discovery.js";

/**
 * Watchlists (API.md 4.5; docs/decisions.md "Watchlists (issue 14)"): every
 * key keeps its own lists of strategies and reads the service's leaderboard
 * list. ManageWatchList is two operations of the table, POST and DELETE on
 * one path (an OpenAPI document names each method's operation apart).
 */

const dateOf = (ms: number | null) => (ms === null ? null : new Date(ms));

const watchListRecord = (list: WatchlistView) => ({
  Id: list.id,
  Name: list.name,
  Kind: list.kind === "custom" ? "Custom" : "Leaderboard",
  IsReadOnly: list.kind !== "custom",
  PersonId: list.personId,
  MemberCount: list.memberCount,
  MaxMembers: list.kind === "custom" ? WATCHLIST_LIMITS.membersPerList : null,
  CreatedDate: dateOf(list.createdAt),
  LastModified: dateOf(list.updatedAt),
  DeletedDate: dateOf(list.deletedAt),
});

const WatchListId = Id({ description: "The watchlist (GetWatchLists' Id)" });
const StrategyIds = Type.Array(Id(), { maxItems: WATCHLIST_LIMITS.membersPerList });

export const watchlistOperations = [
  defineOperation({
    id: "GetWatchLists",
    method: "GET",
    path: "/Strategies/GetWatchLists",
    servers: ["WL"],
    summary:
      "Every watchlist available to the caller: the service's Leaderboard list (read only) and the caller's own lists, by id.",
    input: Type.Object({}),
    result: WatchListRecord,
    permission: anyCaller,
    paginated: true,
    example: {},
    handler: async (ctx, _input, page) => {
      const result = await watchlistsOf(ctx, page);
      return { ...result, items: result.items.map(watchListRecord) };
    },
  }),
  defineOperation({
    id: "GetWatchListMembers",
    method: "GET",
    path: "/Strategies/GetWatchListMembers",
    servers: ["WL"],
    summary:
      "The strategies of a watchlist the caller may see: a person's list in the order they were added, the Leaderboard list in rank order. Another person's list does not exist to the caller (404).",
    input: Type.Object({ WatchListId }),
    result: WatchListMemberRecord,
    permission: anyCaller,
    paginated: true,
    example: { WatchListId: EXAMPLE.leaderboardWatchListId },
    handler: async (ctx, input, page) => {
      const result = await watchlistMembers(ctx, input.WatchListId, page);
      return {
        ...result,
        items: result.items.map((member) => ({
          ...basicDetailsOf(member),
          WatchListId: member.watchlistId,
          AddedDate: dateOf(member.addedAt),
        })),
      };
    },
  }),
  defineOperation({
    id: "ManageWatchList",
    method: "POST",
    path: "/Strategies/ManageWatchList",
    servers: ["WL"],
    summary: `Without WatchListId makes a watchlist named Name (shorter than ${WATCHLIST_LIMITS.nameLength + 1} characters, unique among the caller's without regard to case; at most ${WATCHLIST_LIMITS.listsPerPerson} per person); with it renames the caller's list (Name) and adds StrategyIds (strategies the caller may see; at most ${WATCHLIST_LIMITS.membersPerList} per list; ones in it already change nothing). Answers the list.`,
    input: Type.Object({
      WatchListId: Type.Optional(WatchListId),
      Name: Type.Optional(Type.String({ maxLength: 200, description: "1 to 59 characters once trimmed" })),
      StrategyIds: Type.Optional(StrategyIds),
    }),
    result: WatchListRecord,
    permission: anyCaller,
    paginated: false,
    example: { Name: "Breakouts", StrategyIds: [EXAMPLE.strategyId] },
    handler: async (ctx, input) => [
      watchListRecord(
        await editWatchlist(ctx, { watchListId: input.WatchListId, name: input.Name, strategyIds: input.StrategyIds }),
      ),
    ],
  }),
  defineOperation({
    id: "DeleteWatchList",
    method: "DELETE",
    path: "/Strategies/ManageWatchList",
    servers: ["WL"],
    summary:
      "ManageWatchList's DELETE. With StrategyIds takes those strategies out of the caller's list (ones not in it change nothing) and answers the list; without, deletes the whole list and answers it as it was, with DeletedDate.",
    input: Type.Object({ WatchListId, StrategyIds: Type.Optional(StrategyIds) }),
    result: WatchListRecord,
    permission: anyCaller,
    paginated: false,
    example: { WatchListId: EXAMPLE.watchListId, StrategyIds: [EXAMPLE.strategyId] },
    handler: async (ctx, input) => [
      watchListRecord(await deleteFromWatchlist(ctx, input.WatchListId, input.StrategyIds)),
    ],
  }),
];
