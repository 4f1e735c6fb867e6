import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { noteHeldCopies } from "../../src/services/autotrade-confirmations.js";
import { brokerAccount } from "../helpers/autotrade.js";
import { newCustomer } from "../helpers/commerce.js";
import { BACKENDS, startTestService, type TestService } from "../helpers/service.js";

/**
 * One confirmation link per account (src/services/autotrade-confirmations.ts):
 * holds noted at the same time, each in its own transaction, all give the
 * address of the one live link; a spent link is replaced by a new address.
 */
for (const backend of BACKENDS) {
  describe(`the confirmation link of an account (${backend})`, () => {
    let service: TestService;

    before(async () => {
      service = await startTestService(backend);
    });
    after(() => service.close());

    const accountOf = async () => {
      const personId = await newCustomer(service, null);
      const number = await brokerAccount(service, personId);
      const { account_id } = await service.storage.db
        .selectFrom("broker_accounts")
        .select("account_id")
        .where("account_number", "=", number)
        .executeTakeFirstOrThrow();
      return { personId, accountId: account_id };
    };
    const addresses = async (personId: number) =>
      (
        await service.storage.db
          .selectFrom("customer_notices")
          .select("message")
          .where("person_id", "=", personId)
          .orderBy("id")
          .execute()
      ).map((notice) => /\/Confirmations\/\S+/.exec(notice.message)?.[0]);
    const note = (accountId: number) =>
      noteHeldCopies({ storage: service.storage, clock: service.app.runtime.clock }, accountId, []);

    test("holds noted at once give one address; once the link is spent, the next hold gives a new one", async () => {
      const { personId, accountId } = await accountOf();
      await Promise.all(Array.from({ length: 6 }, () => note(accountId)));
      const given = await addresses(personId);
      assert.equal(given.length, 6);
      assert.equal(new Set(given).size, 1, given.join("\n"));
      const link = await service.storage.db
        .selectFrom("confirmation_links")
        .select(["holds"])
        .where("account_id", "=", accountId)
        .executeTakeFirstOrThrow();
      assert.equal(Number(link.holds), 6);

      await service.storage.db
        .updateTable("confirmation_links")
        .set({ used_at: service.app.runtime.clock.nowMs() })
        .where("account_id", "=", accountId)
        .execute();
      await note(accountId);
      const after = await addresses(personId);
      assert.notEqual(after.at(-1), given[0]);
    });
  });
}
