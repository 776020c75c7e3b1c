import { expect, test } from "bun:test";
import { ID_PATTERN } from "../ids";
import { describeStores } from "../store/testing";
import { testDeps } from "../testing/domain";
import { DocumentError } from "./blocks";
import { DocumentService, MAX_SOURCE_BYTES } from "./service";

async function rejected(promise: Promise<unknown>): Promise<DocumentError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof DocumentError) return error;
		throw error;
	}
	throw new Error("expected a DocumentError");
}

describeStores("documents service", (t) => {
	const setup = () => {
		const deps = testDeps(t.store);
		return { deps, docs: new DocumentService(deps) };
	};

	test("create makes the repository row once, a short url-safe id, revision 0 and blocks", async () => {
		const { deps, docs } = setup();
		const doc = await docs.create({
			repository: "octo-org/score",
			title: "  Rollout plan ",
			source: "# Rollout\n\nStep one.\n",
			createdBy: "alice",
		});
		expect(doc.id).toMatch(ID_PATTERN);
		expect(doc).toMatchObject({
			repository: "octo-org/score",
			title: "Rollout plan",
			revision: 0,
			archived: false,
			deleted: false,
			createdBy: "alice",
			createdAt: deps.clock.now(),
		});
		expect(doc.blocks.map((b) => [b.kind, b.startLine])).toEqual([
			["heading", 1],
			["paragraph", 3],
		]);
		// The repository keeps its first spelling; a second document in it adds no row.
		const second = await docs.create({ repository: "Octo-Org/Score", title: "Two", createdBy: "bob" });
		expect(second.repository).toBe("octo-org/score");
		const repos = await t.store.many(t.store.sql`SELECT full_name, owner, name FROM repositories`);
		expect(repos).toEqual([{ full_name: "octo-org/score", owner: "octo-org", name: "score" }]);
		expect(deps.eventsOf("document.updated").map((e) => e.change)).toEqual(["created", "created"]);
	});

	test("create refuses a bad repository, title or an oversized source", async () => {
		const { docs } = setup();
		const base = { repository: "a/b", title: "T", createdBy: "alice" };
		for (const repository of ["nope", "a/b/c", "-a/b", "a/..", "a b/c", `${"x".repeat(40)}/c`]) {
			expect((await rejected(docs.create({ ...base, repository }))).code).toBe("invalid-repository");
		}
		for (const title of ["", "   ", "two\nlines", "x".repeat(201)]) {
			expect((await rejected(docs.create({ ...base, title }))).code).toBe("invalid-title");
		}
		const big = await rejected(docs.create({ ...base, source: "é".repeat(MAX_SOURCE_BYTES / 2 + 1) }));
		expect([big.code, big.status]).toEqual(["source-too-large", 413]);
		expect(await docs.count()).toBe(0);
	});

	test("updateSource needs the expected revision; a stale one is a 409 revision-conflict naming the current one", async () => {
		const { deps, docs } = setup();
		const doc = await docs.create({ repository: "a/b", title: "T", source: "one\n", createdBy: "alice" });
		await deps.clock.advance(1000);
		const v1 = await docs.updateSource(doc.id, { source: "two\n", expectedRevision: 0 }, { by: "bob" });
		expect([v1.revision, v1.source, v1.updatedAt]).toEqual([1, "two\n", deps.clock.now()]);
		const error = await rejected(docs.updateSource(doc.id, { source: "three\n", expectedRevision: 0 }));
		expect([error.code, error.status, error.details]).toEqual(["revision-conflict", 409, { revision: 1 }]);
		expect((await docs.get(doc.id)).source).toBe("two\n");
		const event = deps.eventsOf("document.updated").at(-1)!;
		expect(event).toMatchObject({ change: "source", source: "two\n", by: "bob", document: { revision: 1 } });
	});

	test("two writers at the same revision: exactly one wins", async () => {
		const { docs } = setup();
		const doc = await docs.create({ repository: "a/b", title: "T", source: "x\n", createdBy: "alice" });
		const results = await Promise.allSettled(
			["a", "b", "c", "d"].map((s) => docs.updateSource(doc.id, { source: `${s}\n`, expectedRevision: 0 })),
		);
		expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
		for (const r of results.filter((r) => r.status === "rejected")) {
			expect((r as PromiseRejectedResult).reason.code).toBe("revision-conflict");
		}
		expect((await docs.get(doc.id)).revision).toBe(1);
	});

	test("block edits apply as the next revision, and a stale digest changes nothing", async () => {
		const { docs } = setup();
		const doc = await docs.create({
			repository: "a/b",
			title: "T",
			source: "# Plan\n\nOld step.\n",
			createdBy: "alice",
		});
		const para = doc.blocks[1]!;
		const result = await docs.applyBlockEdits(doc.id, {
			edits: [
				{ op: "replace", block: { index: 1, digest: para.digest }, markdown: "New step." },
				{ op: "insert", at: "end", markdown: "## Later" },
			],
		});
		expect(result.document.source).toBe("# Plan\n\nNew step.\n\n## Later\n");
		expect(result.document.revision).toBe(1);
		expect(result.changed.map((b) => b.index)).toEqual([1, 2]);
		expect(result.kept).toEqual([{ from: 0, to: 0, count: 1 }]);
		const stale = await rejected(
			docs.applyBlockEdits(doc.id, { edits: [{ op: "delete", block: { index: 1, digest: para.digest } }] }),
		);
		expect(stale.code).toBe("block-changed");
		const invalid = await rejected(docs.applyBlockEdits(doc.id, { edits: [] }));
		expect(invalid.code).toBe("invalid-edit");
		const conflict = await rejected(
			docs.applyBlockEdits(
				doc.id,
				{ edits: [{ op: "insert", at: "start", markdown: "> note" }] },
				{ expectedRevision: 0 },
			),
		);
		expect(conflict.code).toBe("revision-conflict");
		expect((await docs.get(doc.id)).revision).toBe(1);
	});

	test("block edits racing a source update are checked again against the new source", async () => {
		const { docs } = setup();
		const doc = await docs.create({ repository: "a/b", title: "T", source: "A\n\nB\n", createdBy: "alice" });
		const b = doc.blocks[1]!;
		// The update and the edit run together; whichever lands second still sees block B unchanged.
		const [edit, update] = await Promise.all([
			docs.applyBlockEdits(doc.id, {
				edits: [{ op: "replace", block: { index: 1, digest: b.digest }, markdown: "B2" }],
			}),
			docs.updateSource(doc.id, { source: "A2\n\nB\n", expectedRevision: 0 }).catch((e) => e),
		]);
		const final = await docs.get(doc.id);
		if (update instanceof DocumentError) {
			expect(final.source).toBe("A\n\nB2\n");
		} else {
			expect(final.source).toBe("A2\n\nB2\n");
			expect(final.revision).toBe(2);
		}
		expect(edit.document.source).toContain("B2");
	});

	test("rename, archive and unarchive; an archived document cannot change", async () => {
		const { deps, docs } = setup();
		const doc = await docs.create({ repository: "a/b", title: "T", source: "x\n", createdBy: "alice" });
		expect((await docs.rename(doc.id, "Renamed", { by: "bob" })).title).toBe("Renamed");
		expect((await docs.archive(doc.id)).archived).toBe(true);
		expect((await docs.archive(doc.id)).archived).toBe(true); // again: nothing changes
		for (const attempt of [
			() => docs.updateSource(doc.id, { source: "y\n", expectedRevision: 0 }),
			() => docs.applyBlockEdits(doc.id, { edits: [{ op: "insert", at: "end", markdown: "z" }] }),
			() => docs.rename(doc.id, "Nope"),
		]) {
			const error = await rejected(attempt());
			expect([error.code, error.status]).toEqual(["document-archived", 409]);
		}
		const listed = await docs.listByRepository("a/b");
		expect(listed.map((d) => [d.title, d.archived])).toEqual([["Renamed", true]]);
		expect((await docs.unarchive(doc.id)).archived).toBe(false);
		expect((await docs.updateSource(doc.id, { source: "y\n", expectedRevision: 0 })).revision).toBe(1);
		expect(deps.eventsOf("document.updated").map((e) => e.change)).toEqual([
			"created",
			"title",
			"archived",
			"unarchived",
			"source",
		]);
	});

	test("soft delete hides the document everywhere and is idempotent", async () => {
		const { deps, docs } = setup();
		const keep = await docs.create({ repository: "a/b", title: "Keep", createdBy: "alice" });
		await deps.clock.advance(10);
		const gone = await docs.create({ repository: "a/b", title: "Gone", createdBy: "alice" });
		expect((await docs.listByRepository("A/B")).map((d) => d.title)).toEqual(["Gone", "Keep"]);
		await docs.softDelete(gone.id, { by: "alice" });
		await docs.softDelete(gone.id);
		expect((await docs.listByRepository("a/b")).map((d) => d.id)).toEqual([keep.id]);
		const error = await rejected(docs.get(gone.id));
		expect([error.code, error.status]).toEqual(["document-not-found", 404]);
		expect(await docs.find(gone.id)).toBeUndefined();
		expect((await docs.get(gone.id, { includeDeleted: true })).deleted).toBe(true);
		expect((await rejected(docs.updateSource(gone.id, { source: "", expectedRevision: 0 }))).code).toBe(
			"document-not-found",
		);
		expect((await rejected(docs.softDelete("nosuchdocumen"))).code).toBe("document-not-found");
		expect(deps.eventsOf("document.updated").filter((e) => e.change === "deleted")).toHaveLength(1);
		expect(await docs.count()).toBe(2);
	});
});
