// How a pairing is shown: @clack/prompts (intro, a note with the link and code, a spinner) when stdout is a terminal,
// plain status lines on stderr otherwise. Neither ever shows the pairing's secret or the credential.
import { Writable } from "node:stream";
import { intro, note, outro, spinner } from "@clack/prompts";
import type { CliContext, Writer } from "../program/context";
import type { CliError } from "../program/errors";

export interface PairingShown {
	server: string;
	label: string;
	link: string;
	code: string;
	expiresAt: number;
}

export interface PairingUi {
	started(pairing: PairingShown): void;
	/** A passing problem while waiting (the server did not answer a poll); said once until it changes. */
	waiting(problem: string | undefined): void;
	paired(machine: { owner: string; label: string; server: string }): void;
	failed(error: CliError): void;
}

export function pairingUi(ctx: Pick<CliContext, "stdout" | "stderr">): PairingUi {
	return ctx.stdout.isTTY ? clackUi(ctx.stdout) : plainUi(ctx.stderr);
}

function plainUi(stderr: Writer): PairingUi {
	let said: string | undefined;
	return {
		started: ({ server, label, link, code, expiresAt }) => {
			stderr.write(`Pairing this machine with ${server} as "${label}".\n`);
			stderr.write(`Open ${link} and check the code ${code}.\n`);
			stderr.write(`Waiting for the confirmation (the link expires at ${clockTime(expiresAt)})...\n`);
		},
		waiting: (problem) => {
			if (problem === said) return;
			said = problem;
			stderr.write(
				problem ? `${problem} Still waiting...\n` : "The server answers again. Still waiting...\n",
			);
		},
		paired: ({ owner, label, server }) => {
			stderr.write(`Paired: this computer is ${owner}'s machine "${label}" on ${server}.\n`);
		},
		failed: (error) => {
			if (error.code === "interrupted") stderr.write("Cancelled: nothing was stored.\n");
		},
	};
}

function clackUi(stdout: Writer): PairingUi {
	const output = writableFor(stdout);
	const spin = spinner({ output, cancelMessage: "Cancelled: nothing was stored." });
	let spinning = false;
	return {
		started: ({ server, label, link, code, expiresAt }) => {
			intro(`Pair this machine with ${server}`, { output });
			note(
				`${link}\n\nType the code ${code} there, then select Connect.\nThe link expires at ${clockTime(expiresAt)}.`,
				`Open this link where you are signed in to Chopin, to connect "${label}"`,
				{ output },
			);
			spin.start("Waiting for the confirmation");
			spinning = true;
		},
		waiting: (problem) => {
			if (spinning) spin.message(problem ? `${problem} Still waiting` : "Waiting for the confirmation");
		},
		paired: ({ owner, label, server }) => {
			spinning = false;
			spin.stop(`Paired: this computer is ${owner}'s machine "${label}".`);
			outro(`Connected to ${server}.`, { output });
		},
		failed: (error) => {
			if (!spinning) return;
			spinning = false;
			if (error.code === "interrupted") spin.cancel("Cancelled: nothing was stored.");
			else spin.error(error.message);
		},
	};
}

/** clack writes to a Node stream; the context's writer is the only way out of a command. */
function writableFor(writer: Writer): Writable {
	const stream = new Writable({
		write(chunk, _encoding, callback) {
			writer.write(String(chunk));
			callback();
		},
	});
	return Object.assign(stream, { isTTY: writer.isTTY, columns: writer.columns ?? 80, rows: 24 });
}

function clockTime(ms: number): string {
	return new Date(ms).toISOString().slice(11, 16).concat(" UTC");
}
