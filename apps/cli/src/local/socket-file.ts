// Whether the daemon's socket file is there, asked without a connection, so that a plain status on a machine with no
// daemon says so at once (ipc-transport.ts, status-by-daemon.ts).

/**
 * Whether nothing is at `path`. Opening it says so in ~10 µs once status has read a file, where Bun.connect takes
 * ~0.3 ms to; a socket, or anything else there, is left to Bun.connect (a socket cannot be opened, ENXIO, and Bun.mmap
 * refuses a FIFO without waiting for a writer).
 */
export function nothingAt(path: string): boolean {
	try {
		Bun.mmap(path, { shared: false });
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "ENOENT";
	}
	return false;
}
