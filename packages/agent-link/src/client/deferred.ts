/** A promise with its settle functions outside it (Promise.withResolvers is not in Node 20). */

export interface Deferred<T> {
	promise: Promise<T>;
	resolve(value: T): void;
	reject(error: unknown): void;
	readonly settled: boolean;
}

export function deferred<T>(): Deferred<T> {
	let resolve!: (value: T) => void;
	let reject!: (error: unknown) => void;
	let settled = false;
	const promise = new Promise<T>((res, rej) => {
		resolve = res;
		reject = rej;
	});
	return {
		promise,
		resolve(value) {
			if (settled) return;
			settled = true;
			resolve(value);
		},
		reject(error) {
			if (settled) return;
			settled = true;
			reject(error);
		},
		get settled() {
			return settled;
		},
	};
}

/** The text of whatever a handler threw, for start-failed, turn-end and control-result messages. */
export function messageOf(error: unknown): string {
	if (error instanceof Error && error.message) return error.message;
	if (typeof error === "string" && error) return error;
	return "The backend failed without a message.";
}
