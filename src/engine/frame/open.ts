import { openJournal } from "../../store/journal/journal.js";
import type { Storage } from "../../store/storage.js";
import { TradingFrame } from "./frame.js";

/** The trading frame of a storage, with its journal (close it to stop the journal's thread or connection). */
export const openFrame = (storage: Storage): TradingFrame =>
  new TradingFrame(storage, (origin) => openJournal(storage, origin));
