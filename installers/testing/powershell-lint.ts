// A static check of a PowerShell script where no PowerShell is installed: it lexes quotes, here-strings, comments and
// brackets, and reports what would break in Windows PowerShell 5.1 or under `irm | iex`.
//
// It is not a parser: it catches unbalanced brackets, unclosed strings, variables never assigned
// (typos), unknown commands, PowerShell 7-only operators, `exit`, and non-ASCII text.

export interface LintOptions {
	/** Cmdlets the script may call besides its own functions. */
	commands: readonly string[];
}

/** Variables PowerShell provides. */
const AUTOMATIC = new Set(
	[
		"true",
		"false",
		"null",
		"_",
		"psitem",
		"matches",
		"lastexitcode",
		"erroractionpreference",
		"progresspreference",
		"executioncontext",
		"home",
		"psversiontable",
		"args",
		"pwd",
	].map((v) => v.toLowerCase()),
);

interface Token {
	kind: "open" | "close" | "variable" | "word" | "operator";
	text: string;
	line: number;
}

export function lintPowerShell(script: string, options: LintOptions): string[] {
	const problems: string[] = [];
	const tokens: Token[] = [];
	let line = 1;
	let i = 0;
	const at = (offset = 0) => script[i + offset] ?? "";

	for (const [index, char] of [...script].entries()) {
		if (char.charCodeAt(0) > 0x7e || (char.charCodeAt(0) < 0x20 && !"\t\n\r".includes(char))) {
			problems.push(`non-ASCII or control character at offset ${index}: PowerShell 5.1 may misread it`);
			break;
		}
	}

	/** A variable reference at i (just past `$`), in code or in a double-quoted string. */
	function variable(): void {
		if (at() === "{") {
			const end = script.indexOf("}", i);
			tokens.push({ kind: "variable", text: script.slice(i + 1, end), line });
			i = end + 1;
			return;
		}
		const match = /^[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)?|^_/.exec(script.slice(i));
		if (match) {
			tokens.push({ kind: "variable", text: match[0], line });
			i += match[0].length;
		}
	}

	/** Code until the bracket that closes `close` (or the end); returns false on end of input. */
	function code(close: string | undefined): boolean {
		const stack: string[] = [];
		while (i < script.length) {
			const c = at();
			if (c === "\n") line++;
			if (c === "<" && at(1) === "#") {
				const end = script.indexOf("#>", i + 2);
				if (end < 0) return fail("unclosed <# comment");
				line += countLines(script.slice(i, end));
				i = end + 2;
			} else if (c === "#") {
				const end = script.indexOf("\n", i);
				i = end < 0 ? script.length : end;
			} else if (c === "@" && (at(1) === "'" || at(1) === '"') && at(2) === "\n") {
				const quote = at(1);
				const end = script.indexOf(`\n${quote}@`, i + 2);
				if (end < 0) return fail(`unclosed @${quote} here-string`);
				const body = script.slice(i + 3, end);
				if (quote === '"') interpolate(body);
				line += countLines(script.slice(i, end + 3));
				i = end + 3;
			} else if (c === "'") {
				i++;
				for (;;) {
					const end = script.indexOf("'", i);
					if (end < 0) return fail("unclosed '...' string");
					line += countLines(script.slice(i, end));
					i = end + 1;
					if (at() !== "'") break;
					i++;
				}
			} else if (c === '"') {
				i++;
				if (!doubleQuoted()) return false;
			} else if (c === "$") {
				i++;
				if (at() === "(") {
					i++;
					if (!code(")")) return false;
				} else variable();
			} else if (c === "`") {
				i += 2;
			} else if ("({[".includes(c)) {
				stack.push(c);
				tokens.push({ kind: "open", text: c, line });
				i++;
			} else if (")}]".includes(c)) {
				const open = stack.pop();
				if (open === undefined && c === close) {
					i++;
					return true;
				}
				if (open === undefined || "({[".indexOf(open) !== ")}]".indexOf(c)) {
					return fail(`unbalanced ${c} on line ${line}`);
				}
				tokens.push({ kind: "close", text: c, line });
				i++;
			} else if (
				(c === "&" && at(1) === "&") ||
				(c === "|" && at(1) === "|") ||
				(c === "?" && at(1) === "?")
			) {
				tokens.push({ kind: "operator", text: c + at(1), line });
				i += 2;
			} else if (/[A-Za-z]/.test(c)) {
				const word = /^[A-Za-z][A-Za-z0-9_-]*/.exec(script.slice(i))![0];
				// A word straight after `.`, `::` or `-` is a member or an operator, not a command.
				const before = script[i - 1] ?? " ";
				if (!".:-".includes(before)) tokens.push({ kind: "word", text: word, line });
				i += word.length;
			} else {
				i++;
			}
		}
		if (stack.length > 0) return fail(`unclosed ${stack.at(-1)}`);
		if (close !== undefined) return fail(`unclosed $( ... ${close}`);
		return true;
	}

	/** A "..." string from just past its quote: `` ` `` escapes, "" is a quote, $x and $( ) are code. */
	function doubleQuoted(): boolean {
		while (i < script.length) {
			const c = at();
			if (c === "\n") line++;
			if (c === "`") i += 2;
			else if (c === '"' && at(1) === '"') i += 2;
			else if (c === '"') {
				i++;
				return true;
			} else if (c === "$") {
				i++;
				if (at() === "(") {
					i++;
					if (!code(")")) return false;
				} else variable();
			} else i++;
		}
		return fail('unclosed "..." string');
	}

	function interpolate(body: string): void {
		for (const match of body.matchAll(/\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)?)/g)) {
			tokens.push({ kind: "variable", text: match[1]!.replace(/^\{|\}$/g, ""), line });
		}
	}

	function fail(message: string): false {
		problems.push(message);
		return false;
	}

	if (!code(undefined)) return problems;

	// Variables: every one read must be assigned somewhere (a typo reads as $null in PowerShell).
	const assigned = new Set<string>();
	for (const match of script.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)\s*(?:=[^=]|\+=|-=)/g)) {
		assigned.add(match[1]!.toLowerCase());
	}
	for (const match of script.matchAll(/foreach\s*\(\s*\$([A-Za-z_][A-Za-z0-9_]*)\s+in\b/gi)) {
		assigned.add(match[1]!.toLowerCase());
	}
	for (const match of script.matchAll(/param\s*\(([^)]*)\)/gi)) {
		for (const name of match[1]!.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g))
			assigned.add(name[1]!.toLowerCase());
	}
	for (const token of tokens) {
		if (token.kind !== "variable") continue;
		const name = token.text.toLowerCase();
		if (/^(env|script|global|local):/.test(name) || AUTOMATIC.has(name) || assigned.has(name)) continue;
		problems.push(`$${token.text} on line ${token.line} is never assigned`);
	}

	// Commands: Verb-Noun words must be the script's own functions or known cmdlets.
	const functions = new Set(
		[...script.matchAll(/^\s*function\s+([A-Za-z][\w-]*)/gim)].map((m) => m[1]!.toLowerCase()),
	);
	const known = new Set(options.commands.map((c) => c.toLowerCase()));
	for (const token of tokens) {
		if (token.kind !== "word" || !/^[A-Z][a-z]+-[A-Z]\w*$/.test(token.text)) continue;
		const name = token.text.toLowerCase();
		if (!functions.has(name) && !known.has(name))
			problems.push(`unknown command ${token.text} on line ${token.line}`);
	}

	for (const token of tokens) {
		if (token.kind === "operator") {
			problems.push(
				`${token.text} on line ${token.line} needs PowerShell 7; Windows PowerShell 5.1 refuses it`,
			);
		}
		if (token.kind === "word" && token.text.toLowerCase() === "exit") {
			problems.push(`exit on line ${token.line} would close the window of a person running it with iex`);
		}
	}
	return problems;
}

function countLines(text: string): number {
	let n = 0;
	for (const c of text) if (c === "\n") n++;
	return n;
}
