/** Server-side steps the contract tests share: attach and start a session, send a turn, collect parts. */
import { expect } from "bun:test";
import type { Feature } from "../../features";
import type { ClientMessage } from "../../schemas/client-messages";
import type { StreamPart } from "../../schemas/parts";
import type { HostTool, Turn } from "../../schemas/server-messages";
import type { Step } from "./scenario-serve";
import type { ScriptedConnection, ScriptedServer } from "./scripted-server";

/** The next connection, attached (granting grant) with session started. */
export async function attachAndStart(
	server: ScriptedServer,
	options: { grant?: Feature[]; session?: string } = {},
): Promise<ScriptedConnection> {
	const connection = await server.nextConnection();
	await connection.attach(options.grant);
	await start(connection, options.session ?? "s1");
	return connection;
}

export async function start(connection: ScriptedConnection, session: string): Promise<void> {
	connection.send({ type: "start", session, mode: "planner" });
	expect(await connection.expect("started")).toEqual({ type: "started", session });
}

/** Sends a turn whose prompt is the serve scenario's program. */
export function sendTurn(
	connection: ScriptedConnection,
	program: Step[],
	fields: { session?: string; turn?: string; tools?: HostTool[] } & Partial<Turn> = {},
): void {
	connection.send({
		type: "turn",
		session: fields.session ?? "s1",
		turn: fields.turn ?? "t1",
		prompt: JSON.stringify(program),
		tools: fields.tools ?? [],
		...fields,
	} as Turn);
}

/** Messages until (and with) the turn's turn-end, with parts read as their parts. */
export async function untilTurnEnd(connection: ScriptedConnection): Promise<(StreamPart | ClientMessage)[]> {
	const out: (StreamPart | ClientMessage)[] = [];
	for (;;) {
		const message = await connection.next();
		out.push(message.type === "part" ? message.part : message);
		if (message.type === "turn-end") return out;
	}
}

/** Ends the link from the server's side with a definitive refusal, so the scenario returns. */
export function revoke(connection: ScriptedConnection): void {
	connection.send({ type: "refused", code: "access-revoked", message: "Access was revoked." });
	connection.close(4403, "access-revoked");
}
