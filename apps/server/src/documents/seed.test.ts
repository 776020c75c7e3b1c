import { expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { testDeps } from "../testing/domain";
import { DEMO_REPOSITORY, DEMO_TITLE, seedDemo } from "./seed";
import { DocumentService } from "./service";

describeStores("demo seed", (t) => {
	test("DEMO on and no documents: the welcome document in demo/score, once", async () => {
		const docs = new DocumentService(testDeps(t.store));
		const seeded = await seedDemo(docs, { demo: true });
		expect(seeded).toMatchObject({
			repository: DEMO_REPOSITORY,
			title: DEMO_TITLE,
			createdBy: "demo",
			revision: 0,
		});
		expect(seeded!.blocks[0]).toMatchObject({ kind: "heading", startLine: 1 });
		expect(await seedDemo(docs, { demo: true })).toBeNull();
		expect((await docs.listByRepository(DEMO_REPOSITORY)).map((d) => d.title)).toEqual([DEMO_TITLE]);
		// A deleted welcome page is not made again.
		await docs.softDelete(seeded!.id);
		expect(await seedDemo(docs, { demo: true })).toBeNull();
	});

	test("DEMO off, or a store that has documents, seeds nothing", async () => {
		const docs = new DocumentService(testDeps(t.store));
		expect(await seedDemo(docs, { demo: false })).toBeNull();
		await docs.create({ repository: "a/b", title: "Mine", createdBy: "alice" });
		expect(await seedDemo(docs, { demo: true })).toBeNull();
		expect(await docs.count()).toBe(1);
	});
});
