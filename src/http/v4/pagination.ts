import { type TObject, Type } from "@sinclair/typebox";
import { MAX_PAGE_SIZE } from "../../store/page.js";

/** The request fields every paginated operation takes (WIRE.md "Pagination"). */
export const PAGINATION_INPUT = { cursor: "Cursor", limit: "Limit", ascending: "AscendingOrder" } as const;

export function paginationInput(schema: TObject): TObject {
  return Type.Object({
    ...schema.properties,
    Cursor: Type.Optional(
      Type.String({ maxLength: 2000, description: "Opaque cursor from Pagination of an earlier page" }),
    ),
    Limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_SIZE,
        description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${MAX_PAGE_SIZE})`,
      }),
    ),
    AscendingOrder: Type.Optional(Type.Boolean({ description: "true (default): oldest first" })),
  });
}
