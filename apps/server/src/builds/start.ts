// A person starts a build or an investigation: the same start again (its key, or the same document, kind, base
// and brief while such a run is not final) is the same run; otherwise the run is offered to their chosen machine.
import type { RunKind } from "@chopin/agent-link/machine";
import { sha256Hex } from "../auth/tokens";
import { randomId } from "../ids";
import { isUniqueViolation } from "../store/errors";
import { type Build, findByKey, findByLiveKey, getBuild, insertBuild } from "./build-rows";
import type { BuildsCore } from "./core";
import { documentArchived, keyReused, machineOffline, noMachine, runnerUnavailable } from "./errors";

export interface StartInput {
	documentId: string;
	kind: RunKind;
	brief: string;
	/** The full commit the run starts from. */
	base: string;
	/** The start's own key: the same key is the same start. */
	key?: string;
	/** Who starts it; their own chosen machine runs it. */
	by: string;
}

/** A run id: run_ then 16 base32 letters (80 random bits). */
export function newBuildId(): string {
	return `run_${randomId(16)}`;
}

/** What makes two starts the same while the first is not final. */
export function liveKeyOf(input: Pick<StartInput, "documentId" | "kind" | "base" | "brief">): string {
	return sha256Hex(JSON.stringify([input.documentId, input.kind, input.base, input.brief]));
}

const sameStart = (build: Build, input: StartInput) =>
	build.kind === input.kind && build.base === input.base && build.brief === input.brief;

/** An earlier start this one repeats, if any; a key reused for another start is refused. */
async function earlier(core: BuildsCore, input: StartInput, liveKey: string): Promise<Build | undefined> {
	const { store } = core.deps;
	if (input.key !== undefined) {
		const byKey = await findByKey(store, input.documentId, input.key);
		if (byKey) {
			if (!sameStart(byKey, input)) throw keyReused();
			return byKey;
		}
	}
	return findByLiveKey(store, liveKey);
}

export async function startBuild(
	core: BuildsCore,
	input: StartInput,
): Promise<{ build: Build; created: boolean }> {
	const { store, documents, machines } = core.deps;
	const document = await documents.get(input.documentId);
	if (document.archived) throw documentArchived();
	const liveKey = liveKeyOf(input);
	const repeated = await earlier(core, input, liveKey);
	if (repeated) return { build: repeated, created: false };

	const machine = await machines.choose(input.by, document.id, document.repository);
	if (!machine) throw noMachine(input.kind);
	if (!machine.online) throw machineOffline(machine.label, input.kind);
	if (machine.runner?.available !== true) throw runnerUnavailable(machine.label, machine.runner?.reason);

	const id = newBuildId();
	const now = core.now();
	try {
		await insertBuild(store, {
			id,
			documentId: document.id,
			kind: input.kind,
			brief: input.brief,
			base: input.base,
			requestedBy: input.by,
			machineId: machine.id,
			idempotencyKey: input.key ?? null,
			liveKey,
			now,
		});
	} catch (error) {
		// Another start of the same run won the race: answer with that one.
		if (!isUniqueViolation(error)) throw error;
		const winner = await earlier(core, input, liveKey);
		if (winner) return { build: winner, created: false };
		throw error;
	}
	const build = (await getBuild(store, id))!;
	core.deps.log.info("build offered", {
		build: id,
		document: document.id,
		machine: machine.id,
		kind: input.kind,
	});
	// Offered at once; again after each reconnect while it is unclaimed (machine-side.ts).
	const offer = await offerOf(core, build);
	if (offer) machines.send(machine.id, offer);
	await core.publish(id);
	return { build, created: true };
}

/** The offer of a run still waiting for its claim; undefined once its document is gone. */
export async function offerOf(core: BuildsCore, build: Build) {
	const document = await core.deps.documents.find(build.documentId);
	if (!document) return undefined;
	return {
		type: "run-offer" as const,
		run: {
			id: build.id,
			kind: build.kind,
			document: {
				id: document.id,
				url: `${core.deps.settings().publicUrl}/d/${document.id}`,
				title: document.title,
				repository: document.repository,
			},
			base: build.base,
			brief: build.brief,
			requestedBy: build.requestedBy,
			createdAt: build.createdAt,
		},
	};
}
