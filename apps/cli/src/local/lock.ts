// One lock per checkout (by its real path, in the per-user dir every state dir shares) and one per daemon (in
// <state>/locks/), replaced when its recorded owner process is gone.
import { createHash, randomBytes } from "node:crypto";
import { realpathSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import lockfile from "proper-lockfile";
import { z } from "zod";
import { CliError } from "../program/errors";
import { readJsonFile, removeFile, writeJsonAtomic } from "./files";
import { ensurePrivateDir } from "./paths";
import { identify, isAlive } from "./process-liveness";

/**
 * proper-lockfile judges staleness by the lock's mtime, refreshed on a timer. A laptop that
 * sleeps, or a busy event loop, would let another process steal a live daemon's lock, so that
 * rule is pushed out to ~25 days (the largest timer Node allows, doubled) and staleness is
 * decided by the recorded owner pid instead.
 */
const NEVER_STALE_MS = 2 ** 31 - 1;

const ownerSchema = z.strictObject({
	pid: z.number().int().positive(),
	startTime: z.string().optional(),
	resource: z.string(),
	acquiredAt: z.string(),
	/** Tells two holdings by the same process apart. */
	nonce: z.string(),
});

export type LockOwner = z.infer<typeof ownerSchema>;

export interface HeldLock {
	readonly resource: string;
	readonly owner: LockOwner;
	/** Gives the lock back; releasing twice is harmless. */
	release(): Promise<void>;
}

export interface LockOptions {
	locksDir: string;
	/** Told when the lock is lost while held (its directory removed by hand, say). */
	onCompromised?: (error: Error) => void;
	/** For the recorded acquiredAt. */
	now?: () => number;
}

/**
 * Locks a checkout by its root's real path, so a symlinked or differently spelled path is the same checkout;
 * `locksDir` is CliPaths.checkoutLocksDir, shared by every state dir of the user. A live holder is refused with
 * checkout-locked naming its pid.
 */
export function lockCheckout(options: LockOptions, checkoutRoot: string): Promise<HeldLock> {
	return acquire(options, checkoutKey(checkoutRoot), checkoutRoot, (owner) => {
		return new CliError(
			"checkout-locked",
			`The checkout ${checkoutRoot} is in use by another chopin process (pid ${owner.pid}).`,
			`One chopin daemon serves every checkout: add this one to it with \`chopin connect\`, or stop pid ${owner.pid} first.`,
		);
	});
}

/** The daemon's own lock: one `chopin run` per state dir. */
export function lockDaemon(options: LockOptions, stateDir: string): Promise<HeldLock> {
	return acquire(options, "daemon", stateDir, (owner) => {
		return new CliError(
			"daemon-already-running",
			`A chopin daemon is already running for ${stateDir} (pid ${owner.pid}).`,
			"Use `chopin status` to see it, or `chopin stop` to stop it.",
		);
	});
}

/** Who holds a checkout's lock right now, if anyone alive does. */
export function checkoutLockHolder(locksDir: string, checkoutRoot: string): LockOwner | undefined {
	const owner = readOwner(join(locksDir, checkoutKey(checkoutRoot)));
	return owner && isAlive(owner) ? owner : undefined;
}

async function acquire(
	options: LockOptions,
	key: string,
	resource: string,
	refused: (owner: LockOwner) => CliError,
): Promise<HeldLock> {
	ensurePrivateDir(options.locksDir);
	const target = join(options.locksDir, key);
	const lockOptions = {
		lockfilePath: `${target}.lock`,
		realpath: false,
		stale: NEVER_STALE_MS,
		onCompromised: options.onCompromised ?? (() => {}),
	};
	const owner: LockOwner = {
		...identify(process.pid),
		resource,
		acquiredAt: new Date((options.now ?? Date.now)()).toISOString(),
		nonce: randomBytes(8).toString("hex"),
	};
	let unlock: () => Promise<void> = async () => {};
	// Deciding "its owner is gone, replace it" and replacing it must be one step, or two
	// processes could both judge the same dead owner and both take the lock: a short guard
	// lock serialises acquiring and releasing.
	await withGuard(target, async () => {
		try {
			unlock = await lockfile.lock(target, lockOptions);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "ELOCKED") throw error;
			const holder = readOwner(target);
			// A lock with no owner record was left by a process that died between the two steps.
			if (holder && isAlive(holder)) throw refused(holder);
			rmSync(`${target}.lock`, { recursive: true, force: true });
			unlock = await lockfile.lock(target, lockOptions);
		}
		writeJsonAtomic(ownerFile(target), owner, { mode: 0o600 });
	});
	let released = false;
	return {
		resource,
		owner,
		release: async () => {
			if (released) return;
			released = true;
			await withGuard(target, async () => {
				// A lock this process lost (judged stale and taken over) now belongs to someone
				// else: giving it back would free their lock, so only our own record is removed.
				const current = readOwner(target);
				if (!current || !sameOwner(current, owner)) return;
				removeFile(ownerFile(target));
				try {
					await unlock();
				} catch (error) {
					// Already released (compromised, or removed by hand): nothing left to give back.
					if (!["ERELEASED", "ENOTACQUIRED"].includes((error as NodeJS.ErrnoException).code ?? ""))
						throw error;
				}
			});
		},
	};
}

async function withGuard(target: string, fn: () => Promise<void>): Promise<void> {
	// The guard is held for milliseconds; a process killed while holding it leaves a guard that
	// proper-lockfile's own mtime rule clears after 10 s, which the retries outlast.
	// proper-lockfile keeps its held locks by file path, so the guard must lock a different one.
	const release = await lockfile.lock(`${target}.guard`, {
		lockfilePath: `${target}.guard.lock`,
		realpath: false,
		stale: 10_000,
		retries: { retries: 60, factor: 1.3, minTimeout: 10, maxTimeout: 500 },
		onCompromised: () => {},
	});
	try {
		await fn();
	} finally {
		await release().catch(() => {});
	}
}

function readOwner(target: string): LockOwner | undefined {
	try {
		return readJsonFile(ownerFile(target), ownerSchema, { code: "unexpected", what: "lock owner record" });
	} catch {
		return undefined; // a damaged record names no live owner
	}
}

function sameOwner(a: LockOwner, b: LockOwner): boolean {
	return a.pid === b.pid && a.nonce === b.nonce;
}

function ownerFile(target: string): string {
	return `${target}.owner.json`;
}

/** `checkout-<name>-<sha256 of the real path>`: readable, and one name however the checkout's path is spelled. */
function checkoutKey(checkoutRoot: string): string {
	let real = checkoutRoot;
	try {
		real = realpathSync.native(checkoutRoot);
	} catch {
		// A checkout that is gone has no real path; its lock (only ever released) keeps the name it was given.
	}
	const name = basename(real)
		.replace(/[^A-Za-z0-9_.-]+/g, "_")
		.slice(0, 40);
	const hash = createHash("sha256").update(real).digest("hex").slice(0, 32);
	return `checkout-${name || "root"}-${hash}`;
}
