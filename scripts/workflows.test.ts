// The GitHub workflows, checked where GitHub cannot be reached: they parse, say what docs/install.md says, and their shell passes shellcheck.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TARGETS } from "./release/targets";
import { run } from "./testing/compiled-cli";

const DIR = join(import.meta.dir, "..", ".github", "workflows");
const REQUIRE_ALL = process.env.CHOPIN_TEST_REQUIRE_ALL === "1";

interface Step {
	name?: string;
	uses?: string;
	run?: string;
	shell?: string;
	with?: Record<string, unknown>;
	env?: Record<string, string>;
}
interface Job {
	"runs-on": string;
	needs?: string | string[];
	permissions?: Record<string, string>;
	container?: { image: string };
	strategy?: { matrix: { include: Record<string, string>[] } };
	steps: Step[];
}
interface Workflow {
	name: string;
	on: Record<string, unknown>;
	permissions?: Record<string, string>;
	jobs: Record<string, Job>;
}

function load(name: string): Workflow {
	return Bun.YAML.parse(readFileSync(join(DIR, name), "utf8")) as Workflow;
}
const ci = load("ci.yml");
const release = load("release.yml");
const steps = (workflow: Workflow) => Object.values(workflow.jobs).flatMap((job) => job.steps);
const script = (job: Job) => job.steps.map((s) => s.run ?? "").join("\n");

describe("ci.yml", () => {
	test("runs .ci/run on every push and pull request, with Bun 1.4.4 and PostgreSQL, then compiles the CLI", () => {
		expect(Object.keys(ci.on).sort()).toEqual(["pull_request", "push"]);
		expect(ci.permissions).toEqual({ contents: "read" });
		const job = ci.jobs.test!;
		expect(job.container?.image).toBe("debian:bookworm");
		expect(job.steps.find((s) => s.uses?.startsWith("oven-sh/setup-bun@"))?.with).toEqual({
			"bun-version": "1.4.4",
		});
		const text = script(job);
		expect(text).toContain("pg_ctlcluster --skip-systemctl-redirect");
		expect(text).toContain("CREATE DATABASE test");
		expect(text).toContain("bash .ci/run");
		expect(text).toContain("bunx biome ci .");
		expect(text).toContain("bunx tsc -p tsconfig.json --noEmit");
		expect(text).toContain("bun scripts/build-cli.ts");
		// Tests before the compile, compile before running the binary.
		expect(text.indexOf("bash .ci/run")).toBeLessThan(text.indexOf("bun scripts/build-cli.ts"));
	});
});

describe("release.yml", () => {
	test("runs on v* tags and builds all five binaries with SHA256SUMS from a tag that names the version", () => {
		expect(release.on).toEqual({ push: { tags: ["v*"] } });
		const build = script(release.jobs.build!);
		expect(build).toContain('if [ "v$version" != "$GITHUB_REF_NAME" ]');
		expect(build).toContain("bun scripts/build-cli.ts --all");
		expect(build).toContain("shasum -a 256 -c SHA256SUMS");
		expect(release.jobs.build!["runs-on"]).toBe("macos-15");
	});

	test("runs every binary, and its installer, on its own OS before publishing anything", () => {
		const verify = release.jobs.verify!;
		expect(verify.strategy!.matrix.include.map((m) => m.asset)).toEqual(TARGETS.map((t) => t.asset));
		expect(script(verify)).toContain("pwsh -NoProfile -File release/install.ps1");
		expect(script(verify)).toContain("sh release/install.sh");
		for (const name of ["github-release", "npm"])
			expect(release.jobs[name]!.needs).toEqual(["build", "verify"]);
	});

	test("publishes a GitHub release with every asset, and npm packages with provenance, launcher last", () => {
		const github = release.jobs["github-release"]!;
		expect(github.permissions).toEqual({ contents: "write" });
		expect(script(github)).toContain('gh release create "$GITHUB_REF_NAME" release/*');
		const npm = release.jobs.npm!;
		expect(npm.permissions).toEqual({ contents: "read", "id-token": "write" });
		const publish = npm.steps.find((s) => s.run?.includes("npm publish"))!;
		expect(publish.env?.NODE_AUTH_TOKEN).toMatch(/^\$\{\{ secrets\.NPM_TOKEN \}\}$/);
		expect(publish.run).toContain('npm publish "$dir" --provenance --access public');
		expect(publish.run).toContain("for dir in dist/npm/cli-*/ dist/npm/cli/; do");
		expect(script(npm)).toContain("bun scripts/pack-npm.ts --all --dist release");
		// Only the jobs that publish get more than reading the repository.
		expect(release.permissions).toEqual({ contents: "read" });
	});
});

describe("both workflows", () => {
	test("pin every action to a major version", () => {
		for (const step of [...steps(ci), ...steps(release)]) {
			if (step.uses) expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@v\d+$/);
		}
	});

	const shellcheck = Bun.which("shellcheck");
	test.skipIf(!shellcheck && !REQUIRE_ALL)("have run: scripts that are clean under shellcheck", async () => {
		expect(shellcheck).not.toBeNull();
		const dir = mkdtempSync(join(tmpdir(), "chopin-workflows-"));
		try {
			const all = [...steps(ci), ...steps(release)].filter((s) => s.run);
			expect(all.length).toBeGreaterThan(10);
			for (const [index, step] of all.entries()) {
				// GitHub fills ${{ ... }} in before bash sees the script; a plain word stands in for it.
				const body = step.run!.replace(/\$\{\{[^}]*\}\}/g, "EXPRESSION");
				const file = join(dir, `step-${index}.sh`);
				writeFileSync(file, `#!/bin/bash\n${body}`);
				const result = await run([shellcheck!, "--shell=bash", file]);
				expect({ step: step.name ?? step.run, output: result.stdout }).toEqual({
					step: step.name ?? step.run,
					output: "",
				});
			}
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
