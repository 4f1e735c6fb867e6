import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { hashKey } from "../../src/core/keys.js";
import { createPerson } from "../../src/services/people.js";
import { createSite } from "../../src/services/sites.js";
import { assertPositiveInt, assertSucceeded, childEnv, onlyJson, runCli, spawnCli } from "../helpers/cli.js";
import { BACKENDS, keyChangeHeard, startTestService, type TestService } from "../helpers/service.js";

/**
 * The operator CLI on the same storage as the service: its commands run in
 * this process; the exit codes and the time zone, as operators run it, a
 * process of its own.
 */

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

for (const backend of BACKENDS) {
  describe(`operator CLI (${backend})`, () => {
    let service: TestService;
    let env: NodeJS.ProcessEnv;
    const cli = (...args: string[]) => runCli(env, args);

    before(async () => {
      service = await startTestService(backend);
      env = childEnv(service.env);
    });
    after(async () => {
      await service?.close();
    });

    /** A site made in-process, for commands that need one to exist. */
    const site = async (kind: "whitelabel" | "geo", name: string) =>
      (await createSite(service.app.runtime, { kind, name })).id;

    const getAccessKey = (key: string) => service.call("WL", "GET", "/General/GetAccessKey", { key });

    test("site create: {Id} for a white-label and a geo site, a JSON Error for a bad kind", async () => {
      const [whitelabel, geo, bad] = await Promise.all([
        cli("site", "create", "--kind", "whitelabel", "--name", "CLI White Label", "--json"),
        cli("site", "create", "--kind", "geo", "--name", "CLI Geo", "--json"),
        cli("site", "create", "--kind", "planet", "--name", "CLI Nowhere", "--json"),
      ]);
      for (const [run, kind, name] of [
        [whitelabel, "whitelabel", "CLI White Label"],
        [geo, "geo", "CLI Geo"],
      ] as const) {
        assertSucceeded(run);
        const body = onlyJson(run);
        assert.deepEqual(Object.keys(body), ["Id"]);
        assertPositiveInt(body.Id, "Id");
        const stored = await service.storage.db
          .selectFrom("sites")
          .select(["kind", "name"])
          .where("id", "=", body.Id)
          .executeTakeFirst();
        assert.deepEqual(stored, { kind, name });
      }
      assert.notEqual(onlyJson(whitelabel).Id, onlyJson(geo).Id);

      assert.notEqual(bad.code, 0);
      const error = onlyJson(bad);
      assert.deepEqual(Object.keys(error), ["Error"]);
      assert.match(error.Error.Message, /--kind/);
      const planets = await service.storage.db
        .selectFrom("sites")
        .select("id")
        .where("name", "=", "CLI Nowhere")
        .execute();
      assert.equal(planets.length, 0);
    });

    test("person create: {PersonId}; a duplicate email and a role on the wrong kind of site fail", async () => {
      const whitelabel = await site("whitelabel", "People Site");
      const geo = await site("geo", "People Geo");
      const created = await cli(
        "person",
        "create",
        "--email",
        "wl-admin@example.com",
        "--first",
        "Wendy",
        "--last",
        "Lab",
        "--site",
        String(whitelabel),
        "--role",
        "whitelabel-admin",
        "--json",
      );
      assertSucceeded(created);
      const body = onlyJson(created);
      assert.deepEqual(Object.keys(body), ["PersonId"]);
      assertPositiveInt(body.PersonId, "PersonId");

      const [duplicate, mismatch] = await Promise.all([
        // Emails are compared without case.
        cli("person", "create", "--email", "WL-Admin@Example.com", "--first", "Other", "--last", "One", "--json"),
        cli(
          "person",
          "create",
          "--email",
          "misplaced@example.com",
          "--first",
          "Miss",
          "--last",
          "Placed",
          "--site",
          String(geo),
          "--role",
          "whitelabel-admin",
          "--json",
        ),
      ]);
      assert.equal(duplicate.code, 1);
      assert.equal(onlyJson(duplicate).Error.Field, "Email");
      assert.match(onlyJson(duplicate).Error.Message, /already registered/);

      assert.equal(mismatch.code, 1);
      assert.equal(onlyJson(mismatch).Error.Field, "Site");
      assert.match(onlyJson(mismatch).Error.Message, /whitelabel site/);

      const people = await service.storage.db
        .selectFrom("persons")
        .select(["id", "role", "white_label_site_id"])
        .where("email", "in", ["wl-admin@example.com", "misplaced@example.com"])
        .execute();
      assert.deepEqual(people, [{ id: body.PersonId, role: "whitelabel-admin", white_label_site_id: whitelabel }]);
    });

    test("a key made by the CLI works in the running service at once, and stops working when revoked", async () => {
      const whitelabel = await site("whitelabel", "Key Site");
      const person = await cli(
        "person",
        "create",
        "--email",
        "keyholder@example.com",
        "--first",
        "Kay",
        "--last",
        "Holder",
        "--site",
        String(whitelabel),
        "--role",
        "whitelabel-admin",
        "--json",
      );
      assertSucceeded(person);
      const personId = onlyJson(person).PersonId;
      const expires = new Date(Date.now() + 30 * 86_400_000);
      // Milliseconds are kept: the stored expiry is the exact instant given.
      const created = await cli(
        "key",
        "create",
        "--person",
        String(personId),
        "--expires",
        expires.toISOString(),
        "--comment",
        "trading bot",
        "--json",
      );
      assertSucceeded(created);
      const key = onlyJson(created);
      assert.deepEqual(Object.keys(key).sort(), ["AccessKey", "Id"]);
      assertPositiveInt(key.Id, "Id");
      assert.equal(typeof key.AccessKey, "string");
      assert.ok(key.AccessKey.length >= 16);

      const ok = await getAccessKey(key.AccessKey);
      assert.equal(ok.status, 200, ok.text);
      const record = ok.json.Results[0];
      assert.equal(record.Id, key.Id);
      assert.equal(record.AccessKey, key.AccessKey);
      assert.equal(record.PersonId, personId);
      assert.equal(record.Email, "keyholder@example.com");
      assert.equal(record.Role, "WhiteLabelAdmin");
      assert.equal(record.WhiteLabelSiteId, whitelabel);
      assert.equal(record.Comment, "trading bot");
      assert.equal(new Date(record.DeleteDate).getTime(), expires.getTime());

      const listed = await cli("key", "list", "--person", String(personId), "--json");
      assertSucceeded(listed);
      assert.ok(!listed.stdout.includes(key.AccessKey), "key list printed the key value");
      assert.ok(!listed.stdout.includes(hashKey(key.AccessKey)), "key list printed the key hash");
      const keys = onlyJson(listed).Keys;
      assert.equal(keys.length, 1);
      assert.deepEqual(
        { ...keys[0], CreateDate: undefined },
        {
          Id: key.Id,
          PersonId: personId,
          Email: "keyholder@example.com",
          Role: "whitelabel-admin",
          PlatformId: null,
          Comment: "trading bot",
          CreateDate: undefined,
          ExpiresDate: expires.toISOString(),
          RevokedDate: null,
        },
      );
      assert.ok(Number.isFinite(Date.parse(keys[0].CreateDate)));

      const heard = keyChangeHeard(service);
      const revoked = await cli("key", "revoke", "--id", String(key.Id), "--json");
      assertSucceeded(revoked);
      await heard;
      const revocation = onlyJson(revoked);
      assert.equal(revocation.Id, key.Id);
      assert.ok(Number.isFinite(Date.parse(revocation.RevokedDate)));

      const refused = await getAccessKey(key.AccessKey);
      assert.equal(refused.status, 401);
      assert.equal(refused.json.ResponseStatus.ErrorCode, "401");
      assert.equal(refused.json.ResponseStatus.Errors[0].ErrorCode, "2017");

      // Revoking again succeeds and keeps the first revocation time.
      const [again, listedAfter] = await Promise.all([
        cli("key", "revoke", "--id", String(key.Id), "--json"),
        cli("key", "list", "--person", String(personId), "--json"),
      ]);
      assertSucceeded(again);
      assert.deepEqual(onlyJson(again), revocation);
      assertSucceeded(listedAfter);
      assert.equal(onlyJson(listedAfter).Keys[0].RevokedDate, revocation.RevokedDate);
      assert.equal((await getAccessKey(key.AccessKey)).json.ResponseStatus.Errors[0].ErrorCode, "2017");
    });

    test("a key made with --expires in the past is refused as expired", async () => {
      const { personId } = await createPerson(service.app.runtime, {
        email: "late@example.com",
        firstName: "Late",
        lastName: "Comer",
        role: "person",
      });
      const created = await cli(
        "key",
        "create",
        "--person",
        String(personId),
        "--expires",
        "2020-01-01T00:00:00Z",
        "--json",
      );
      assertSucceeded(created);
      const refused = await getAccessKey(onlyJson(created).AccessKey);
      assert.equal(refused.status, 401);
      assert.equal(refused.json.ResponseStatus.ErrorCode, "401");
      assert.equal(refused.json.ResponseStatus.Errors[0].ErrorCode, "2016");
    });

    test("without --json the output is human text", async () => {
      const { personId } = await createPerson(service.app.runtime, {
        email: "reader@example.com",
        firstName: "Plain",
        lastName: "Reader",
        role: "person",
      });
      const [siteRun, keyRun, failure] = await Promise.all([
        cli("site", "create", "--kind", "geo", "--name", "Readable Geo"),
        cli("key", "create", "--person", String(personId), "--comment", "by hand"),
        cli("person", "create", "--email", "not-an-email", "--first", "No", "--last", "Mail"),
      ]);
      assertSucceeded(siteRun);
      assert.match(siteRun.stdout, /^Created geo site \d+\n$/);
      assert.ok(!isJson(siteRun.stdout));

      assertSucceeded(keyRun);
      assert.ok(!isJson(keyRun.stdout));
      const lines = keyRun.stdout.trimEnd().split("\n");
      assert.match(lines[0] as string, new RegExp(`^Created key \\d+ for person ${personId}\\.`));
      const value = lines.at(-1) as string;
      const ok = await getAccessKey(value);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.json.Results[0].PersonId, personId);
      assert.equal(ok.json.Results[0].Comment, "by hand");

      const listed = await cli("key", "list", "--person", String(personId));
      assertSucceeded(listed);
      assert.ok(!isJson(listed.stdout));
      assert.match(listed.stdout, /person \d+ reader@example\.com \(person\)/);
      assert.match(listed.stdout, /by hand/);
      assert.ok(!listed.stdout.includes(value) && !listed.stdout.includes(hashKey(value)));

      // A refusal without --json goes to stderr as text, and nothing to stdout.
      assert.equal(failure.code, 1);
      assert.equal(failure.stdout, "");
      assert.match(failure.stderr, /Not an email address: not-an-email/);
    });

    test("--expires reads a date-time as the API does, whatever TZ is set: UTC unless an offset is given", async () => {
      const { personId } = await createPerson(service.app.runtime, {
        email: "zones@example.com",
        firstName: "Zo",
        lastName: "Nes",
        role: "person",
      });
      const cases: [string, string][] = [
        ["2030-06-01", "2030-06-01T00:00:00.000Z"],
        ["2030-06-01T12:00:30", "2030-06-01T12:00:30.000Z"],
        ["2030-06-01T12:00:00+09:00", "2030-06-01T03:00:00.000Z"],
        ["2030-06-01T12:00:00.250-0400", "2030-06-01T16:00:00.250Z"],
      ];
      // Processes of their own (the time zone is the process's), each zone's commands at once.
      const inZone = async (zone: string) => {
        const zoned = (...args: string[]) => spawnCli({ ...env, TZ: zone }, [...args, "--json"]);
        const made = new Map<number, string>();
        for (const [run, [given, expected]] of await Promise.all(
          cases.map(
            async (c) => [await zoned("key", "create", "--person", String(personId), "--expires", c[0]), c] as const,
          ),
        )) {
          assertSucceeded(run);
          made.set(onlyJson(run).Id, `${given} -> ${expected}`);
        }
        const [list, impossible] = await Promise.all([
          zoned("key", "list", "--person", String(personId)),
          zoned("key", "create", "--person", String(personId), "--expires", "2030-02-30"),
        ]);
        const read = onlyJson(list)
          .Keys.filter((k: { Id: number }) => made.has(k.Id))
          .map(
            (k: { Id: number; ExpiresDate: string }) =>
              `${(made.get(k.Id) as string).split(" -> ")[0]} -> ${k.ExpiresDate}`,
          );
        assert.deepEqual(read.sort(), [...made.values()].sort(), `TZ=${zone}`);
        assert.equal(impossible.code, 2);
        assert.match(onlyJson(impossible).Error.Message, /--expires is not an ISO 8601 time/);
      };
      await Promise.all(["America/New_York", "Asia/Tokyo"].map(inZone));
    });

    test("usage errors exit 2 with a JSON Error; help prints the usage; an unreachable database is still one JSON Error", async () => {
      // As processes: these are the exit codes operators' scripts see.
      const [notIso, unknownOption, help, unreachable] = await Promise.all([
        spawnCli(env, ["key", "create", "--person", "1", "--expires", "1", "--json"]),
        spawnCli(env, ["key", "create", "--person", "1", "--colour", "red", "--json"]),
        spawnCli(env, ["help", "--json"]),
        spawnCli(childEnv({ DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" }), ["key", "list", "--json"]),
      ]);
      assert.equal(notIso.code, 2);
      assert.match(onlyJson(notIso).Error.Message, /--expires is not an ISO 8601 time/);
      assert.equal(unknownOption.code, 2);
      assert.match(onlyJson(unknownOption).Error.Message, /colour/);
      assertSucceeded(help);
      assert.match(onlyJson(help).Usage, /key create --person PERSON_ID/);
      assert.equal(unreachable.code, 1);
      assert.match(
        onlyJson(unreachable).Error.Message,
        /^DATABASE_URL points at 127.0.0.1:1, where no PostgreSQL server answers/,
      );
    });
  });
}
