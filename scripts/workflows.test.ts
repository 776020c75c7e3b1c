// The GitHub workflows, checked where GitHub cannot be reached: they parse, hold the invariants a release relies on
// (pinned actions, nothing published before every check passed, provenance and a signature, no stored npm token),
// say what docs/install.md says, and their shell passes shellcheck.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lintPowerShell } from "../installers/testing/powershell-lint";
import { PORTABLE_TESTS, portableTests } from "./portable-tests";
import { TARGETS } from "./release/targets";
import { run } from "./testing/compiled-cli";

const ROOT = join(import.meta.dir, "..");
const DIR = join(ROOT, ".github", "workflows");
const REQUIRE_ALL = process.env.CHOPIN_TEST_REQUIRE_ALL === "1";

interface Step {
	name?: string;
	uses?: string;
	run?: string;
	shell?: string;
	if?: string;
	with?: Record<string, unknown>;
	env?: Record<string, string>;
}
interface Job {
	name?: string;
	"runs-on"?: string;
	/** A job that calls a reusable workflow has `uses` (and `with`) instead of steps. */
	uses?: string;
	with?: Record<string, unknown>;
	needs?: string | string[];
	permissions?: Record<string, string>;
	container?: { image: string };
	strategy?: { matrix: { include?: Record<string, string>[]; runner?: string[] } };
	outputs?: Record<string, string>;
	steps?: Step[];
}
interface Workflow {
	name: string;
	on: Record<string, unknown>;
	permissions?: Record<string, string>;
	jobs: Record<string, Job>;
}

const FILES = readdirSync(DIR)
	.filter((name) => name.endsWith(".yml"))
	.sort();
const text = (name: string) => readFileSync(join(DIR, name), "utf8");
const load = (name: string) => Bun.YAML.parse(text(name)) as Workflow;
const ci = load("ci.yml");
const suite = load("suite.yml");
const build = load("build.yml");
const release = load("release.yml");
const ALL = FILES.map((name) => ({ name, workflow: load(name) }));

const stepsOf = (workflow: Workflow) => Object.values(workflow.jobs).flatMap((job) => job.steps ?? []);
const script = (job: Job) => (job.steps ?? []).map((s) => s.run ?? "").join("\n");
const needs = (job: Job) => (typeof job.needs === "string" ? [job.needs] : (job.needs ?? []));
const usesOf = (job: Job, action: string) =>
	(job.steps ?? []).filter((s) => s.uses?.startsWith(`${action}@`));

/** The release's identity in the signing certificate: what the installers and docs/install.md check. */
const IDENTITY = "https://github.com/chopin-app/chopin/.github/workflows/release.yml@refs/tags/v$VERSION";
const ISSUER = "https://token.actions.githubusercontent.com";
const PUBLISH_JOBS = ["github-release", "npm"];
/** A GitHub expression as it stands in a workflow: `${{ expression }}`. */
const expression = (inner: string) => `\${{ ${inner} }}`;

describe("ci.yml", () => {
	test("runs the test suite and the build-and-verify jobs on every push and pull request", () => {
		expect(Object.keys(ci.on).sort()).toEqual(["pull_request", "push"]);
		expect(ci.on.push).toBeNull(); // every branch and tag, no filter
		expect(ci.permissions).toEqual({ contents: "read" });
		expect(ci.jobs).toEqual({
			suite: { name: "Test suite", uses: "./.github/workflows/suite.yml" },
			build: { name: "Build and verify", uses: "./.github/workflows/build.yml" },
		});
	});
});

describe("suite.yml", () => {
	test("is called by CI and release alike, and runs .ci/run on Debian 12 with Bun 1.4.4 and PostgreSQL", () => {
		expect(suite.on).toEqual({ workflow_call: null });
		expect(suite.permissions).toEqual({ contents: "read" });
		const job = suite.jobs.test!;
		expect(job.container?.image).toBe("debian:bookworm");
		expect(usesOf(job, "oven-sh/setup-bun")[0]?.with).toEqual({ "bun-version": "1.4.4" });
		const body = script(job);
		expect(body).toContain("pg_ctlcluster --skip-systemctl-redirect");
		expect(body).toContain("CREATE DATABASE test");
		expect(body).toContain("bunx biome ci .");
		expect(body).toContain("bunx tsc -p tsconfig.json --noEmit");
		expect(body).toContain("bash .ci/run");
	});

	test("runs the portable tests (scripts/portable-tests.ts) on macOS and Windows runners", () => {
		const job = suite.jobs.portable!;
		expect(job["runs-on"]).toBe(expression("matrix.runner"));
		expect(job.strategy!.matrix.runner).toEqual(["macos-15", "windows-latest"]);
		expect(usesOf(job, "oven-sh/setup-bun")[0]?.with).toEqual({ "bun-version": "1.4.4" });
		// The npm launcher test runs the launcher with Node.
		expect(usesOf(job, "actions/setup-node")).toHaveLength(1);
		expect(script(job)).toContain("bun install --frozen-lockfile");
		expect(script(job)).toContain("bun scripts/portable-tests.ts");
	});
});

describe("scripts/portable-tests.ts", () => {
	test("lists test files that exist: the CLI's, and the npm launcher's", () => {
		for (const [file, on] of Object.entries(PORTABLE_TESTS)) {
			expect({ file, exists: existsSync(join(ROOT, file)) }).toEqual({ file, exists: true });
			expect(file).toMatch(/^(apps\/cli\/src\/.+|npm\/launcher(-libc)?)\.test\.ts$/);
			expect(on.length).toBeGreaterThan(0);
			expect([...new Set(on)]).toEqual([...on]);
		}
	});

	test("gives both runners the npm launcher test and CLI tests; Linux runs the whole suite instead", () => {
		const mac = portableTests("darwin");
		const windows = portableTests("win32");
		for (const file of ["npm/launcher.test.ts", "npm/launcher-libc.test.ts"]) {
			expect(mac).toContain(file);
			expect(windows).toContain(file);
		}
		expect(mac.filter((f) => f.startsWith("apps/cli/")).length).toBeGreaterThan(10);
		expect(windows.filter((f) => f.startsWith("apps/cli/")).length).toBeGreaterThan(10);
		expect(portableTests("linux")).toEqual([]);
	});

	test("refuses a platform with nothing listed, with a hint", async () => {
		const result = await run([process.execPath, join(ROOT, "scripts", "portable-tests.ts")], {
			env: { ...process.env, CHOPIN_PORTABLE_PLATFORM: "linux" },
		});
		expect(result.code).toBe(1);
		expect(result.stderr).toBe(
			"portable-tests: no test file is listed for linux\nhint: edit PORTABLE_TESTS in scripts/portable-tests.ts\n",
		);
	});
});

describe("build.yml", () => {
	test("is called with an optional tag and gives back the version", () => {
		expect(build.on).toEqual({
			workflow_call: {
				inputs: {
					tag: {
						description: expect.any(String),
						type: "string",
						default: "",
					},
				},
				outputs: {
					version: { description: expect.any(String), value: expression("jobs.build.outputs.version") },
				},
			},
		});
		expect(build.permissions).toEqual({ contents: "read" });
	});

	test("builds all five binaries with SHA256SUMS on macOS, from a tag that names the version", () => {
		const job = build.jobs.build!;
		expect(job["runs-on"]).toBe("macos-15");
		const body = script(job);
		expect(body).toContain('if [ -n "$TAG" ] && [ "v$version" != "$TAG" ]; then');
		expect(body).toContain("bun scripts/build-cli.ts --all");
		expect(body).toContain("shasum -a 256 -c SHA256SUMS");
		expect(usesOf(job, "actions/upload-artifact")[0]?.with).toMatchObject({ name: "release" });
	});

	test("checks both macOS binaries with codesign --verify --strict, which fails the job on a bad signature", () => {
		const body = script(build.jobs.build!);
		for (const target of TARGETS.filter((t) => t.node.platform === "darwin")) {
			expect(body).toContain(`codesign --verify --strict --verbose=2 ${target.asset}\n`);
		}
		const onMac = build.jobs.verify!.steps!.find((s) => s.run?.includes("codesign"))!;
		expect(onMac).toMatchObject({
			if: "runner.os == 'macOS'",
			run: 'codesign --verify --strict --verbose=2 "$ASSET"',
		});
	});

	test("runs every binary on its own OS, and installs it with install.sh as a file and piped", () => {
		const verify = build.jobs.verify!;
		expect(needs(verify)).toEqual(["build"]);
		expect(verify.strategy!.matrix.include!.map((m) => m.asset)).toEqual(TARGETS.map((t) => t.asset));
		const sh = verify.steps!.find((s) => s.run?.includes("install.sh"))!;
		expect(sh.if).toBe("runner.os != 'Windows'");
		expect(sh.run).toContain("bun scripts/release/serve-release.ts release");
		expect(sh.run).toContain('CHOPIN_INSTALL_DIR="$RUNNER_TEMP/chopin-file" sh release/install.sh');
		expect(sh.run).toContain('curl -fsSL "$origin/install.sh" | sh');
	});

	test("runs install.ps1 under Windows PowerShell 5.1 and PowerShell 7, as a file and as irm | iex", () => {
		const steps = build.jobs.verify!.steps!.filter((s) => s.run?.includes("install.ps1"));
		// Each step checks that its shell is the edition it names: Desktop is 5.1, Core is 7.
		expect(steps.map((s) => [s.shell, s.if, s.env])).toEqual([
			["powershell", "runner.os == 'Windows'", { EDITION: "Desktop" }],
			["pwsh", "runner.os == 'Windows'", { EDITION: "Core" }],
		]);
		// One script, run by both shells.
		expect(steps[0]!.run).toBe(steps[1]!.run!);
		const body = steps[0]!.run!;
		expect(body).toContain("scripts/release/serve-release.ts");
		expect(body).toContain("& $shell -NoProfile -ExecutionPolicy Bypass -File release\\install.ps1");
		expect(body).toContain('irm "$origin/install.ps1" | iex');
		expect(body).toContain("if ($PSVersionTable.PSEdition -ne $env:EDITION) { throw");
		// What would break in Windows PowerShell 5.1 (PowerShell 7-only operators, non-ASCII, typos in names).
		const commands = [
			"Get-Content",
			"Get-Command",
			"Join-Path",
			"Out-String",
			"Remove-Item",
			"Start-Process",
		];
		commands.push("Start-Sleep", "Stop-Process", "Test-Path", "Write-Host", "irm", "iex");
		expect(lintPowerShell(body, { commands })).toEqual([]);
	});
});

describe("release.yml", () => {
	test("runs on v* tags, with the same suite and build-and-verify jobs as CI", () => {
		expect(release.on).toEqual({ push: { tags: ["v*"] } });
		expect(release.permissions).toEqual({ contents: "read" });
		expect(release.jobs.suite).toEqual(ci.jobs.suite!);
		expect(release.jobs.build).toEqual({
			...ci.jobs.build!,
			with: { tag: expression("github.ref_name") },
		});
	});

	test("publishes nothing until every other job passed: the GitHub release and npm each need all of them", () => {
		const others = Object.keys(release.jobs).filter((name) => !PUBLISH_JOBS.includes(name));
		expect(others.sort()).toEqual(["build", "npm-check", "sign", "suite"]);
		for (const name of PUBLISH_JOBS) expect(needs(release.jobs[name]!).sort()).toEqual(others);
		// And signing waits for every check, so nothing is attested or signed for a release that fails them.
		expect(needs(release.jobs.sign!).sort()).toEqual(["build", "npm-check", "suite"]);
		expect(needs(release.jobs["npm-check"]!)).toEqual(["build"]);
		expect(script(release.jobs["npm-check"]!)).toContain("bun scripts/pack-npm.ts --all --dist release");
		expect(script(release.jobs["npm-check"]!)).toContain('npm pack --dry-run "$dir"');
	});

	test("attests build provenance for every release file and signs SHA256SUMS keyless with cosign", () => {
		const sign = release.jobs.sign!;
		expect(sign.permissions).toEqual({ contents: "read", "id-token": "write", attestations: "write" });
		expect(usesOf(sign, "actions/attest-build-provenance")[0]?.with).toEqual({ "subject-path": "release/*" });
		const steps = sign.steps!.map((s) => s.uses?.split("@")[0] ?? s.run ?? "");
		const signs = steps.findIndex((s) => s.includes("cosign sign-blob"));
		expect(steps.indexOf("sigstore/cosign-installer")).toBeGreaterThan(-1);
		expect(steps.indexOf("sigstore/cosign-installer")).toBeLessThan(signs);
		const body = script(sign);
		expect(body).toContain("cosign sign-blob --yes --bundle SHA256SUMS.sigstore.json SHA256SUMS\n");
		// Verified at once with the identity a user checks.
		expect(body).toContain(`--certificate-identity "${IDENTITY}"`);
		expect(body).toContain(`--certificate-oidc-issuer ${ISSUER}`);
		expect(body).toContain("gh attestation verify");
		expect(usesOf(sign, "actions/upload-artifact")[0]?.with).toMatchObject({
			name: "signature",
			path: "release/SHA256SUMS.sigstore.json",
		});
	});

	test("puts the signature beside SHA256SUMS in the GitHub release", () => {
		const github = release.jobs["github-release"]!;
		expect(github.permissions).toEqual({ contents: "write" });
		expect(usesOf(github, "actions/download-artifact").map((s) => s.with)).toEqual([
			{ name: "release", path: "release" },
			{ name: "signature", path: "release" },
		]);
		expect(script(github)).toContain("test -s release/SHA256SUMS.sigstore.json");
		expect(script(github)).toContain('gh release create "$GITHUB_REF_NAME" release/*');
	});

	test("publishes to npm by trusted publishing (OIDC) with provenance, launcher last, and no stored token", () => {
		const npm = release.jobs.npm!;
		expect(npm.permissions).toEqual({ contents: "read", "id-token": "write" });
		// registry-url would write an _authToken line to .npmrc, and npm would not try OIDC.
		expect(usesOf(npm, "actions/setup-node")[0]?.with).toEqual({
			"node-version": 24,
			"package-manager-cache": false,
		});
		expect(script(npm)).toContain("npm install -g npm@^11.5.1");
		const publish = npm.steps!.find((s) => s.run?.includes("npm publish"))!;
		expect(Object.keys(publish.env ?? {})).toEqual(["VERSION"]);
		expect(publish.run).toContain('npm publish "$dir" --provenance --access public --tag "$tag"');
		expect(publish.run).toContain("for dir in dist/npm/cli-*/ dist/npm/cli/; do");
		expect(script(npm)).toContain("bun scripts/pack-npm.ts --all --dist release");
	});

	test("gives id-token and attestations write only to the jobs that need them", () => {
		const grants = Object.entries(release.jobs)
			.filter(([, job]) => job.permissions)
			.map(([name, job]) => [name, job.permissions]);
		expect(grants).toEqual([
			["sign", { contents: "read", "id-token": "write", attestations: "write" }],
			["github-release", { contents: "write" }],
			["npm", { contents: "read", "id-token": "write" }],
		]);
	});
});

describe("docs/install.md", () => {
	test("names the signature file, the identity and issuer the release signs with, and trusted publishing", () => {
		const docs = readFileSync(join(ROOT, "docs", "install.md"), "utf8").replace(/\s+/g, " ");
		expect(docs).toContain("cosign sign-blob --yes --bundle SHA256SUMS.sigstore.json SHA256SUMS");
		expect(docs).toContain(IDENTITY.replace("$VERSION", "<version>"));
		expect(docs).toContain(ISSUER);
		expect(docs).toContain("npm 11.5.1");
		expect(docs).not.toContain("NPM_TOKEN");
		expect(docs).toContain("codesign --verify --strict");
	});
});

describe("every workflow", () => {
	test("is one of the four, and none names an npm token or any other secret", () => {
		expect(FILES).toEqual(["build.yml", "ci.yml", "release.yml", "suite.yml"]);
		for (const name of FILES) {
			expect({ name, npmToken: /NPM_TOKEN|NODE_AUTH_TOKEN|secrets\./.test(text(name)) }).toEqual({
				name,
				npmToken: false,
			});
		}
	});

	test("pins every action to a full commit SHA with its version in a comment, the same pin everywhere", () => {
		const pins = new Map<string, string>();
		for (const name of FILES) {
			for (const line of text(name).split("\n")) {
				const uses = /^\s*(?:- )?uses:\s*(.*)$/.exec(line)?.[1];
				if (uses === undefined) continue;
				if (uses.startsWith("./")) {
					// A reusable workflow of this repository, at the same commit.
					expect(uses).toMatch(/^\.\/\.github\/workflows\/[\w-]+\.yml$/);
					expect(existsSync(join(ROOT, uses))).toBe(true);
					continue;
				}
				const pin = /^([\w.-]+\/[\w.-]+)@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)$/.exec(uses);
				expect({ file: name, uses, pinned: pin !== null }).toEqual({ file: name, uses, pinned: true });
				const [, action, sha, version] = pin!;
				expect({ action, pin: pins.get(action!) ?? `${sha} ${version}` }).toEqual({
					action,
					pin: `${sha} ${version}`,
				});
				pins.set(action!, `${sha} ${version}`);
			}
		}
		expect([...pins.keys()].sort()).toEqual([
			"actions/attest-build-provenance",
			"actions/checkout",
			"actions/download-artifact",
			"actions/setup-node",
			"actions/upload-artifact",
			"oven-sh/setup-bun",
			"sigstore/cosign-installer",
		]);
	});

	test("check out without keeping the token in .git/config", () => {
		for (const { workflow } of ALL) {
			for (const step of stepsOf(workflow).filter((s) => s.uses?.startsWith("actions/checkout@"))) {
				expect(step.with).toEqual({ "persist-credentials": false });
			}
		}
	});

	const shellcheck = Bun.which("shellcheck");
	test.skipIf(!shellcheck && !REQUIRE_ALL)(
		"have bash run: scripts that are clean under shellcheck",
		async () => {
			expect(shellcheck).not.toBeNull();
			const dir = mkdtempSync(join(tmpdir(), "chopin-workflows-"));
			try {
				const all = ALL.flatMap(({ workflow }) => stepsOf(workflow)).filter(
					(s) => s.run && s.shell !== "powershell" && s.shell !== "pwsh",
				);
				expect(all.length).toBeGreaterThan(15);
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
		},
	);
});
