// The exact invocations main.ts runs without the command tree: `chopin status` and `chopin status --json`
// (status-main.ts).
//
// Scripts and prompts run `chopin status --json` often, and commander with the Node built-ins it loads costs more than
// the whole rest of status (docs/install.md § Start-up time). Only these exact word lists are shortcuts; anything
// else (`--help`, a typo, another order) goes through the command tree, which explains it. shortcuts.test.ts checks
// that the command tree parses each of these argv into the very options given here. No imports: main.ts loads this
// for every command.

export type Shortcut = {
	readonly argv: readonly string[];
	readonly command: "status";
	readonly options: { readonly json: boolean };
};

export const SHORTCUTS: readonly Shortcut[] = [
	{ argv: ["status"], command: "status", options: { json: false } },
	{ argv: ["status", "--json"], command: "status", options: { json: true } },
];

export function findShortcut(argv: readonly string[]): Shortcut | undefined {
	return SHORTCUTS.find((s) => s.argv.length === argv.length && s.argv.every((word, i) => word === argv[i]));
}
