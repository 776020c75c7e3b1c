// The control link's tests' shared set-up: a paired local server, and a link on a ManualClock whose events are
// recorded (control-link.test.ts, control-link-refusals.test.ts).
import { rmSync } from "node:fs";
import { reconnectBackoff } from "@chopin/agent-link/backoff";
import { ManualClock } from "@chopin/agent-link/clock";
import { WebSocket } from "ws";
import { LOCAL_ENV, pairLocally } from "../../../server/src/testing/machines";
import { startTestServer, type TestServer } from "../../../server/src/testing/server";
import { signInLocally } from "../../../server/src/testing/sign-in";
import { ControlLink, type LinkEvent, type MachineState } from "../daemon/control-link";
import { ManualTrigger } from "../daemon/triggers";
import { createLog } from "../local/log";
import { Secrets } from "../local/secrets";
import { finalRefusalError } from "../server-link/server-errors";
import { makeTempDir } from "./context";

/** What a test opened, closed in reverse order by closeOpened() (afterEach). */
export const open: { close(): Promise<void> | void }[] = [];

export async function closeOpened(): Promise<void> {
	for (const thing of open.splice(0).reverse()) await thing.close();
}

export const STATE: MachineState = {
	checkouts: [{ path: "/src/score", repository: "octo/score" }],
	runs: [],
	planners: [],
	sandbox: { kind: "none" },
};

export async function pairedServer(
	options: { clock?: ManualClock; env?: Record<string, string> } = {},
): Promise<{ server: TestServer; credential: string; machineId: string }> {
	const server = await startTestServer({ env: { ...LOCAL_ENV, ...options.env }, clock: options.clock });
	open.push(server);
	const target = { fetch: (req: Request) => server.fetch(req), publicUrl: server.context.config.publicUrl };
	const { jar } = await signInLocally(target, "ana");
	const paired = await pairLocally(target, jar);
	return { server, credential: paired.credential, machineId: paired.machineId };
}

/** A link on a ManualClock, its events recorded; jitter fixed at 1 so the delays are the schedule's own. */
export function link(
	server: string,
	credential: string,
	overrides: Partial<ConstructorParameters<typeof ControlLink>[0]> = {},
) {
	const clock = new ManualClock();
	const dir = makeTempDir("chopin-link-");
	const log = createLog({ file: `${dir}/chopin.log`, secrets: new Secrets(), clock });
	open.push({
		close: () => {
			log.close();
			rmSync(dir, { recursive: true, force: true });
		},
	});
	const wake = new ManualTrigger();
	const network = new ManualTrigger();
	const events: LinkEvent[] = [];
	const listeners = new Set<() => void>();
	const control = new ControlLink({
		server,
		token: credential,
		client: "chopin/0.1.0 (linux-x64; source)",
		open: (url, protocols, options) => new WebSocket(url, protocols, options),
		clock,
		log: log.logger,
		backoff: reconnectBackoff({ random: () => 1 }),
		state: () => STATE,
		finalError: (code, message) =>
			finalRefusalError(code, message, {
				server,
				version: "0.1.0",
				upgrade: {
					installMethod: "npm",
					execPath: "/x/chopin",
					selfCommand: ["/x/chopin"],
					platform: "linux",
					home: "/home/x",
				},
			}),
		triggers: [wake, network],
		...overrides,
		onEvent: (event) => {
			events.push(event);
			for (const listener of [...listeners]) listener();
		},
	});
	let seen = 0;
	/** The next event of this type after the ones already taken. */
	const next = <T extends LinkEvent["type"]>(type: T): Promise<Extract<LinkEvent, { type: T }>> =>
		new Promise((resolve) => {
			const check = () => {
				const index = events.findIndex((e, i) => i >= seen && e.type === type);
				if (index < 0) return;
				seen = index + 1;
				listeners.delete(check);
				resolve(events[index] as Extract<LinkEvent, { type: T }>);
			};
			listeners.add(check);
			check();
		});
	return { control, clock, wake, network, events, next };
}
