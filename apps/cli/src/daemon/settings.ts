// The daemon's timing knobs from the environment: defaults for people, shorter values for tests and the bench.
import { RECONNECT_SCHEDULE_MS } from "@chopin/agent-link/backoff";
import { z } from "zod";
import { CliError } from "../program/errors";
import { HANDSHAKE_TIMEOUT_MS, PROBE_MS, SILENCE_MS } from "./control-link";

export interface DaemonSettings {
	/** CHOPIN_CONTROL_SILENCE_MS: nothing from the server this long and the channel is dropped. */
	silenceMs: number;
	/** CHOPIN_CONTROL_HANDSHAKE_MS: how long an attempt (upgrade and welcome) may stay pending. */
	handshakeTimeoutMs: number;
	/** CHOPIN_CONTROL_PROBE_MS: after a wake or network change, how long a ping may go unanswered. */
	probeMs: number;
	/** CHOPIN_CONTROL_RETRY_MAX_MS: the longest step of the reconnect schedule (its last, 60 s, by default). */
	retryMaxMs: number;
}

const VARIABLES = {
	silenceMs: ["CHOPIN_CONTROL_SILENCE_MS", SILENCE_MS],
	handshakeTimeoutMs: ["CHOPIN_CONTROL_HANDSHAKE_MS", HANDSHAKE_TIMEOUT_MS],
	probeMs: ["CHOPIN_CONTROL_PROBE_MS", PROBE_MS],
	retryMaxMs: ["CHOPIN_CONTROL_RETRY_MAX_MS", RECONNECT_SCHEDULE_MS.at(-1)!],
} as const;

const millis = z.coerce.number().int().min(10).max(3_600_000);

export function daemonSettings(env: Readonly<Record<string, string | undefined>>): DaemonSettings {
	const out = {} as DaemonSettings;
	for (const [field, [name, fallback]] of Object.entries(VARIABLES) as [
		keyof DaemonSettings,
		(typeof VARIABLES)[keyof DaemonSettings],
	][]) {
		const raw = env[name]?.trim();
		if (!raw) {
			out[field] = fallback;
			continue;
		}
		const parsed = millis.safeParse(raw);
		if (!parsed.success) {
			throw new CliError(
				"option-invalid",
				`${name} must be a whole number of milliseconds from 10 to 3600000, not ${JSON.stringify(raw)}.`,
				`Unset ${name} to use the default (${fallback}).`,
			);
		}
		out[field] = parsed.data;
	}
	return out;
}
