// One document's Planner backend kept running: a fresh credential before every launch, its token files renewed
// before expiry, it and all it started stopped and started again on the restart backoff, and a refusal ending it.
import { type Backoff, restartBackoff } from "@chopin/agent-link/backoff";
import type { Clock } from "@chopin/agent-link/clock";
import type { GitHubToken, PlannerCredential, PlannerState } from "@chopin/agent-link/machine";
import type { execa } from "execa";
import type { Logger } from "../local/log";
import type { Platform } from "../local/paths";
import type { Secrets } from "../local/secrets";
import type { Containment } from "../processes/containment";
import { launchScope, type Scope } from "../processes/scope";
import type { CliError } from "../program/errors";
import type { CheckoutGate } from "../workspaces/gate";
import { startPlannerWorkspace } from "../workspaces/planner-workspace";
import type { PeriodicSync } from "../workspaces/sync";
import { launchEnvironment } from "./launch-env";
import { backendOutput } from "./output-lines";
import { PLANNER_RENEW_BEFORE_MS, Renewals, scheduleGitHubRenewal, verdictOf } from "./renewal";
import type { SandboxKind } from "./sandbox";
import { sandboxLaunch } from "./sandbox-launch";
import { TokenFile } from "./token-file";
import { cloneDir, ensureClone, worktreeDir } from "./workspace";

/** A backend that ran this long starts the restart backoff over. */
export const HEALTHY_RUN_MS = 60_000;

/** A document id as Chopin makes them (twelve base32 letters). */
const DOCUMENT_ID = /^[a-z2-7]{12}$/;

export type PlannerEvent = "starting" | "started" | "exited" | "stopped" | "refused";

/** A document to run: as --planner gave it (with the checkout it was named in), or as the server assigned it. */
export interface PlannerDocument {
	/** What CHOPIN_DOCUMENT says and the credential is asked for: the --planner value, or the assigned document's URL. */
	ref: string;
	/** Known up front for an assignment or an id given to --planner; learnt from the first credential otherwise. */
	id?: string | undefined;
	/** The checkout the backend runs in; absent for a repository no checkout serves (a clone is made). */
	checkout?: string | undefined;
	repository: string;
	source: "config" | "assigned";
}

export interface SupervisorDeps {
	clock: Clock;
	log: Logger;
	secrets: Secrets;
	platform: Platform;
	/** The server's origin (CHOPIN_URL). */
	server: string;
	/** <base dir>: repos/, planners/ and tokens/ live under it. */
	baseDir: string;
	command: readonly string[];
	/** The --env values: given to the backend and masked in its output. */
	env: Readonly<Record<string, string>>;
	/** The connector's own environment. */
	baseEnv: Readonly<Record<string, string | undefined>>;
	sandbox: { kind: SandboxKind; writable: readonly string[]; hidden: readonly string[] };
	git: { spawn: typeof execa; env: Readonly<Record<string, string | undefined>> };
	/** The daemon's one busy check per repository, shared with the runs: every git write to a checkout goes through it. */
	gate: CheckoutGate;
	/** Where to clone a repository no checkout serves. */
	cloneUrl(repository: string): string;
	plannerCredential(document: string): Promise<PlannerCredential>;
	githubToken(): Promise<GitHubToken | undefined>;
	/** A planner-event for the server. */
	onEvent(document: string, event: PlannerEvent, reason?: string): void;
	/** The state changed: report it. */
	onChange(): void;
	/** The server refused the machine for good while this backend asked for a credential. */
	onMachineRefused(error: CliError): void;
	backoff?: Backoff;
	renewBackoff?: Backoff;
	graceMs?: number;
	/** How the backend's processes are contained; the daemon's choice when absent (processes/containment.ts). */
	containment?: Containment;
}

export class PlannerSupervisor {
	readonly document: PlannerDocument;
	readonly #d: SupervisorDeps;
	readonly #backoff: Backoff;
	readonly #abort = new AbortController();
	#state: PlannerState["state"] = "starting";
	#since: number;
	#restarts = 0;
	#reason: string | undefined;
	#pid: number | undefined;
	#url: string | undefined;
	#checkout: string | undefined;
	#worktree: string | undefined;
	#scope: Scope | undefined;
	#files: { planner: TokenFile; github: TokenFile } | undefined;
	#renewals: Renewals | undefined;
	#done: Promise<void> | undefined;
	#stopReason: { event: PlannerEvent; reason: string } | undefined;
	/** Brings the workspace's branches into the checkout every minute while the backend runs, and once after. */
	#sync: PeriodicSync | undefined;

	constructor(document: PlannerDocument, deps: SupervisorDeps) {
		// An id given to --planner is the id; a URL's id is learnt from the first credential.
		this.document = {
			...document,
			id: document.id ?? (DOCUMENT_ID.test(document.ref) ? document.ref : undefined),
		};
		this.#d = deps;
		this.#backoff = deps.backoff ?? restartBackoff();
		this.#since = deps.clock.now();
	}

	/** The document's id, once known. */
	get id(): string | undefined {
		return this.document.id;
	}

	get state(): PlannerState["state"] {
		return this.#state;
	}

	get reason(): string | undefined {
		return this.#reason;
	}

	get tokenFiles(): { planner: string; github: string } | undefined {
		return this.#files ? { planner: this.#files.planner.path, github: this.#files.github.path } : undefined;
	}

	/** As hello and report carry it; undefined until the document's id and worktree are known. */
	snapshot(): PlannerState | undefined {
		const { id } = this.document;
		if (!id || !this.#worktree || !this.#checkout) return undefined;
		return {
			document: id,
			...(this.#url ? { url: this.#url } : {}),
			state: this.#state,
			worktree: this.#worktree,
			checkout: this.#checkout,
			...(this.#pid === undefined ? {} : { pid: this.#pid }),
			since: this.#since,
			restarts: this.#restarts,
			sandbox: this.#d.sandbox.kind,
			...(this.#reason ? { reason: this.#reason.slice(0, 4000) } : {}),
		};
	}

	/** Starts the loop; resolves once it has ended (stopped or refused). */
	start(): Promise<void> {
		this.#done ??= this.#run().catch((error) => {
			this.#d.log.error({ err: error, document: this.document.ref }, "the Planner supervisor failed");
			this.#set("failed", (error as Error).message);
		});
		return this.#done;
	}

	/**
	 * Stops the backend and all it started (SIGTERM, then SIGKILL after the grace period; bounded in
	 * time whatever they do), deletes its token files and ends the loop, saying why in the log and the state.
	 */
	async stop(reason: string, event: PlannerEvent = "stopped"): Promise<void> {
		this.#stopReason ??= { event, reason };
		this.#abort.abort();
		this.#cancelTimers();
		await this.#scope?.stop();
		await this.#done;
		this.#removeFiles();
	}

	async #run(): Promise<void> {
		const d = this.#d;
		const signal = this.#abort.signal;
		while (!signal.aborted) {
			this.#set("starting");
			this.#event("starting");
			let launched: { scope: Scope; startedAt: number } | undefined;
			try {
				launched = await this.#launch();
			} catch (error) {
				if (signal.aborted) break;
				const verdict = verdictOf(error);
				const message = (error as Error).message;
				if (verdict === "machine") {
					d.onMachineRefused(error as CliError);
					this.#stopReason ??= { event: "refused", reason: message };
					break;
				}
				if (verdict === "document") {
					this.#stopReason ??= { event: "refused", reason: message };
					break;
				}
				d.log.warn(
					{ document: this.document.ref, reason: message },
					"the Planner backend could not start; retrying",
				);
				await this.#wait(message);
				continue;
			}
			const { scope, startedAt } = launched;
			const exit = await scope.exited;
			this.#cancelTimers();
			this.#pid = undefined;
			const why = exit.error
				? `it could not be started: ${exit.error}`
				: exit.signal
					? `it was ended by ${exit.signal}`
					: `it exited with code ${exit.code}`;
			// Its pid is gone: status says so while what it left behind is stopped.
			if (!signal.aborted) this.#set("backoff", `the backend stopped: ${why}`);
			// Whatever the backend left (setsid children holding its pipes too) goes before it is started again.
			await scope.stop();
			this.#scope = undefined;
			await this.#finishSync();
			this.#removeFiles();
			if (signal.aborted) break;
			d.log.warn(
				{ document: this.document.ref, code: exit.code, signal: exit.signal },
				`the Planner backend stopped: ${why}`,
			);
			this.#event("exited", why);
			this.#restarts += 1;
			if (d.clock.now() - startedAt >= HEALTHY_RUN_MS) this.#backoff.reset();
			await this.#wait(`the backend stopped: ${why}`);
		}
		this.#cancelTimers();
		this.#removeFiles();
		await this.#finishSync();
		const { event, reason } = this.#stopReason ?? { event: "stopped" as const, reason: "stopped" };
		this.#set(event === "refused" ? "failed" : "stopped", reason);
		// A refusal is something to act on (pair again, fix access): it is logged as an error.
		d.log[event === "refused" ? "error" : "info"](
			{ document: this.document.ref, reason },
			`the Planner backend for ${this.document.ref} is stopped: ${reason}`,
		);
		this.#event(event, reason);
	}

	/** Credential, GitHub token, checkout and worktree, token files, then the process. */
	async #launch(): Promise<{ scope: Scope; startedAt: number }> {
		const d = this.#d;
		const credential = await d.plannerCredential(this.document.ref);
		d.secrets.add(credential.token, credential.expiresAt);
		this.document.id = credential.document.id;
		this.#url = credential.document.url;
		const github = await d.githubToken();
		if (github) d.secrets.add(github.token, github.expiresAt);
		const id = credential.document.id;

		const sandboxed = d.sandbox.kind !== "none";
		const checkout = this.document.checkout ?? cloneDir(d.baseDir, this.document.repository);
		this.#checkout = checkout;
		this.#worktree = worktreeDir(d.baseDir, this.document.repository, id);
		if (!this.document.checkout) {
			const fetched = await ensureClone(d.git, d.gate, {
				dir: checkout,
				url: d.cloneUrl(this.document.repository),
			});
			if (fetched.fetchError)
				d.log.warn(
					{ checkout, reason: fetched.fetchError.trim() },
					"could not fetch the Planner's clone; using it as it is",
				);
		}
		await this.#finishSync();
		this.#sync = await startPlannerWorkspace(d, { checkout, path: this.#worktree, id, sandboxed });

		const tokensDir = `${d.baseDir}/tokens/${id}`;
		const files = {
			planner: new TokenFile(`${tokensDir}/planner-token`),
			github: new TokenFile(`${tokensDir}/github-token`),
		};
		this.#files = files;
		files.planner.write(credential.token);
		if (github) files.github.write(github.token);
		else files.github.remove();

		const { argv, tmp: tmpDir } = await sandboxLaunch(d.git, {
			kind: d.sandbox.kind,
			command: d.command,
			checkout,
			workspace: this.#worktree,
			tmpDir: `${d.baseDir}/tmp/${id}`,
			writable: d.sandbox.writable,
			hidden: d.sandbox.hidden,
			readable: [tokensDir],
		});
		const launchEnv = launchEnvironment(d.baseEnv, d.env, {
			url: d.server,
			document: this.document.ref,
			token: credential.token,
			tokenFile: files.planner.path,
			checkout,
			worktree: this.#worktree,
			github: github && { ...github, file: files.github.path },
		});
		const env = tmpDir ? { ...launchEnv, TMPDIR: tmpDir } : launchEnv;
		if (this.#abort.signal.aborted) throw new Error("stopped");
		const output = backendOutput({
			log: d.log,
			document: id,
			secrets: [credential.token, ...(github ? [github.token] : []), ...Object.values(d.env)],
		});
		const scope = launchScope({
			argv,
			// A bwrap sandbox's argv runs in its own PID namespace as it is (processes/containment.ts).
			namespaced: d.sandbox.kind === "bwrap",
			cwd: checkout,
			env,
			platform: d.platform,
			clock: d.clock,
			onStdout: (chunk) => output.stdout.write(chunk),
			onStderr: (chunk) => output.stderr.write(chunk),
			...(d.graceMs === undefined ? {} : { graceMs: d.graceMs }),
			...(d.containment ? { containment: d.containment } : {}),
		});
		void scope.closed.then(() => {
			output.stdout.end();
			output.stderr.end();
		});
		this.#scope = scope;
		this.#pid = scope.pid;
		const startedAt = d.clock.now();
		this.#set("running");
		d.log.info(
			{ document: id, pid: scope.pid, sandbox: d.sandbox.kind, worktree: this.#worktree },
			`started the Planner backend for ${this.document.ref}`,
		);
		this.#event("started");
		this.#renew(credential.expiresAt, github?.expiresAt);
		return { scope, startedAt };
	}

	/** Ends the minute-by-minute sync with one last sync, once the backend has exited. */
	async #finishSync(): Promise<void> {
		const sync = this.#sync;
		this.#sync = undefined;
		await sync?.stop();
	}

	/** This launch's renewals: the Planner credential 5 minutes ahead, the GitHub token 25. */
	#renew(plannerExpiresAt: number, githubExpiresAt: number | undefined): void {
		const d = this.#d;
		const renewals = new Renewals({
			clock: d.clock,
			log: d.log,
			document: () => this.document.id,
			onRefused: (verdict, error) => {
				if (verdict === "machine") d.onMachineRefused(error as CliError);
				else void this.stop((error as Error).message, "refused");
			},
			...(d.renewBackoff ? { backoff: d.renewBackoff } : {}),
		});
		this.#renewals = renewals;
		renewals.schedule("Planner credential", plannerExpiresAt, PLANNER_RENEW_BEFORE_MS, async () => {
			const credential = await d.plannerCredential(this.document.ref);
			d.secrets.add(credential.token, credential.expiresAt);
			this.#files?.planner.write(credential.token);
			return credential.expiresAt;
		});
		if (githubExpiresAt === undefined) return;
		scheduleGitHubRenewal(renewals, {
			expiresAt: githubExpiresAt,
			fetch: () => d.githubToken(),
			write: (token) => this.#files?.github.write(token),
			secret: (token, expiresAt) => d.secrets.add(token, expiresAt),
		});
	}

	async #wait(reason: string): Promise<void> {
		const delay = this.#backoff.next();
		this.#set("backoff", reason);
		try {
			await this.#d.clock.sleep(delay, this.#abort.signal);
		} catch {
			// Stopped while waiting.
		}
	}

	#cancelTimers(): void {
		this.#renewals?.cancel();
		this.#renewals = undefined;
	}

	#removeFiles(): void {
		this.#files?.planner.remove();
		this.#files?.github.remove();
	}

	#set(state: PlannerState["state"], reason?: string): void {
		this.#state = state;
		this.#reason = reason;
		this.#since = this.#d.clock.now();
		this.#d.onChange();
	}

	#event(event: PlannerEvent, reason?: string): void {
		const id = this.document.id;
		if (id) this.#d.onEvent(id, event, reason);
	}
}
