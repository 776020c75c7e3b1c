// A credential's first check is one store round trip: a Planner credential with its machine and the machine's
// stored authorization in one query (the authorization used to be a second read), a machine credential with
// its authorization the same way; and that saving never restores an authorization a revocation removed
// meanwhile. On both stores.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { isIdentityError } from "../auth/errors";
import type { Store } from "../store/store";
import { runnableKinds } from "../store/testing";
import { issuePlannerToken, LOCAL_ENV, pairedLocally } from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { MachineAuthorizations } from "./authorizations";
import { ContactWrites } from "./contact-writes";
import { CredentialCache } from "./credential-cache";
import { MachineAuth } from "./machine-auth";
import { PlannerAccess } from "./planner-access";
import { PlannerCredentials } from "./planner-credentials";

let clock: ManualClock;
const servers: TestServer[] = [];

beforeEach(() => {
	clock = new ManualClock();
});

afterEach(async () => {
	for (const server of servers.splice(0)) await server.close();
});

/** The server's real store, counting the reads made through it (one() and many()). */
function counting(store: Store): Store & { reads: number } {
	const counter = { reads: 0 };
	return new Proxy(store, {
		get(target, key, receiver) {
			if (key === "reads") return counter.reads;
			const value = Reflect.get(target, key, receiver);
			if ((key === "one" || key === "many") && typeof value === "function") {
				return (...args: unknown[]) => {
					counter.reads++;
					return value.apply(target, args);
				};
			}
			return value;
		},
	}) as Store & { reads: number };
}

/** A paired machine with a Planner credential on a real server, and a fresh PlannerAccess over its store (as a new process would be). */
async function setup(kind: "sqlite" | "postgres") {
	const server = await startTestServer({
		clock,
		store: kind,
		env: { ...LOCAL_ENV, LOCAL_PLANNER_CREDENTIALS: "on" },
	});
	servers.push(server);
	const { target, jar, ...paired } = await pairedLocally(server);
	const document = await server.context.domain.documents.create({
		repository: "octo/score",
		title: "Plan",
		createdBy: "ana",
	});
	const token = await issuePlannerToken(target, paired.credential, document.id);
	const { context } = server;
	const store = counting(context.store);
	const authorizations = new MachineAuthorizations({
		store,
		identity: context.identity,
		clock,
		log: context.log,
		onEnded: () => {},
	});
	const credentials = new PlannerCredentials({ store, clock, cache: new CredentialCache() });
	const access = new PlannerAccess({
		clock,
		identity: context.identity,
		documents: context.domain.documents,
		authorizations,
		credentials,
		settings: () => ({ ...context.config, localPlannerCredentials: true }),
	});
	const auth = new MachineAuth({
		store,
		clock,
		cache: new CredentialCache(),
		authorizations,
		contacts: new ContactWrites({ store, clock, log: context.log }),
		versionPolicy: () => ({
			minVersion: undefined,
			serverVersion: "0.1.0",
			origin: context.config.publicUrl,
		}),
	});
	return {
		server,
		store,
		authorizations,
		credentials,
		access,
		auth,
		credential: paired.credential,
		token,
		machineId: paired.machineId,
		documentId: document.id,
	};
}

for (const kind of runnableKinds()) {
	describe(`a credential's first check [${kind}]`, () => {
		test("is one store read, the machine's authorization included; later checks read nothing", async () => {
			const s = await setup(kind);
			const first = await s.access.verify(s.token);
			expect(first).toMatchObject({ machineId: s.machineId, login: "ana", documentId: s.documentId });
			expect(s.store.reads).toBe(1);
			expect(await s.access.verify(s.token)).toMatchObject({ machineId: s.machineId });
			expect(s.store.reads).toBe(1);
		});

		test("a machine credential's first check reads its authorization too: the call's next step reads nothing", async () => {
			const s = await setup(kind);
			expect(await s.auth.check(`Bearer ${s.credential}`)).toMatchObject({ ok: true, id: s.machineId });
			expect(s.store.reads).toBe(1);
			expect((await s.authorizations.get(s.machineId)).login).toBe("ana");
			expect(s.store.reads).toBe(1);
		});

		test("a machine whose authorization row is gone is refused, as when it was read on its own", async () => {
			const s = await setup(kind);
			await s.server.context.store.sql`DELETE FROM machine_authorizations WHERE machine_id = ${s.machineId}`;
			expect(await s.access.verify(s.token)).toBeNull();
		});

		test("a row read before a removal is not restored from: the store is asked again", async () => {
			const s = await setup(kind);
			const changesBefore = s.authorizations.changes();
			const read = await s.credentials.read(s.token);
			expect(read?.authorization?.stored).toMatchObject({ kind: "local", login: "ana" });
			// The machine is revoked between the check's query and its restore.
			await s.authorizations.remove(s.server.context.store, s.machineId);
			const restored = s.authorizations.get(s.machineId, {
				stored: read!.authorization!.stored,
				changesBefore,
			});
			const error = await restored.catch((e: unknown) => e);
			expect(isIdentityError(error, "authorization-expired")).toBe(true);
		});
	});
}
