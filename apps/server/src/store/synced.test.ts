// GroupSync's rule: every caller is answered by a flush that began after it asked, and the callers that come while
// one flush runs share the next. The flushes here are promises the test settles by hand.
import { describe, expect, test } from "bun:test";
import { GroupSync } from "./synced";

function flushes() {
	const started: PromiseWithResolvers<void>[] = [];
	const group = new GroupSync(() => {
		const flush = Promise.withResolvers<void>();
		started.push(flush);
		return flush.promise;
	});
	return { group, started };
}

async function settled(promise: Promise<unknown>): Promise<boolean> {
	let done = false;
	promise.then(
		() => (done = true),
		() => (done = true),
	);
	await Bun.sleep(0);
	return done;
}

describe("GroupSync", () => {
	test("a caller alone gets a flush of its own", async () => {
		const { group, started } = flushes();
		const one = group.synced();
		expect(started).toHaveLength(1);
		started[0]!.resolve();
		await one;
	});

	test("callers that come while a flush runs wait for the next one, and share it", async () => {
		const { group, started } = flushes();
		const first = group.synced();
		const second = group.synced();
		const third = group.synced();
		expect(started).toHaveLength(1);
		started[0]!.resolve();
		await first;
		// The flush the first caller got may have begun before the others' commits: they are not answered by it.
		expect(await settled(second)).toBe(false);
		expect(started).toHaveLength(2);
		started[1]!.resolve();
		await Promise.all([second, third]);
		expect(started).toHaveLength(2);
	});

	test("a failed flush fails its callers; the next flush still runs for those who came meanwhile", async () => {
		const { group, started } = flushes();
		const first = group.synced();
		const second = group.synced();
		started[0]!.reject(new Error("disk gone"));
		await expect(first).rejects.toThrow("disk gone");
		await Bun.sleep(0);
		expect(started).toHaveLength(2);
		started[1]!.resolve();
		await second;
		// Idle again: the next caller starts a flush at once.
		const third = group.synced();
		expect(started).toHaveLength(3);
		started[2]!.resolve();
		await third;
	});
});
