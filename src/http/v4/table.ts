import type { Operation } from "./operation.js";
import { generalOperations } from "./operations/general.js";
import { sandboxOperations } from "./operations/sandbox.js";

/** Every v4 operation. The three servers, their OpenAPI documents and the permission tests come from here. */
export const OPERATIONS: readonly Operation[] = [...generalOperations, ...sandboxOperations];
