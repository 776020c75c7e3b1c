/**
 * The Node.js side of the contract suite: bundled for node with the client and the scenarios,
 * it runs the scenario named in argv with the target and parameters read from stdin, using the
 * ws package as the WebSocket class, and prints the result as one JSON line.
 */
import WebSocket from "ws";
import * as client from "../index";
import type { WebSocketConstructor } from "../transport";
import type { ScenarioTarget } from "./scenario";
import { SCENARIOS, type ScenarioName } from "./scenarios";

const name = process.argv[2] as ScenarioName;
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
	input += chunk;
});
process.stdin.on("end", async () => {
	const { target, params } = JSON.parse(input) as { target: ScenarioTarget; params: unknown };
	const scenario = SCENARIOS[name];
	if (!scenario) throw new Error(`No scenario ${name}`);
	const result = await scenario({
		client,
		target,
		WebSocket: WebSocket as unknown as WebSocketConstructor,
		runtime: "node",
		params,
	});
	// Exit once written: a scenario that left a socket or timer open must not hang the suite.
	process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
});
