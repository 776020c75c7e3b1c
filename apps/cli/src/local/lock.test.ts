import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killFixtures, startFixture } from "../testing/child";
import { makeTempDir } from "../testing/context";
import { asyncRefusal as refusal } from "../testing/refusal";
import { checkoutLockHolder, type HeldLock, lockCheckout, lockDaemon } from "./lock";

const dirs: string[] = [];
const held: HeldLock[] = [];
afterEach(async () => {
	for (const lock of held.splice(0)) await lock.release();
	await killFixtures();
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup() {
	const dir = makeTempDir();
	dirs.push(dir);
	const locksDir = join(dir, "state", "locks");
	const checkout = join(dir, "src", "my score");
	mkdirSync(checkout, { recursive: true });
	return { dir, locksDir, checkout };
}

async function take(locksDir: string, checkout: string): Promise<HeldLock> {
	const lock = await lockCheckout({ locksDir }, checkout);
	held.push(lock);
	return lock;
}

describe("checkout locks", () => {
	test("a second lock in the same process is refused, naming this pid", async () => {
		const { locksDir, checkout } = setup();
		const lock = await take(locksDir, checkout);
		expect(lock.owner.pid).toBe(process.pid);
		const error = await refusal(lockCheckout({ locksDir }, checkout));
		expect(error.code).toBe("checkout-locked");
		expect(error.exitCode).toBe(14);
		expect(error.message).toBe(
			`The checkout ${checkout} is in use by another chopin process (pid ${process.pid}).`,
		);
		expect(error.hint).toContain(`pid ${process.pid}`);
	});

	test("one checkout, one lock, however its path is spelled: through a symlink it is the same lock", async () => {
		const { dir, locksDir, checkout } = setup();
		await take(locksDir, checkout);
		const link = join(dir, "link to score");
		symlinkSync(checkout, link);
		const error = await refusal(lockCheckout({ locksDir }, link));
		expect(error.code).toBe("checkout-locked");
		expect(checkoutLockHolder(locksDir, `${join(dir, "src")}/./my score`)?.pid).toBe(process.pid);
	});

	test("released, it can be taken again; releasing twice is harmless", async () => {
		const { locksDir, checkout } = setup();
		const lock = await lockCheckout({ locksDir }, checkout);
		await lock.release();
		await lock.release();
		const again = await take(locksDir, checkout);
		expect(again.owner.pid).toBe(process.pid);
	});

	test("different checkouts lock independently", async () => {
		const { locksDir, checkout, dir } = setup();
		const other = join(dir, "src", "other");
		await take(locksDir, checkout);
		await take(locksDir, other);
		expect(checkoutLockHolder(locksDir, checkout)?.pid).toBe(process.pid);
		expect(checkoutLockHolder(locksDir, join(dir, "nowhere"))).toBeUndefined();
	});

	test("a lock held by another live process is refused, naming that process's pid", async () => {
		const { locksDir, checkout } = setup();
		const holder = await startFixture("hold-lock", [locksDir, checkout]);
		expect(holder.ready).toBe(`locked ${holder.pid}`);
		const error = await refusal(lockCheckout({ locksDir }, checkout));
		expect(error.code).toBe("checkout-locked");
		expect(error.message).toContain(`(pid ${holder.pid})`);
		expect(checkoutLockHolder(locksDir, checkout)?.pid).toBe(holder.pid);
	});

	test("a lock left by a SIGKILLed process is replaced", async () => {
		const { locksDir, checkout } = setup();
		const holder = await startFixture("hold-lock", [locksDir, checkout]);
		await holder.kill();
		// The killed process could not clean up: its lock directory and owner record are still there.
		expect(readdirSync(locksDir).some((name) => name.endsWith(".lock"))).toBe(true);
		expect(checkoutLockHolder(locksDir, checkout)).toBeUndefined();
		const lock = await take(locksDir, checkout);
		expect(lock.owner.pid).toBe(process.pid);
		expect(checkoutLockHolder(locksDir, checkout)?.pid).toBe(process.pid);
	});

	test("a process that exits without releasing gives the lock back on exit", async () => {
		const { locksDir, checkout } = setup();
		const holder = await startFixture("hold-lock", [locksDir, checkout]);
		holder.write("exit\n");
		await holder.process.exited;
		expect(holder.process.exitCode).toBe(0);
		expect(readdirSync(locksDir).filter((name) => name.endsWith(".lock"))).toEqual([]);
		await take(locksDir, checkout);
	});

	test("a process that releases leaves nothing behind", async () => {
		const { locksDir, checkout } = setup();
		const holder = await startFixture("hold-lock", [locksDir, checkout]);
		holder.write("release\n");
		await holder.process.exited;
		expect(readdirSync(locksDir)).toEqual([]);
	});

	test("a lock directory with no owner record (a crash mid-acquire) is stale", async () => {
		const { locksDir, checkout } = setup();
		const first = await lockCheckout({ locksDir }, checkout);
		// Simulate the crash: the lock directory stays, the owner record is gone.
		const owner = readdirSync(locksDir).find((name) => name.endsWith(".owner.json"))!;
		rmSync(join(locksDir, owner));
		const second = await take(locksDir, checkout);
		expect(second.owner.pid).toBe(process.pid);
		// The first holder lost its lock: releasing it must not free the new holder's.
		await first.release();
		expect(checkoutLockHolder(locksDir, checkout)).toEqual(second.owner);
		expect(await refusal(lockCheckout({ locksDir }, checkout))).toMatchObject({ code: "checkout-locked" });
	});

	test("a damaged owner record names no live owner", async () => {
		const { locksDir, checkout } = setup();
		const holder = await startFixture("hold-lock", [locksDir, checkout]);
		await holder.kill();
		const owner = readdirSync(locksDir).find((name) => name.endsWith(".owner.json"))!;
		writeFileSync(join(locksDir, owner), "{garbage");
		await take(locksDir, checkout);
	});

	test("processes racing for a dead owner's lock: exactly one wins, the others are refused", async () => {
		const { locksDir, checkout } = setup();
		const dead = await startFixture("hold-lock", [locksDir, checkout]);
		await dead.kill();
		const results = await Promise.allSettled(
			[1, 2, 3, 4].map(() => startFixture("hold-lock", [locksDir, checkout])),
		);
		const winners = results.filter((r) => r.status === "fulfilled");
		const losers = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
		expect(winners).toHaveLength(1);
		for (const loser of losers) expect(String(loser.reason)).toContain("is in use by another chopin process");
	});
});

describe("the daemon lock", () => {
	test("one daemon per state dir, naming the running one", async () => {
		const { locksDir, dir } = setup();
		const holder = await startFixture("hold-lock", [locksDir, dir, "daemon"]);
		const error = await refusal(lockDaemon({ locksDir }, dir));
		expect(error.code).toBe("daemon-already-running");
		expect(error.message).toContain(`(pid ${holder.pid})`);
		await holder.kill();
		const lock = await lockDaemon({ locksDir }, dir);
		held.push(lock);
		expect(existsSync(locksDir)).toBe(true);
	});
});
