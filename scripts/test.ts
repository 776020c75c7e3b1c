// Runs the whole suite with bun test and ends with the line CI reads: "N passed, N failed".
// Extra arguments go to bun test (a file filter, -t pattern, ...).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "chopin-test-report-"));
const report = join(dir, "junit.xml");
const args = [
	"test",
	"--timeout=60000",
	"--reporter=junit",
	`--reporter-outfile=${report}`,
	...Bun.argv.slice(2),
];
const child = Bun.spawn(["bun", ...args], { stdio: ["inherit", "inherit", "inherit"], env: process.env });
const code = await child.exited;

let passed = 0;
let failed = 0;
try {
	const xml = readFileSync(report, "utf8");
	const root = /<testsuites\b[^>]*>/.exec(xml)?.[0] ?? "";
	const attr = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(root)?.[1] ?? 0);
	failed = attr("failures") + attr("errors");
	passed = attr("tests") - failed - attr("skipped");
} catch {
	// No report means bun test itself failed before running anything: count that as a failure.
	failed = Math.max(1, failed);
}
if (code !== 0 && failed === 0) failed = 1;
rmSync(dir, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
