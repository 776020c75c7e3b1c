// The process's memory after a full garbage collection, for "memory back to baseline after N cases" checks.
import { heapStats } from "bun:jsc";

/** Heap bytes in use after Bun.gc(true), taken twice so finalizers freed by the first pass are collected too. */
export async function settledHeap(): Promise<number> {
	Bun.gc(true);
	await Bun.sleep(10);
	Bun.gc(true);
	return heapStats().heapSize;
}

export const heapMiB = (bytes: number) => bytes / 2 ** 20;
