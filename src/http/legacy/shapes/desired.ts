import { Type } from "@sinclair/typebox";
import { OneOf, Text } from "./values.js";

/** The desired-positions commands' requests and answers. */

const DesiredPositionRow = Type.Object(
  {
    underlying: Text(),
    symbol: Text("As the client wrote it"),
    strike: Text(),
    putcall: Text(),
    typeofsymbol: Text(),
    quant: Text("Signed: below zero is short"),
    expir: Text(),
  },
  { title: "LegacyDesiredPosition" },
);

export const GetDesiredPositions = {
  answer: Type.Object({ response: Type.Array(DesiredPositionRow) }),
};

export const SetDesiredPositions = {
  answer: Type.Object({
    response: Type.Array(DesiredPositionRow),
    mode: OneOf(["engaged", "off"], "Whether the system is now held at the portfolio"),
  }),
};
