/**
 * The page side of bench/agent-relay.ts in headless Chromium (`chromium` as its pages argument): what a person's
 * browser does with the stream. Each set's sockets live in one page of a Chromium of their own: the server's on a
 * page of the server's own origin (its documents page) with the member's sign-in cookie, so the browser sends that
 * Origin and cookie itself; the bare forwarder's on about:blank. Every message.delta event is timed in the page as
 * its socket's message event fires, against the send time the agent process wrote into each part
 * (performance.timeOrigin + performance.now() in both; Chromium coarsens its clock to 0.1 ms), and every part's
 * order is checked, as agent-relay-pages.ts does in Bun. Same JSON-line commands as agent-relay-pages.ts.
 */
import { Browsers, browserCookies } from "../apps/server/src/testing/browser";
import { commands, latencySummary, type PagesConnect, reply } from "./agent-relay-lines";

type Page = Awaited<ReturnType<Browsers["open"]>>;
/** What a page keeps of its sockets' events, as `window.relay`. */
interface PageRelay {
	received: number;
	events: number;
	lastAt: number;
	latencies: number[];
	error?: string;
	nextSeq: Record<string, number>;
}
type RelayWindow = { relay: PageRelay };
/** One browser per set, as two people's would be: the server's page, and the bare forwarder's on about:blank. */
const browsers = new Browsers();
const pages = new Map<string, Page>();

/** Runs in the page: opens the sockets and counts, checks and times what they receive. */
function openSockets(input: { url: string; documents: string[] }): Promise<void> {
	const relay: PageRelay = { received: 0, events: 0, lastAt: 0, latencies: [], nextSeq: {} };
	(window as unknown as RelayWindow).relay = relay;
	const onDelta = (documentId: string, delta: string) => {
		const at = performance.timeOrigin + performance.now();
		relay.events++;
		let start = 0;
		for (let end = delta.indexOf(";"); end >= 0; start = end + 1, end = delta.indexOf(";", start)) {
			const sep = delta.indexOf("@", start);
			const seq = Number(delta.slice(start, sep));
			const expected = relay.nextSeq[documentId] ?? 0;
			if (seq !== expected)
				relay.error ??= `document ${documentId}: part ${seq} came where ${expected} was due`;
			relay.nextSeq[documentId] = seq + 1;
			relay.latencies.push(at - Number(delta.slice(sep + 1, end)));
			relay.received++;
		}
		relay.lastAt = at;
	};
	return Promise.all(
		input.documents.map(
			(document) =>
				new Promise<void>((resolve, reject) => {
					const ws = new WebSocket(`${input.url.replace(/^http/, "ws")}/ws?document=${document}`);
					ws.onerror = () => reject(new Error(`the page socket for ${document} failed`));
					ws.onclose = (event) => {
						if (event.code !== 1000) relay.error ??= `page socket closed ${event.code}`;
					};
					ws.onmessage = (event) => {
						const message = JSON.parse(String(event.data));
						if (message.type === "ready") resolve();
						else if (message.type === "message.delta") onDelta(message.documentId, message.delta);
					};
				}),
		),
	).then(() => {});
}

async function connect(input: PagesConnect) {
	const page = await browsers.open();
	if (input.origin) {
		await page.context().addCookies(browserCookies(input.cookie ?? "", input.origin));
		// The app's documents page, of the server's origin: the sockets opened from it carry that Origin and the
		// cookie, as a document page's do, without a document page's own socket beside them.
		await page.goto(`${input.origin}/`);
	}
	await page.evaluate(openSockets, { url: input.origin ?? input.url, documents: input.documents });
	pages.set(input.set, page);
	reply({ ev: "ready" });
}

async function reset() {
	for (const page of pages.values())
		await page.evaluate(() => {
			const { relay } = window as unknown as RelayWindow;
			relay.received = 0;
			relay.events = 0;
			relay.latencies = [];
		});
	reply({ ev: "reset" });
}

async function expect(input: { set: string; count: number }) {
	const page = pages.get(input.set);
	if (!page) throw new Error(`no page for the set ${input.set}`);
	await page.waitForFunction(
		(count: number) => {
			const { relay } = window as unknown as RelayWindow;
			return relay.received >= count || relay.error !== undefined;
		},
		input.count,
		{ timeout: 120_000, polling: 50 },
	);
	const { received, events, lastAt, latencies, error } = await page.evaluate(
		() => (window as unknown as RelayWindow).relay,
	);
	if (error) {
		reply({ ev: "error", message: error });
		process.exit(1);
	}
	reply({ ev: "done", received, events, lastAt, ...latencySummary(latencies) });
}

try {
	for await (const command of commands()) {
		if (command.cmd === "connect") await connect(command);
		else if (command.cmd === "reset") await reset();
		else if (command.cmd === "expect") await expect(command);
		else if (command.cmd === "close") {
			await pages.get(command.set)?.context().close();
			pages.delete(command.set);
			reply({ ev: "closed" });
		} else if (command.cmd === "exit") break;
	}
	if (browsers.errors.length > 0)
		reply({ ev: "error", message: `page errors: ${browsers.errors.join("; ")}` });
} finally {
	await browsers.close();
}
