// How `chopin workspaces prune --older-than` reads and writes a duration, and its default: apart from prune.ts so
// the command's parse half loads no git code.

/** `chopin workspaces prune`'s default cutoff: a week after the run ended. */
export const DEFAULT_PRUNE_AGE_MS = 7 * 24 * 60 * 60 * 1000;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30m`, `12h`, `7d`, `2w` (or `0`) in milliseconds; undefined for anything else. */
export function parseDuration(text: string): number | undefined {
	if (text.trim() === "0") return 0;
	const match = /^(\d{1,6})([smhdw])$/.exec(text.trim());
	return match ? Number(match[1]) * UNITS[match[2]!]! : undefined;
}

/** The largest whole unit: `7d`, `36h`, `90m`. */
export function formatDuration(ms: number): string {
	for (const unit of ["d", "h", "m"]) {
		const size = UNITS[unit]!;
		if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
	}
	return `${Math.round(ms / 1000)}s`;
}
