import { Type } from "@sinclair/typebox";
import { AmountIn, OneOf, SystemIdIn, Text } from "./values.js";

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
  input: Type.Object({ systemid: SystemIdIn }),
  answer: Type.Object({ response: Type.Array(DesiredPositionRow) }),
};

export const SetDesiredPositions = {
  input: Type.Object({
    systemid: SystemIdIn,
    positions: Type.Array(
      Type.Object({
        symbol: Type.String({ description: "A symbol; or flat (with typeofsymbol flat), or stop or off likewise" }),
        typeofsymbol: Type.String({ description: "stock, option, future or forex; or flat, stop or off" }),
        quant: Type.Optional(AmountIn("Signed whole number: below zero is short")),
      }),
      {
        description:
          "The portfolio to hold; the single entry flat/flat holds the system flat, stop/stop or off/off ends the mode",
      },
    ),
  }),
  answer: Type.Object({
    response: Type.Array(DesiredPositionRow),
    mode: OneOf(["engaged", "off"], "Whether the system is now held at the portfolio"),
  }),
};
